import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Problem, Reference } from '../../core/contracts/problem';
import { MapGroundTruth } from '../../core/contracts/problem';
import type { Task, TaskData } from '../../core/contracts/task';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { mixSeed, Rng } from '../../core/util/rng';
import { arithDiscussionPrompt, arithRoundPrompt, discussionTurn } from './arith-discussion';
import { hasSlips, writeChain } from './arith-slips';

/** One binary step of a chain: left op right = result. */
export interface ArithStep {
  readonly left: number;
  readonly op: '+' | '-';
  readonly right: number;
  readonly result: number;
}

/** What makes a problem hard; the pretraining corpus of a model family can under-sample any of them. */
export interface ArithFeatures {
  /** Some addition step carries (a column sum ≥ 10). */
  readonly carry: boolean;
  /** Some subtraction step borrows (a column needs a borrow). */
  readonly borrow: boolean;
  /** Some intermediate or final result has three or more digits. */
  readonly hundreds: boolean;
  /** Number of operands. */
  readonly operands: number;
}

/** A generated problem with its worked solution. */
export interface ArithProblem {
  /** Canonical expression, e.g. `47+85-19`: also the problem's identity. */
  readonly expression: string;
  readonly operands: readonly number[];
  readonly ops: readonly ('+' | '-')[];
  readonly steps: readonly ArithStep[];
  readonly answer: number;
  readonly features: ArithFeatures;
}

/** Prompt templates: surface forms of the same problem. Index 0 is canonical. */
const TEMPLATES: ((p: ArithProblem) => string)[] = [
  (p) => `${p.expression}=`,
  (p) => `What is ${p.expression}?`,
  (p) =>
    `Compute ${p.operands.map((o, i) => (i === 0 ? `${o}` : `${p.ops[i - 1] === '+' ? 'plus' : 'minus'} ${o}`)).join(' ')}.`,
  (p) =>
    `Start at ${p.operands[0]}, ${p.operands
      .slice(1)
      .map((o, i) => `${p.ops[i] === '+' ? 'add' : 'take away'} ${o}`)
      .join(', then ')}.`,
];

/** Number of prompt phrasings available. */
export const ARITH_PHRASINGS = TEMPLATES.length;

/** The prompt of a problem in a phrasing. */
export function arithPrompt(p: ArithProblem, phrasing = 0): string {
  return TEMPLATES[phrasing]!(p);
}

/** The worked solution: one equation per step, then the boxed answer (of `written`, a chain with slips, when given). */
export function arithSolution(
  p: ArithProblem,
  written?: { readonly steps: readonly ArithStep[]; readonly answer: number },
): string {
  const w = written ?? p;
  return `${w.steps.map((s) => `${s.left}${s.op}${s.right}=${s.result}`).join(';')};\\boxed{${w.answer}}`;
}

/** Which systematic weakness a problem can expose: its carries and borrows (`plain` when neither). */
export type ArithCategory = 'plain' | 'carry' | 'borrow' | 'carry+borrow';

/** The category of a problem, from its features. */
export function arithCategory(f: ArithFeatures): ArithCategory {
  return f.carry ? (f.borrow ? 'carry+borrow' : 'carry') : f.borrow ? 'borrow' : 'plain';
}

function hasCarry(a: number, b: number): boolean {
  let carry = 0;
  while (a > 0 || b > 0) {
    const s = (a % 10) + (b % 10) + carry;
    if (s >= 10) return true;
    carry = 0;
    a = Math.floor(a / 10);
    b = Math.floor(b / 10);
  }
  return false;
}

function hasBorrow(a: number, b: number): boolean {
  while (b > 0) {
    if (a % 10 < b % 10) return true;
    a = Math.floor(a / 10);
    b = Math.floor(b / 10);
  }
  return false;
}

/** Build a problem from operands and operations (steps, answer, features). */
export function arithProblem(operands: readonly number[], ops: readonly ('+' | '-')[]): ArithProblem {
  const steps: ArithStep[] = [];
  let acc = operands[0]!;
  let carry = false;
  let borrow = false;
  let hundreds = acc >= 100;
  for (let i = 1; i < operands.length; i++) {
    const op = ops[i - 1]!;
    const right = operands[i]!;
    const result = op === '+' ? acc + right : acc - right;
    if (op === '+' && hasCarry(acc, right)) carry = true;
    if (op === '-' && acc >= right && hasBorrow(acc, right)) borrow = true;
    if (Math.abs(result) >= 100) hundreds = true;
    steps.push({ left: acc, op, right, result });
    acc = result;
  }
  const expression = operands.map((o, i) => (i === 0 ? `${o}` : `${ops[i - 1]}${o}`)).join('');
  return {
    expression,
    operands,
    ops,
    steps,
    answer: acc,
    features: { carry, borrow, hundreds, operands: operands.length },
  };
}

