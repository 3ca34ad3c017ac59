// The calibration of the lab (issue 37): each published fact about how real models respond to the
// *baseline* rewards (ground truth, TTRL, RENT, Intuitor, the untrained base), beside the lab's
// figure from the committed raw outputs with its 95% t interval over seeds, a stated tolerance and
// an outcome by the interval (holds, does not hold, inconclusive). No Co-RL result enters: the
// facts read base, gt, ttrl, rent and intuitor runs, and the error-overlap fact reads only the
// step-0 rows (the untrained checkpoints, before any update) of the three-agent config.
//   node dist/scripts/calibration.js docs/results                  # the table of every regime
//   node dist/scripts/calibration.js --candidates docs/results/calibration-released …   # the search's screen
// docs/results.md quotes both; test/scripts/calibration.test.ts checks the quotes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readComparison } from '../core/report/compare';
import type { ReportGroup } from '../core/report/html';
import { resultRow } from '../core/report/html';
import { evalStepFiles, pooledAgreement } from '../core/report/markdown';
import { readEvalRows } from '../core/report/eval-rows';
import { primaryValue, seedIndex } from '../core/report/paired';
import type { RunSummary } from '../core/report/runs';
import { signedPoints } from '../core/report/verdict';
import { sample, tInterval, type Interval } from '../core/stats/paired';

/** Two-sided error rate of the calibration's intervals. */
export const CALIBRATION_ALPHA = 0.05;

/** A fact's outcome by its interval (or, in the one-seed screen, by its point estimate). */
export type FactOutcome = 'holds' | 'does not hold' | 'inconclusive';

/** What a lab figure must satisfy: `holds` of a point; `fails` of an interval lying wholly outside. */
export interface Tolerance {
  readonly text: string;
  readonly holds: (x: number) => boolean;
  readonly fails: (i: Interval) => boolean;
}

/** Per-seed values of a lab figure (keyed by seed index) and how they were made. */
export interface Measure {
  /** Configs the figure reads (by method: base, gt, ttrl, rent, intuitor, n3-ring). */
  readonly needs: readonly string[];
  /** What the figure is, in words. */
  readonly text: string;
  /** The figure of one seed, in points (or κ), from the runs of that seed index, one per needed config. */
  readonly value: (runs: Readonly<Record<string, RunSummary>>) => number;
  /** Digits to print (1 for points, 3 for κ). */
  readonly digits: number;
}

/** One published baseline fact. */
export interface Fact {
  readonly id: string;
  readonly fact: string;
  readonly published: string;
  readonly source: string;
  readonly tolerance: Tolerance;
  readonly measure: Measure;
}

/** A fact measured on one regime's committed comparisons. */
export interface CalibrationRow {
  readonly fact: Fact;
  /** The comparison folder the figure came from (undefined: no committed comparison has every needed config). */
  readonly from?: string;
  readonly n: number;
  readonly mean: number;
  readonly interval?: Interval;
  readonly outcome?: FactOutcome;
}

const pct = (x: number | undefined): number => (x === undefined ? NaN : 100 * x);
const one = (run: RunSummary) => resultRow({ name: run.name, runs: [run] });
/** Change of average pass@1 over agents from step 0 to the last evaluation, in points. */
const change = (run: RunSummary): number => primaryValue(run, 'change');
/** Average pass@1 over agents at the last evaluation, in points. */
const final = (run: RunSummary): number => primaryValue(run, 'final');
/** The base models' average maj@K at the last (for a base run: the only) evaluation, in points. */
const maj = (run: RunSummary): number => pct(one(run).maj?.mean);
/** The budget-fair ensemble's accuracy at the last evaluation, in points. */
const ensemble = (run: RunSummary): number => pct(one(run).ensemble?.mean);

/** Correctness flags of one agent's step-0 evaluation rows, by problem id. */
function step0Flags(run: RunSummary, agent: string): Map<string, boolean[]> {
  const index = run.agents.findIndex((a) => a.name === agent);
  const file = evalStepFiles(run.dir).get(0);
  const out = new Map<string, boolean[]>();
  if (index < 0 || !file) return out;
  for (const r of readEvalRows(file)) if (r.agent === index && r.id !== undefined) out.set(r.id, [...r.correct]);
  return out;
}

/** κ(a × b) − κ(a × c) of the untrained checkpoints (step-0 rows), pooled over aligned sample pairs. */
export function kappaGap(run: RunSummary, a: string, b: string, c: string): number {
  const fa = step0Flags(run, a);
  const fb = step0Flags(run, b);
  const fc = step0Flags(run, c);
  if (!fa.size || !fb.size || !fc.size) return NaN;
  return pooledAgreement(fa, fb).kappa - pooledAgreement(fa, fc).kappa;
}

