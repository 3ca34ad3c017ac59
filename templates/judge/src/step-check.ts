import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { definePlugin, type Judge, type JudgeItem, type JudgeRequest, type JudgeResult } from 'corl';

/** Options of the judge: a JSON Schema, which corl validates and defaults a config's options against before `create` runs. */
const STEP_CHECK_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    fromPrompt: {
      type: 'boolean',
      default: true,
      description: 'also require the first step to start at a number of the problem and every added or subtracted number to be one of its numbers',
    },
    unchallenged: {
      type: 'number',
      minimum: 1,
      maximum: 3,
      default: 2,
      description: 'score of flawed work whose evaluation gave the same answer or none (did not catch the flaw), rubric 1..3',
    },
    unchecked: {
      oneOf: [{ type: 'number', minimum: 1, maximum: 3 }, { type: 'null' }],
      default: null,
      description: 'score of a proposal that writes no step to check; null: no verdict (corl:comas then rewards neither turn)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options type, derived from the schema (json-schema-to-ts), so the two cannot drift. */
export type StepCheckOptions = FromSchema<typeof STEP_CHECK_OPTIONS_SCHEMA>;

/** One step a solution writes out: `left op right = result`. */
export interface WrittenStep {
  readonly left: number;
  readonly op: '+' | '-';
  readonly right: number;
  readonly result: number;
}

/** What the judge found in a proposal's work: whether it holds and, when it does not, the first flaw. */
export interface WorkCheck {
  readonly verdict: 'holds' | 'fails' | 'unchecked';
  readonly reason: string;
}

const STEP = /(-?\d+)\s*([+-])\s*(\d+)\s*=\s*(-?\d+)/g;

/** Every `a + b = c` or `a - b = c` a text writes, in order (`47+85=132;132-19=113;\boxed{113}` has two). */
export function writtenSteps(text: string): WrittenStep[] {
  return [...text.matchAll(STEP)].map((m) => ({
    left: Number(m[1]),
    op: m[2] as '+' | '-',
    right: Number(m[3]),
    result: Number(m[4]),
  }));
}

const show = (s: WrittenStep): string => `${s.left}${s.op}${s.right}=${s.result}`;

/**
 * Check the work of a solution to `prompt`: every written step is true arithmetic, the first starts at
 * a number of the problem and each later one at the result before it, every added or subtracted number
 * is one of the problem's (with `fromPrompt`), and the answer is the last result. It reads the problem
 * and the solution only, never a reference: wrong work fails, but work that is right arithmetic on the
 * wrong operation (adding where the problem subtracts) holds.
 */
export function checkWork(prompt: string, text: string, answer: string | null, fromPrompt = true): WorkCheck {
  const steps = writtenSteps(text);
  if (steps.length === 0) return { verdict: 'unchecked', reason: 'no step written' };
  const numbers = new Set((prompt.match(/\d+/g) ?? []).map(Number));
  for (const [i, s] of steps.entries()) {
    const at = `step ${i + 1}`;
    if ((s.op === '+' ? s.left + s.right : s.left - s.right) !== s.result)
      return { verdict: 'fails', reason: `${at}: ${show(s)} is false` };
    const before = i === 0 ? undefined : steps[i - 1]!.result;
    if (before !== undefined && s.left !== before)
      return { verdict: 'fails', reason: `${at} starts at ${s.left}, not at the result before it, ${before}` };
    if (fromPrompt && before === undefined && !numbers.has(s.left))
      return { verdict: 'fails', reason: `${at} starts at ${s.left}, which is not in the problem` };
    if (fromPrompt && !numbers.has(s.right))
      return { verdict: 'fails', reason: `${at} uses ${s.right}, which is not in the problem` };
  }
  const last = steps[steps.length - 1]!.result;
  if (answer === null) return { verdict: 'fails', reason: 'no answer given' };
  if (Number(answer.trim()) !== last)
    return { verdict: 'fails', reason: `the answer ${answer} is not the last result, ${last}` };
  return { verdict: 'holds', reason: `${steps.length} step(s) check out` };
}

/**
 * The rubric score of one item (3: right and no criticism holds, 1: a fatal flaw, see corl's
 * docs/algorithms/comas.md): work that holds scores 3 whatever its evaluation says; flawed work scores 1
 * when its evaluation contested it (answered otherwise), `unchallenged` when the evaluation let it
 * stand; a proposal with no step to check scores `unchecked`.
 */
export async function stepCheckScore(
  o: StepCheckOptions,
  prompt: string,
  item: JudgeItem,
  equal: (a: string, b: string) => Promise<boolean>,
): Promise<number | null> {
  const { proposal, evaluation } = item;
  const work = checkWork(prompt, proposal.text, proposal.answer, o.fromPrompt);
  if (work.verdict === 'holds') return 3;
  if (work.verdict === 'unchecked') return o.unchecked;
  const p = proposal.key;
  const e = evaluation.key;
  const agrees = e !== null && p !== null && (e === p || (await equal(e, p)));
  return e !== null && !agrees ? 1 : o.unchallenged;
}

/** A judge that checks the arithmetic a proposal writes out, with no model and no reference. */
export const exampleJudge = definePlugin({
  manifest: {
    name: 'example:judge',
    kind: 'judge',
    description: 'Checks the written steps of a proposal: true, chained, from the problem, ending at the answer',
    corl: '^0.1.0',
    options: STEP_CHECK_OPTIONS_SCHEMA,
  },
  create(options: StepCheckOptions): Judge {
    return {
      async score(request: JudgeRequest): Promise<JudgeResult> {
        const scores: (number | null)[] = [];
        for (const item of request.items) scores.push(await stepCheckScore(options, request.prompt, item, request.equal));
        // No model is asked: no calls, no samples (corl reports both as judge/calls and judge/samples).
        return { scores, calls: 0, samples: 0 };
      },
    };
  },
});