function draw(rng: Rng, o: ArithOptions): ArithProblem {
  for (;;) {
    const n = o.operands.min + rng.int(o.operands.max - o.operands.min + 1);
    const operands: number[] = [];
    const ops: ('+' | '-')[] = [];
    for (let i = 0; i < n; i++) {
      const d = o.digits.min + rng.int(o.digits.max - o.digits.min + 1);
      const lo = d === 1 ? 0 : 10 ** (d - 1);
      operands.push(lo + rng.int(10 ** d - lo));
      if (i > 0) ops.push(o.operations[rng.int(o.operations.length)]!);
    }
    const p = arithProblem(operands, ops);
    if (!o.nonNegative || p.steps.every((s) => s.result >= 0)) return p;
  }
}

/**
 * Draw `count` distinct problems. `accept` (a probability) thins the stream, which is how a model
 * family's pretraining corpus under-samples its blind spots. Excluded expressions are never drawn.
 */
export function drawProblems(
  seed: number,
  o: ArithOptions,
  count: number,
  exclude: ReadonlySet<string>,
  accept?: (p: ArithProblem) => number,
  unique = true,
): ArithProblem[] {
  const rng = new Rng(seed);
  const out: ArithProblem[] = [];
  const seen = new Set<string>();
  let tries = 0;
  const budget = Math.max(10000, count * 200);
  while (out.length < count) {
    if (++tries > budget) {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        `expected ${count} distinct problems from these options, got only ${out.length} after ${budget} draws`,
        {
          where: 'task.options',
          hint: 'allow more digits or operands, or ask for fewer problems',
        },
      );
    }
    const p = draw(rng, o);
    if (exclude.has(p.expression) || (unique && seen.has(p.expression))) continue;
    if (accept && rng.next() >= accept(p)) continue;
    seen.add(p.expression);
    out.push(p);
  }
  return out;
}

/** The problems of the splits and the pretraining corpus's problems for the given options. */
export function generateArith(o: ArithOptions): {
  train: ArithProblem[];
  heldOut: ArithProblem[];
  validation: ArithProblem[];
  pretrain: ArithProblem[];
} {
  // Held-out first, from its own stream, so that changing the training size never changes the test set.
  const standing = drawProblems(mixSeed(o.seed, 'held-out'), o, o.heldOut, new Set());
  const held = new Set(standing.map((p) => p.expression));
  // A fresh held-out set (heldOutSeed > 0) from a stream of its own, apart from the standing one; both
  // stay out of every other split and corpus, so a recipe pretrained with the same heldOutSeed never
  // read the fresh set.
  const heldOut =
    o.heldOutSeed > 0 ? drawProblems(mixSeed(o.seed, 'held-out', o.heldOutSeed), o, o.heldOut, held) : standing;
  for (const p of heldOut) held.add(p.expression);
  // Validation next, from its own stream; with none (the default) the other splits are as before.
  const validation = o.validation > 0 ? drawProblems(mixSeed(o.seed, 'validation'), o, o.validation, held) : [];
  for (const p of validation) held.add(p.expression);
  const train = drawProblems(mixSeed(o.seed, 'train'), o, o.train, held);
  const w = o.pretrain.weights;
  const accept = (p: ArithProblem): number =>
    (p.features.carry ? w.carry : 1) * (p.features.borrow ? w.borrow : 1) * (p.features.hundreds ? w.hundreds : 1);
  // The corpus's problems depend on the sampling options only, not on slips or discussion turns.
  const { slips: _s, discussion: _d, ...sampling } = o.pretrain;
  const pretrain =
    o.pretrain.size > 0
      ? drawProblems(mixSeed(o.seed, 'pretrain', JSON.stringify(sampling)), o, o.pretrain.size, held, accept, false)
      : [];
  return { train, heldOut, validation, pretrain };
}

/** One text of the pretraining corpus: its prompt, its worked solution, and what it contains. */
export interface CorpusText {
  readonly prompt: string;
  readonly solution: string;
  /** Slips in the solution, by kind (all 0 for a correct solution). */
  readonly slips: Readonly<Record<string, number>>;
  /** Slip opportunities in the solution, by kind. */
  readonly opportunities: Readonly<Record<string, number>>;
  /** Whether the boxed answer is right. */
  readonly right: boolean;
  /** For a discussion turn: the neighbours' answers it quotes, and whether the writer adopted their plurality. */
  readonly discussion?: { readonly answers: readonly number[]; readonly adopted: boolean };
}

/**
 * The pretraining corpus's texts: each problem in its phrasing, worked with slips at the configured
 * rates, a `discussion.fraction` share of them as discussion turns. Slips and discussion draw from
 * their own seeded stream, so with none of either the corpus is exactly the slip-free one.
 */