const above = (t: number, text: string): Tolerance => ({ text, holds: (x) => x > t, fails: (i) => i.hi < t });
const atMost = (t: number, text: string): Tolerance => ({ text, holds: (x) => x <= t, fails: (i) => i.lo > t });
const within = (m: number, text: string): Tolerance => ({
  text,
  holds: (x) => Math.abs(x) <= m,
  fails: (i) => i.lo > m || i.hi < -m,
});

const TABLE1 = 'Co-RL (arXiv 2608.17253), Table 1: 7-benchmark average, Qwen2.5-3B / Llama-3.2-3B';

/** The published baseline facts, in the order of issue 37 and then the others sourced. */
export const FACTS: readonly Fact[] = [
  {
    id: 'gt-ttrl',
    fact: 'GT reward ≈ TTRL',
    published: '+0.1 (47.4 vs 47.3) / −0.1 (43.0 vs 43.1)',
    source: `${TABLE1}; TTRL (arXiv 2504.16084): TTRL approaches training on the test data with its labels`,
    tolerance: within(1.5, 'GT − TTRL within ±1.5 points'),
    measure: {
      needs: ['gt', 'ttrl'],
      text: 'GT − TTRL, change of avg pass@1 from step 0',
      value: (r) => change(r.gt!) - change(r.ttrl!),
      digits: 1,
    },
  },
  {
    id: 'rent-gain',
    fact: 'RENT gains over the base',
    published: '+4.2 (44.9 vs 40.7) / −0.1 (38.6 vs 38.7)',
    source: `${TABLE1}; RENT (arXiv 2505.22660): gains on GSM8K, MATH500, AMC, AIME, GPQA`,
    tolerance: above(0, 'RENT − base > 0 points'),
    measure: {
      needs: ['rent'],
      text: 'RENT − base (RENT’s change from step 0)',
      value: (r) => change(r.rent!),
      digits: 1,
    },
  },
  {
    id: 'intuitor-gain',
    fact: 'Intuitor gains over the base',
    published: '+4.9 (45.6 vs 40.7) / +1.0 (39.7 vs 38.7)',
    source: `${TABLE1}; Intuitor (arXiv 2505.19590)`,
    tolerance: above(0, 'Intuitor − base > 0 points'),
    measure: {
      needs: ['intuitor'],
      text: 'Intuitor − base (Intuitor’s change from step 0)',
      value: (r) => change(r.intuitor!),
      digits: 1,
    },
  },
  {
    id: 'ttrl-beyond-maj',
    fact: 'TTRL’s trained pass@1 goes beyond the base model’s own majority vote',
    published: 'yes, on every benchmark and model reported',
    source: 'TTRL (arXiv 2504.16084): TTRL consistently surpasses the initial model’s maj@n',
    tolerance: above(0, 'TTRL pass@1 − base maj@8 > 0 points'),
    measure: {
      needs: ['ttrl', 'base'],
      text: 'TTRL avg pass@1 after training − base avg maj@8',
      value: (r) => final(r.ttrl!) - maj(r.base!),
      digits: 1,
    },
  },
  {
    id: 'kappa-gap',
    fact: 'errors overlap less across families than within one (Cohen’s κ)',
    published: '−0.14 (κ 0.38 Qwen2.5-3B × Llama-3.2-3B vs 0.52 Qwen2.5-3B × Qwen3-1.7B)',
    source: 'Co-RL (arXiv 2608.17253), error decoupling of the base models',
    tolerance: atMost(-0.1, 'κ across − κ within ≤ −0.10'),
    measure: {
      needs: ['n3-ring'],
      text: 'κ(alpha × beta) − κ(alpha × alpha-s1), untrained checkpoints (step-0 rows)',
      value: (r) => kappaGap(r['n3-ring']!, 'alpha', 'beta', 'alpha-s1'),
      digits: 3,
    },
  },
  {
    id: 'ensemble',
    fact: 'budget-fair ensemble: two label-free-trained models pooled beat the base models pooled',
    published:
      'not reported alone; TTRL’s models each gain +6.6 / +4.4 over the base, the premise of the paper’s budget-fair comparison',
    source: `${TABLE1} (TTRL 47.3 vs base 40.7; 43.1 vs 38.7); ensemble: maj@8 of 4 samples per model`,
    tolerance: above(0, 'TTRL ensemble − base ensemble > 0 points'),
    measure: {
      needs: ['ttrl', 'base'],
      text: 'TTRL’s budget-fair ensemble − the base models’ budget-fair ensemble',
      value: (r) => ensemble(r.ttrl!) - ensemble(r.base!),
      digits: 1,
    },
  },
  {
    id: 'gt-gain',
    fact: 'GT reward gains over the base',
    published: '+6.7 (47.4 vs 40.7) / +4.3 (43.0 vs 38.7)',
    source: TABLE1,
    tolerance: above(0, 'GT − base > 0 points'),
    measure: { needs: ['gt'], text: 'GT − base (GT’s change from step 0)', value: (r) => change(r.gt!), digits: 1 },
  },
  {
    id: 'intuitor-gt',
    fact: 'Intuitor comes close to GT reward',
    published: '−1.8 (45.6 vs 47.4) / −3.3 (39.7 vs 43.0)',
    source: `${TABLE1}; Intuitor (arXiv 2505.19590): matches GRPO with gold rewards on math`,
    tolerance: above(-3.5, 'Intuitor − GT > −3.5 points'),
    measure: {
      needs: ['intuitor', 'gt'],
      text: 'Intuitor − GT, change of avg pass@1 from step 0',
      value: (r) => change(r.intuitor!) - change(r.gt!),
      digits: 1,
    },
  },
];

