// Answers and rewards at paper scale: 128 prompts × 12 completions of about 600 characters with mixed
// answer forms, through the same plugins a run uses (corl:math extractor and equivalence, corl:vote).
// Figures: extraction and key throughput, labels + rewards per step (TTRL and a two-agent Co-RL
// ring, cold and warm caches, with and without the engine proving polynomial identities), and the
// time per character of hostile inputs at growing sizes (linear means a flat column).
import type { AnswerExtractor } from '../core/contracts/answer-extractor';
import type { CompletionView, RewardContext, RewardSource } from '../core/contracts/reward-source';
import { Rng } from '../core/util/rng';
import { extractMath, MathEquivalence, mathExtractor, mathKey } from '../plugins/answers/math';
import { voteReward } from '../plugins/rewards/vote';
import type { Bench } from './index';

const PROMPTS = 128;
const K = 12;

interface AnswerFamily {
  /** Surface forms of the right answer, and of a wrong one. */
  forms(rng: Rng, right: boolean): string[];
}

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)]!;

const FAMILIES: AnswerFamily[] = [
  {
    forms: (r, ok) => {
      const n = ok ? 42 : 40 + r.int(5) * 2 + 1;
      return [`${n}`, `${n}.0`, `${n}\\text{ units}`, `x = ${n}`];
    },
  },
  {
    forms: (r, ok) => {
      const [p, q] = ok
        ? [3, 4]
        : pick(r, [
            [2, 3],
            [5, 4],
            [1, 4],
          ] as const);
      return [`\\frac{${p}}{${q}}`, `\\dfrac{${p}}{${q}}`, `${p}/${q}`, `${(p / q).toString()}`, `\\frac${p}${q}`];
    },
  },
  {
    forms: (r, ok) => {
      const k = ok ? 2 : 3 + r.int(2);
      return [`${k}\\sqrt{2}`, `\\sqrt{${2 * k * k}}`, `${k} \\sqrt 2`];
    },
  },
  {
    forms: (r, ok) => {
      const m = ok ? 3 : pick(r, [4, 6]);
      return [`\\frac{\\pi}{${m}}`, `\\frac{1}{${m}}\\pi`, `\\dfrac{\\pi}{${m}}`];
    },
  },
  {
    forms: (r, ok) => {
      const b = ok ? 5 : 4;
      return [`[2, ${b})`, `\\left[2, ${b}\\right)`, `x \\in [2,${b})`];
    },
  },
  {
    forms: (r, ok) => {
      const b = ok ? -1 : 1;
      return [`(3, ${b})`, `\\left(3, ${b}\\right)`, `(3,${b})`];
    },
  },
  {
    forms: (r, ok) => {
      const a = ok ? 2 : pick(r, [1, 3]);
      return [`(x+${a})^2`, `x^2+${2 * a}x+${a * a}`, `x^{2} + ${2 * a} x + ${a * a}`];
    },
  },
  {
    forms: (r, ok) => {
      const m = ok ? '3.5' : '3.6';
      return [`${m}\\times10^{8}`, `${m}e8`, `${m} \\cdot 10^{8}`, `${Number(m) * 1e8}`];
    },
  },
  {
    forms: (r, ok) => {
      const p = ok ? 25 : 20;
      return [`${p}\\%`, `${p}`, `${p}%`];
    },
  },
  {
    forms: (r, ok) => {
      const n = ok ? '1,234' : '1,243';
      return [n, n.replace(',', ''), `\\$${n}`];
    },
  },
  {
    forms: (r, ok) => {
      const s = ok ? [1, 2] : [1, 3];
      return [`\\{${s[0]}, ${s[1]}\\}`, `\\{${s[1]},${s[0]}\\}`];
    },
  },
  {
    forms: (r, ok) => {
      const d = ok ? 90 : 60;
      return [`${d}^\\circ`, `${d}`, `${d}^{\\circ}`];
    },
  },
];

const FILLER = [
  'Let us set up the problem carefully. ',
  'We have $x = 3$ and $y^2 = 9$, so $y = \\pm 3$. ',
  'Adding the two equations gives 12 + 7 = 19. ',
  'Now substitute back into \\(2a + b = 11\\). ',
  'The area is $\\frac{1}{2} b h = 24$. ',
  'Checking: $5 \\cdot 4 = 20$, which matches. ',
  'Wait, that is not right; let me recompute the sum. ',
  'By the quadratic formula, $x = \\frac{-b \\pm \\sqrt{b^2 - 4ac}}{2a}$. ',
  'So the probability is the ratio of favourable outcomes. ',
  'Hence the total is 3 + 4 + 5 = 12 items. ',
  'Therefore, simplifying further, ',
];