export function arithCorpus(o: ArithOptions, problems: readonly ArithProblem[]): CorpusText[] {
  const { slips, discussion, phrasings } = o.pretrain;
  const rng = new Rng(mixSeed(o.seed, 'pretrain-slips', JSON.stringify({ slips, discussion })));
  const slipping = hasSlips(slips);
  return problems.map((p, i) => {
    const prompt = arithPrompt(p, phrasings[i % phrasings.length]!);
    if (discussion.fraction > 0 && rng.next() < discussion.fraction) {
      const turn = discussionTurn(p, slips, discussion, rng);
      return {
        prompt: arithDiscussionPrompt(prompt, turn.answers.map(String)),
        solution: arithSolution(p, turn.chain),
        slips: turn.chain.slips,
        opportunities: turn.chain.opportunities,
        right: turn.chain.answer === p.answer,
        discussion: { answers: turn.answers, adopted: turn.adopted },
      };
    }
    const chain = slipping ? writeChain(p, slips, rng) : undefined;
    const none = { column: 0, carry: 0, borrow: 0, copy: 0 };
    return {
      prompt,
      solution: arithSolution(p, chain),
      slips: chain?.slips ?? none,
      opportunities: chain?.opportunities ?? none,
      right: (chain?.answer ?? p.answer) === p.answer,
    };
  });
}

/**
 * The most problems of a split (train, the pretraining corpus) and of an evaluation split: a problem
 * with its prompts takes about a kilobyte, and a million draws take seconds, so every size the
 * schema admits is generated in moments and fits in memory.
 */
const MAX_SPLIT = 1_000_000;
const MAX_HELD = 100_000;

/** How many distinct expressions the options can draw (an upper bound: `nonNegative` keeps fewer). */
export function arithSpace(o: Pick<ArithOptions, 'operands' | 'digits' | 'operations'>): number {
  const lo = o.digits.min === 1 ? 0 : 10 ** (o.digits.min - 1);
  const numbers = 10 ** o.digits.max - lo;
  let total = 0;
  for (let n = o.operands.min; n <= o.operands.max; n++) total += numbers ** n * o.operations.length ** (n - 1);
  return total;
}

const range = (min: number, max: number, dmin: number, dmax: number) =>
  ({
    type: 'object',
    properties: {
      min: { type: 'integer', minimum: min, maximum: max, default: dmin },
      max: { type: 'integer', minimum: min, maximum: max, default: dmax },
    },
    additionalProperties: false,
    default: {},
  }) as const satisfies JSONSchema;

const ARITH_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    seed: {
      type: 'integer',
      minimum: 0,
      default: 1234,
      description: 'seed of the problem generator (not the run seed)',
    },
    train: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_SPLIT,
      default: 2000,
      description: 'training problems (a step samples its batch from them)',
    },
    heldOut: { type: 'integer', minimum: 0, maximum: MAX_HELD, default: 200, description: 'held-out problems' },
    heldOutSeed: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description:
        "above 0: evaluate on a fresh held-out set drawn from this seed, apart from the standing one (0: the task seed's own set); a planned comparison names its own, so no earlier rendering read its problems. Train, validation and the pretraining corpus exclude both sets, so they differ slightly from heldOutSeed 0",
    },
    validation: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_HELD,
      default: 0,
      description:
        'validation problems (disjoint from train, held-out and every pretraining corpus), evaluated with eval.split "validation": choose settings on them, never on held-out',
    },
    operands: range(2, 6, 2, 3),
    digits: range(1, 4, 1, 2),
    operations: { type: 'array', items: { enum: ['+', '-'] }, minItems: 1, uniqueItems: true, default: ['+', '-'] },
    nonNegative: { type: 'boolean', default: true, description: 'every intermediate result is >= 0' },
    phrasings: {
      type: 'integer',
      minimum: 1,
      maximum: ARITH_PHRASINGS,
      default: ARITH_PHRASINGS,
      description: 'prompt phrasings: the canonical one plus variants for corl:rephrase',
    },
    pretrain: {
      type: 'object',
      default: {},
      description: 'the pretraining (SFT) corpus of `corl pretrain`',
      properties: {
        size: { type: 'integer', minimum: 0, maximum: MAX_SPLIT, default: 20000, description: 'worked examples' },
        weights: {
          type: 'object',
          default: {},
          description:
            "acceptance weight of problems with each feature (1 = as generated, 0 = never): a family's blind spots",
          properties: {
            carry: { type: 'number', minimum: 0, maximum: 1, default: 1 },
            borrow: { type: 'number', minimum: 0, maximum: 1, default: 1 },
            hundreds: { type: 'number', minimum: 0, maximum: 1, default: 1 },
          },
          additionalProperties: false,
        },
        phrasings: {
          type: 'array',
          items: { type: 'integer', minimum: 0, maximum: ARITH_PHRASINGS - 1 },
          minItems: 1,
          default: [0, 1, 2, 3],
          description: 'phrasings used in the corpus',
        },
        slips: {
          type: 'object',
          default: {},
          description:
            'probability of a slip at each opportunity in the worked solutions; a slipped digit propagates consistently to the boxed answer (scattered errors a majority can correct)',
          properties: {
            column: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0,
              description: 'each written result digit: one higher or lower',
            },
            carry: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0,
              description: 'each carry into a column or a new leading digit: forgotten',
            },
            borrow: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0,
              description: 'each borrow from a column: forgotten',
            },
            copy: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0,
              description:
                'each copy of a result into the next step or the box: a digit off by one or two digits swapped',
            },
          },
          additionalProperties: false,
        },
        discussion: {
          type: 'object',
          default: {},
          description:
            'discussion turns: prompts "Peers: <answers>. <problem>" quoting neighbours of an earlier round, so models can read interaction prompts',
          properties: {
            fraction: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0,
              description: 'share of the corpus that is discussion turns',
            },
            neighbours: range(1, 4, 1, 2),
            neighbourRight: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0.6,
              description: 'probability that a quoted answer is right (else a slipped wrong answer)',
            },
            adopt: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0.5,
              description: "probability that a writer disagreeing with the neighbours' plurality adopts it",
            },
          },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