/** A comparison's groups by method: the group named `m`, or `<candidate>-m`. */
function byMethod(groups: readonly ReportGroup[], method: string): ReportGroup | undefined {
  return groups.find((g) => g.name === method) ?? groups.find((g) => g.name.endsWith(`-${method}`));
}

/** The per-seed figures of a measure on one comparison: seeds every needed config ran (NaN dropped). */
export function perSeed(groups: readonly ReportGroup[], m: Measure): number[] | undefined {
  const needed = m.needs.map((n) => byMethod(groups, n));
  if (needed.some((g) => !g)) return undefined;
  const seeds = new Map<number, Record<string, RunSummary>>();
  needed.forEach((g, k) => {
    for (const run of g!.runs) {
      const i = seedIndex(run) ?? run.seed;
      const row = seeds.get(i) ?? {};
      row[m.needs[k]!] = run;
      seeds.set(i, row);
    }
  });
  return [...seeds.entries()]
    .sort((x, y) => x[0] - y[0])
    .filter(([, runs]) => m.needs.every((n) => runs[n]))
    .map(([, runs]) => m.value(runs))
    .filter(Number.isFinite);
}

/** "holds" when the whole interval satisfies the tolerance, "does not hold" when it lies wholly outside it. */
export function factOutcomeOf(t: Tolerance, i: Interval | undefined): FactOutcome {
  if (!i) return 'inconclusive';
  if (t.holds(i.lo) && t.holds(i.hi)) return 'holds';
  return t.fails(i) ? 'does not hold' : 'inconclusive';
}

/** One fact on one regime: the comparison with the most seeds holding every needed config (the first listed on a tie). */
export function calibrateFact(
  fact: Fact,
  comparisons: readonly { name: string; groups: readonly ReportGroup[] }[],
): CalibrationRow {
  let best: { name: string; values: number[] } | undefined;
  for (const c of comparisons) {
    const values = perSeed(c.groups, fact.measure);
    if (values && values.length && (!best || values.length > best.values.length)) best = { name: c.name, values };
  }
  if (!best) return { fact, n: 0, mean: NaN };
  const s = sample(best.values);
  const interval = tInterval(s, CALIBRATION_ALPHA);
  return { fact, from: best.name, n: s.n, mean: s.mean, interval, outcome: factOutcomeOf(fact.tolerance, interval) };
}

const figure = (x: number, digits: number): string =>
  digits === 1
    ? signedPoints(x)
    : !Number.isFinite(x)
      ? '–'
      : `${x < 0 ? '−' : x > 0 ? '+' : '±'}${Math.abs(x).toFixed(digits)}`;
const bold = (o: FactOutcome | undefined): string => (o === undefined ? '–' : o === 'inconclusive' ? o : `**${o}**`);

/** One regime's calibration as the Markdown table docs/results.md quotes. */
export function calibrationTable(rows: readonly CalibrationRow[]): string {
  const lab = (r: CalibrationRow): string => {
    if (!r.from) return 'no committed comparison has these configs';
    const d = r.fact.measure.digits;
    const i = r.interval ? `[${figure(r.interval.lo, d)}, ${figure(r.interval.hi, d)}]` : 'no interval';
    return `${figure(r.mean, d)}, 95% CI ${i} (${r.fact.measure.text}; ${r.from}, ${r.n} seed${r.n === 1 ? '' : 's'})`;
  };
  return [
    '| published fact | real models (source) | tolerance | lab: mean, 95% t interval over seeds (what, from, seeds) | outcome |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.fact.fact} | ${r.fact.published} (${r.fact.source}) | ${r.fact.tolerance.text} | ${lab(r)} | ${bold(r.outcome)} |`,
    ),
  ].join('\n');
}