/** One completion: about 600 characters of reasoning, then the answer in one of the common formats. */
function completion(rng: Rng, form: string | null): string {
  let text = '';
  while (text.length < 520) text += pick(rng, FILLER);
  if (form === null) return text + 'I am not sure how to finish this.';
  switch (rng.int(5)) {
    case 0:
      return `${text}So the final answer is $\\boxed{${form}}$.`;
    case 1:
      return `${text}The answer is ${form}.`;
    case 2:
      return `${text}Final Answer: The final answer is $${form}$. I hope it is correct.`;
    case 3:
      return `${text}<answer>${form}</answer>`;
    default:
      return `${text}Thus we get $$\\boxed{${form}}$$`;
  }
}

/** A step's completions: prompts × K texts; about 60% right (mixed forms), 30% wrong, 10% no answer. */
function stepTexts(seed: number): string[][] {
  const rng = new Rng(seed);
  const out: string[][] = [];
  for (let p = 0; p < PROMPTS; p++) {
    const fam = FAMILIES[p % FAMILIES.length]!;
    const group: string[] = [];
    for (let k = 0; k < K; k++) {
      const u = rng.next();
      group.push(completion(rng, u < 0.1 ? null : pick(rng, fam.forms(rng, u < 0.7))));
    }
    out.push(group);
  }
  return out;
}

const extractor = mathExtractor.create(
  { minerva: true, answerTags: true, boxed: true, answerIs: true, lastNumber: true },
  {} as never,
) as AnswerExtractor;

interface AgentStep {
  answers: (string | null)[][];
  keys: (string | null)[][];
}

function keysOf(texts: string[][], eq: MathEquivalence): AgentStep {
  const answers = texts.map((g) => g.map((t) => extractor.extract(t)));
  const keys = answers.map((g) => g.map((a) => (a === null ? null : eq.key(a))));
  return { answers, keys };
}