export type ArithOptions = FromSchema<typeof ARITH_OPTIONS_SCHEMA>;

/**
 * The embedded benchmark's task: multi-step integer arithmetic chains whose worked solutions end
 * in `\boxed{…}`, a fixed held-out split, row-aligned phrasings (for `corl:rephrase`), and a
 * pretraining corpus whose feature mix is configurable so that model families can have different
 * blind spots. Everything is generated from the seed; nothing is downloaded.
 */
export const arithTask = definePlugin({
  manifest: {
    name: 'corl:arith',
    kind: 'task',
    description:
      'Synthetic multi-step arithmetic with worked \\boxed{} solutions, a fixed held-out split, phrasings and a family-specific pretraining corpus',
    corl: '^0.1.0',
    options: ARITH_OPTIONS_SCHEMA,
  },
  create(options: ArithOptions): Task {
    const nb = options.pretrain.discussion.neighbours;
    if (options.operands.min > options.operands.max || options.digits.min > options.digits.max || nb.min > nb.max) {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        `expected min <= max in operands and digits, got operands ${options.operands.min}..${options.operands.max}, digits ${options.digits.min}..${options.digits.max}, discussion neighbours ${nb.min}..${nb.max}`,
        { where: 'task.options' },
      );
    }
    // Distinct problems cannot outnumber the expressions the options allow: refused before drawing.
    const space = arithSpace(options);
    if (options.heldOutSeed > 0 && options.heldOut === 0) {
      throw new CorlError('CORL_ERR_TASK_DATA', `expected heldOut > 0 with heldOutSeed ${options.heldOutSeed}, got 0`, {
        where: 'task.options.heldOutSeed',
        hint: 'ask for held-out problems, or drop heldOutSeed',
      });
    }
    const wanted = options.heldOut * (options.heldOutSeed > 0 ? 2 : 1) + options.validation + options.train;
    if (wanted > space) {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        `expected at most ${space} distinct problems in train, heldOut (twice with a heldOutSeed) and validation together (what operands ${options.operands.min}..${options.operands.max}, digits ${options.digits.min}..${options.digits.max} and ${options.operations.length} operation(s) allow), got ${wanted}`,
        { where: 'options.train', hint: 'ask for fewer problems, or allow more digits or operands' },
      );
    }
    return {
      discussionPrompt: arithRoundPrompt,
      async load(): Promise<TaskData> {
        const g = generateArith(options);
        const refs: [string, Reference][] = [];
        const toProblem = (p: ArithProblem, split: string): Problem => {
          const id = `${split}-${p.expression}`;
          refs.push([id, { answer: String(p.answer), solution: arithSolution(p) }]);
          const variants = Array.from({ length: options.phrasings - 1 }, (_, i) => arithPrompt(p, i + 1));
          return {
            id,
            prompt: arithPrompt(p, 0),
            variants,
            metadata: { ...p.features, category: arithCategory(p.features), split },
          };
        };
        const train = g.train.map((p) => toProblem(p, 'train'));
        const heldOut = g.heldOut.map((p) => toProblem(p, 'test'));
        const validation = g.validation.map((p) => toProblem(p, 'validation'));
        const corpus = arithCorpus(options, g.pretrain);
        return {
          train,
          heldOut,
          ...(validation.length > 0 ? { validation } : {}),
          groundTruth: new MapGroundTruth(refs),
          pretrainText: corpus.map((t) => t.prompt + t.solution),
          pretrainPromptLengths: corpus.map((t) => t.prompt.length),
        };
      },
    };
  },
});