/** The committed held-out comparisons of each regime, planned first (more seeds), then the three-seed one. */
export const REGIMES: Readonly<Record<string, readonly string[]>> = {
  slips: ['headline-slips', 'slips'],
  systematic: ['headline-systematic', 'systematic'],
};

/** Every regime's calibration from a results folder (docs/results). */
export function calibrateRegimes(results: string): Record<string, CalibrationRow[]> {
  const out: Record<string, CalibrationRow[]> = {};
  for (const [regime, folders] of Object.entries(REGIMES)) {
    const comparisons = folders
      .filter((f) => fs.existsSync(path.join(results, f, 'compare.json')))
      .map((f) => ({ name: f, groups: readComparison(path.join(results, f)).groups }));
    out[regime] = FACTS.map((f) => calibrateFact(f, comparisons));
  }
  return out;
}

/** The targets of the calibration search (docs/results/calibration-search/selection.md), in its order. */
export const SEARCH_TARGETS = ['gt-ttrl', 'rent-gain', 'intuitor-gain', 'ttrl-beyond-maj', 'kappa-gap'] as const;

/** One candidate's screen: each target's figure (one seed: a point estimate) and whether it is met. */
export interface CandidateScreen {
  readonly name: string;
  readonly cells: readonly { readonly id: string; readonly value: number; readonly met: boolean | undefined }[];
  readonly passes: boolean;
}

/** The κ measure of a candidate: its base config holds the three checkpoints. */
const CANDIDATE_KAPPA: Measure = {
  needs: ['base'],
  text: 'κ(alpha × beta) − κ(alpha × alpha-s1), untrained checkpoints',
  value: (r) => kappaGap(r.base!, 'alpha', 'beta', 'alpha-s1'),
  digits: 3,
};

/** Screen one candidate's comparison (one seed per config) against the search's targets, by point estimate. */
export function screenCandidate(name: string, groups: readonly ReportGroup[]): CandidateScreen {
  const cells = SEARCH_TARGETS.map((id) => {
    const fact = FACTS.find((f) => f.id === id)!;
    const values = perSeed(groups, id === 'kappa-gap' ? CANDIDATE_KAPPA : fact.measure) ?? [];
    const value = values.length ? sample(values).mean : NaN;
    return { id, value, met: Number.isFinite(value) ? fact.tolerance.holds(value) : undefined };
  });
  return { name, cells, passes: cells.every((c) => c.met === true) };
}

/** The candidates' screens as the Markdown table docs/results.md quotes. */
export function screenTable(screens: readonly CandidateScreen[]): string {
  const head = SEARCH_TARGETS.map((id) => FACTS.find((f) => f.id === id)!.tolerance.text);
  const cell = (c: CandidateScreen['cells'][number]): string => {
    const d = c.id === 'kappa-gap' ? 3 : 1;
    return c.met === undefined ? 'not measured' : `${figure(c.value, d)} ${c.met ? '(met)' : '(**not met**)'}`;
  };
  return [
    `| candidate | ${head.join(' | ')} | passes the screen |`,
    `| --- | ${head.map(() => '---').join(' | ')} | --- |`,
    ...screens.map((s) => `| ${s.name} | ${s.cells.map(cell).join(' | ')} | ${s.passes ? '**yes**' : 'no'} |`),
  ].join('\n');
}

/** A candidate's name: its comparison folder without the `calibration-` prefix. */
export const candidateName = (dir: string): string => path.basename(dir).replace(/^calibration-/, '');

/** The committed candidates of the calibration search, in the order of its selection rule. */
export const CANDIDATES = ['calibration-released', 'calibration-released-t06', 'calibration-confident'] as const;

function main(argv: readonly string[]): void {
  if (argv[0] === '--candidates' && argv.length > 1) {
    const screens = argv.slice(1).map((dir) => screenCandidate(candidateName(dir), readComparison(dir).groups));
    process.stdout.write(screenTable(screens) + '\n');
    return;
  }
  if (argv.length !== 1) {
    process.stderr.write(
      'usage: node dist/scripts/calibration.js <results folder> | --candidates <comparison folder>...\n',
    );
    process.exit(2);
  }
  for (const [regime, rows] of Object.entries(calibrateRegimes(argv[0]!)))
    process.stdout.write(`${regime}\n${calibrationTable(rows)}\n`);
}

if (require.main === module) main(process.argv.slice(2));