/** Labels and rewards of one agent for the step, through corl:vote exactly as the trainer calls it. */
async function rewards(
  vote: RewardSource,
  agent: number,
  agents: number,
  mine: AgentStep,
  texts: string[][],
  supervisors: { agent: number; step: AgentStep }[],
  eq: MathEquivalence,
): Promise<number> {
  let labeled = 0;
  for (let p = 0; p < PROMPTS; p++) {
    const completions: CompletionView[] = texts[p]!.map((text, k) => ({
      text,
      answer: mine.answers[p]![k]!,
      key: mine.keys[p]![k]!,
      length: 150,
      finishReason: 'stop',
    }));
    const ctx: RewardContext = {
      problem: { id: `p${p}`, prompt: '' },
      prompt: '',
      agent,
      agents,
      step: 0,
      completions,
      own: { agent, keys: mine.keys[p]! },
      supervisors: supervisors.map((s) => ({ agent: s.agent, keys: s.step.keys[p]! })),
      equivalence: eq,
    };
    const r = await vote.score(ctx);
    if (r.label !== null) labeled++;
  }
  return labeled;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timed<T>(fn: () => Promise<T> | T): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

const vote = voteReward.create({ threshold: 0, rule: 'pool' }, {} as never) as RewardSource;

/** One TTRL step (self-vote) of one agent: keys, labels, rewards. */
async function ttrlStep(texts: string[][], eq: MathEquivalence): Promise<number> {
  const mine = keysOf(texts, eq);
  return rewards(vote, 0, 1, mine, texts, [{ agent: 0, step: mine }], eq);
}

/** One Co-RL step of a two-agent ring: both agents' keys, labels from the peer, rewards. */
async function ringStep(a: string[][], b: string[][], eq: MathEquivalence): Promise<number> {
  const ka = keysOf(a, eq);
  const kb = keysOf(b, eq);
  return (
    (await rewards(vote, 0, 2, ka, a, [{ agent: 1, step: kb }], eq)) +
    (await rewards(vote, 1, 2, kb, b, [{ agent: 0, step: ka }], eq))
  );
}

async function stepFigures(
  label: string,
  options: ConstructorParameters<typeof MathEquivalence>[0],
  reps: number,
): Promise<void> {
  const steps = Array.from(
    { length: reps + 2 },
    (_, r) => [stepTexts(100 + r), stepTexts(200 + r), stepTexts(300 + r)] as const,
  );
  // cold: a fresh equivalence per step (empty caches); its worker is started before the clock runs.
  // The first two steps only warm up the JIT.
  const cold: number[] = [];
  const coldRing: number[] = [];
  let calls = 0;
  for (const [r, [ttrl, a, b]] of steps.entries()) {
    const eq = new MathEquivalence(options);
    if (options?.symbolic !== false) await eq.equal('\\sum_{k=1}^{2}k', '3'); // start the worker
    const before = eq.symbolicStats.answered;
    const [ms] = await timed(() => ttrlStep(ttrl, eq));
    const [ringMs] = await timed(() => ringStep(a, b, new MathEquivalence({ ...options, symbolic: false })));
    if (r >= 2) {
      calls += eq.symbolicStats.answered - before;
      cold.push(ms);
      coldRing.push(ringMs);
    }
    await eq.close();
  }
  // warm: one equivalence across steps, new completions every step
  const eq = new MathEquivalence(options);
  const later = Array.from({ length: reps + 3 }, (_, r) => stepTexts(500 + r));
  const warm: number[] = [];
  for (const [r, texts] of later.entries()) {
    const [ms] = await timed(() => ttrlStep(texts, eq));
    if (r >= 3) warm.push(ms);
  }
  await eq.close();
  process.stdout.write(`${label}\n`);
  process.stdout.write(
    `  TTRL, 1 agent, cold caches:        ${median(cold).toFixed(1)} ms per step (median of ${reps}; ${(calls / reps).toFixed(1)} symbolic comparisons per step)\n`,
  );
  process.stdout.write(`  TTRL, 1 agent, warm caches:        ${median(warm).toFixed(1)} ms per step\n`);
  process.stdout.write(
    `  Co-RL ring, 2 agents, cold caches: ${median(coldRing).toFixed(1)} ms per step (both agents)\n`,
  );
}

/** Time per character of hostile inputs at growing sizes. */
function linearity(): void {
  const families: Record<string, (n: number) => string> = {
    'unbalanced \\boxed{': (n) => '\\boxed{'.repeat(Math.ceil(n / 7)),
    'open braces': (n) => '{'.repeat(n),
    '"answer is" repeated': (n) => 'answer is '.repeat(Math.ceil(n / 10)),
    'comma-digit runs': (n) => '1,'.repeat(Math.ceil(n / 2)),
    digits: (n) => '9'.repeat(n),
    '\\frac chains': (n) => '\\frac'.repeat(Math.ceil(n / 5)),
  };
  const eq = new MathEquivalence({ symbolic: false });
  process.stdout.write('hostile input, ns per character (extract + key) at 10 kB / 100 kB / 1 MB:\n');
  for (const [name, make] of Object.entries(families)) {
    const row: string[] = [];
    for (const n of [10_000, 100_000, 1_000_000]) {
      const text = make(n);
      const reps = Math.max(1, Math.round(2_000_000 / n));
      const t0 = performance.now();
      for (let r = 0; r < reps; r++) {
        const a = extractMath(text);
        if (a !== null) eq.key(a);
      }
      row.push((((performance.now() - t0) * 1e6) / (reps * text.length)).toFixed(1).padStart(6));
    }
    process.stdout.write(`  ${name.padEnd(24)} ${row.join('  ')}\n`);
  }
}

export const bench: Bench = {
  name: 'answers',
  description: `labels and rewards for one step of ${PROMPTS} prompts x ${K} completions (~600 chars, mixed answer forms); extraction throughput; hostile-input linearity`,
  async run() {
    const texts = stepTexts(1).flat();
    const chars = texts.reduce((s, t) => s + t.length, 0);
    process.stdout.write(
      `one step: ${texts.length} completions, ${(chars / texts.length).toFixed(0)} characters on average\n`,
    );
    const eq = new MathEquivalence({ symbolic: false });
    for (let r = 0; r < 3; r++) for (const t of texts) extractor.extract(t); // warm-up
    const reps = 20;
    const [ms, answers] = await timed(() => {
      let last: (string | null)[] = [];
      for (let r = 0; r < reps; r++) last = texts.map((t) => extractor.extract(t));
      return last;
    });
    const perSecond = (reps * texts.length) / (ms / 1000);
    process.stdout.write(
      `extraction: ${(perSecond / 1000).toFixed(0)}k completions/s, ${((reps * chars) / (ms / 1000) / 1e6).toFixed(0)} MB/s (${(ms / reps).toFixed(2)} ms per step)\n`,
    );
    const nonNull = answers.filter((a): a is string => a !== null);
    const [kms] = await timed(() => {
      for (let r = 0; r < reps; r++) for (const a of nonNull) mathKey(a);
    });
    process.stdout.write(
      `canonical keys, no cache: ${((reps * nonNull.length) / (kms / 1000) / 1000).toFixed(0)}k answers/s (${(kms / reps).toFixed(2)} ms per step)\n`,
    );
    const [cms] = await timed(() => {
      for (let r = 0; r < reps; r++) for (const a of nonNull) eq.key(a);
    });
    process.stdout.write(
      `canonical keys through the equivalence's key cache: ${(cms / reps).toFixed(2)} ms per step\n`,
    );
    const distinct = new Set(nonNull.map((a) => eq.key(a)));
    process.stdout.write(
      `distinct raw answers per step: ${new Set(nonNull).size}, distinct keys: ${distinct.size}\n\n`,
    );

    await stepFigures(
      'labels + rewards (corl:math equivalence, defaults; target <= 20 ms per agent-step; Python reference ~5 s):',
      {},
      7,
    );
    await stepFigures(
      'labels + rewards with probeIdentity: false (the engine proves every polynomial identity):',
      { probeIdentity: false },
      3,
    );
    await stepFigures('labels + rewards with symbolic: false (fast checks only):', { symbolic: false }, 7);
    process.stdout.write('\n');
    linearity();
  },
};
