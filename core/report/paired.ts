// The paired analysis of a comparison: for each named pair of configs (a − b), the primary metric's
// difference seed by seed, its t interval, the seed × problem bootstrap, one of four outcomes, the
// split of its variance into training and evaluation, and the seeds needed to resolve an effect.
// The method is docs/guide/statistics.md's; core/stats holds the numbers.
import * as path from 'node:path';
import { readEvalRows, passOf } from './eval-rows';
import { mixSeed } from '../util/rng';
import { CorlError } from '../errors';
import { hierarchicalBootstrap } from '../stats/bootstrap';
import { outcomeOf, sample, tInterval, tost, type Interval, type Outcome, type Sample } from '../stats/paired';
import { seedsFor, tostPower, tTestPower } from '../stats/power';
import type { ReportGroup } from './html';
import { evalStepFiles } from './markdown';
import { valueAt, type RunSummary } from './runs';
import { mean } from '../util/mean';

/** The primary metrics a comparison can declare: final average pass@1, or its change from step 0. */
export const PRIMARY_METRICS = ['final', 'change'] as const;
export type PrimaryMetric = (typeof PRIMARY_METRICS)[number];

/** What each primary metric is, in words. */
export const PRIMARY_TEXT: Readonly<Record<PrimaryMetric, string>> = {
  final: 'average pass@1 over agents at the last evaluation',
  change: 'change of average pass@1 over agents, last evaluation minus step 0',
};

/** A named pair: the difference a − b is analysed. */
export interface PairSpec {
  readonly a: string;
  readonly b: string;
  /** 'primary' or 'secondary' when a plan names it. */
  readonly role?: string;
}

/** How to decide: the error rate of this analysis and, optionally, an equivalence margin. */
export interface Decision {
  /** Two-sided error rate of the interval that decides (a look's nominal level under a sequential plan). */
  readonly alpha: number;
  /** Equivalence margin in points (TOST), when given. */
  readonly margin?: number;
  /** The effect (points) whose seeds needed are reported (default: the margin, else 2). */
  readonly effect?: number;
  /** Target power of "seeds needed" (default 0.8). */
  readonly power?: number;
  /** Error rate the seeds needed are computed for (default: alpha). */
  readonly plannedAlpha?: number;
  /** Bootstrap resamples (default 10000; 0: no bootstrap). */
  readonly resamples?: number;
  /** Only these seed indices (a look's seeds); default every seed both configs finished. */
  readonly seeds?: readonly number[];
}

/** One seed of a pair, in points. */
export interface SeedDifference {
  /** The seed index i (runs seed-i). */
  readonly index: number;
  readonly a: number;
  readonly b: number;
  readonly diff: number;
  /** Variance of `diff` that comes from evaluation sampling alone (points²), when the eval rows allow it. */
  readonly evalVariance?: number;
}

/** The variance of the per-seed difference, split into what evaluation sampling and training contribute (points²). */
export interface VarianceSplit {
  /** Sample variance of the per-seed differences. */
  readonly total: number;
  /** Mean over seeds of the evaluation-sampling variance of a seed's difference. */
  readonly evaluation: number;
  /** total − evaluation (0 when evaluation alone explains more than was observed). */
  readonly training: number;
}

/** Seeds per config needed at the observed sd (fixed-sample design, two-sided, at `power`). */
export interface SeedsNeeded {
  /** The effect size in points. */
  readonly effect: number;
  readonly power: number;
  /** To tell a difference of `effect` from 0 (paired t test). */
  readonly difference: number;
  /** To show equivalence within ±margin when the true difference is 0 (TOST), when a margin is given. */
  readonly equivalence?: number;
}

/** The analysis of one pair. */
export interface PairResult {
  readonly a: string;
  readonly b: string;
  readonly role?: string;
  readonly metric: PrimaryMetric;
  readonly seeds: readonly SeedDifference[];
  /** Seed indices one config finished and the other did not (left out of the pair). */
  readonly unpaired: readonly string[];
  readonly n: number;
  /** Mean difference in points. */
  readonly mean: number;
  /** Sample sd of the per-seed differences in points (NaN under 2 seeds). */
  readonly sd: number;
  /** The error rate that decided (interval coverage 1 − alpha). */
  readonly alpha: number;
  readonly t?: Interval;
  readonly bootstrap?: Interval;
  readonly margin?: number;
  /** The interval of coverage 1 − 2·alpha that TOST reads, when a margin is given. */
  readonly tost?: Interval;
  readonly outcome: Outcome;
  readonly variance?: VarianceSplit;
  readonly seedsNeeded?: SeedsNeeded;
  /** Problems per seed behind the bootstrap (undefined when the eval rows are missing). */
  readonly problems?: number;
}

/** Each config against the first, or against each of `against` (configs not named there). */
export function defaultPairs(names: readonly string[], against?: readonly string[]): PairSpec[] {
  if (against?.length) {
    for (const b of against)
      if (!names.includes(b))
        throw new CorlError('CORL_ERR_CLI_USAGE', `expected --against to name configs of the comparison, got "${b}"`, {
          where: '--against',
          hint: `the configs are: ${names.join(', ')}`,
        });
    return names.filter((a) => !against.includes(a)).flatMap((a) => against.map((b) => ({ a, b })));
  }
  return names.slice(1).map((a) => ({ a, b: names[0]! }));
}

/** The seed index of a run: its folder seed-<i>, else undefined. */
export function seedIndex(run: RunSummary): number | undefined {
  const m = /^seed-(\d+)$/.exec(path.basename(run.dir));
  return m ? Number(m[1]) : undefined;
}

/** A run's primary metric in points, from its metrics records. */
export function primaryValue(run: RunSummary, metric: PrimaryMetric): number {
  const last = lastEvalStep(run);
  if (last === undefined) return NaN;
  let s = 0;
  for (let i = 0; i < run.agents.length; i++) {
    const end = valueAt(run.records, 'eval/accuracy', i, last) ?? NaN;
    s += metric === 'final' ? end : end - (valueAt(run.records, 'eval/accuracy', i, 0) ?? NaN);
  }
  return (100 * s) / run.agents.length;
}

function lastEvalStep(run: RunSummary): number | undefined {
  const steps = run.records
    .filter((r) => r.phase === 'eval' && r.metrics['eval/accuracy'] !== undefined)
    .map((r) => r.step);
  return steps.length ? Math.max(...steps) : undefined;
}

/** One step's eval rows of a run: per problem id, the share right of each agent's samples and the sample count. */
interface StepRows {
  /** problem id → per-agent pass@1 of that problem (agents in order). */
  readonly pass: ReadonlyMap<string, readonly number[]>;
  /** Evaluation-sampling variance of the run's average pass@1 at this step (shares²), when every row has ≥ 2 samples. */
  readonly variance?: number;
  /** The rows' text, to tell identical step-0 evaluations apart from different ones. */
  readonly fingerprint: string;
}

function readStepRows(file: string, agents: number): StepRows {
  const byId = new Map<string, number[]>();
  const counts = new Map<string, number[]>();
  const lines: string[] = [];
  for (const r of readEvalRows(file)) {
    if (r.id === undefined || !r.correct.length) continue;
    const pass = byId.get(r.id) ?? Array<number>(agents).fill(NaN);
    const k = counts.get(r.id) ?? Array<number>(agents).fill(0);
    pass[r.agent] = passOf(r);
    k[r.agent] = r.correct.length;
    byId.set(r.id, pass);
    counts.set(r.id, k);
    lines.push(`${r.agent}:${r.id}:${r.correct.map((c) => (c ? 1 : 0)).join('')}`);
  }
  // Var of the run's average = Σ_agents Σ_problems p̂(1 − p̂)/(K − 1) / (A·P)², p̂(1 − p̂)/(K − 1) being
  // the unbiased estimate of the variance of a problem's pass@1 over K samples.
  let v = 0;
  let ok = true;
  let problems = 0;
  for (const [id, pass] of byId) {
    if (pass.some((p) => !Number.isFinite(p))) continue;
    problems++;
    pass.forEach((p, a) => {
      const k = counts.get(id)![a]!;
      if (k < 2) ok = false;
      else v += (p * (1 - p)) / (k - 1);
    });
  }
  return {
    pass: byId,
    variance: ok && problems ? v / (agents * problems) ** 2 : undefined,
    fingerprint: lines.sort().join('\n'),
  };
}

/** A run's step-0 and last-evaluation rows, cached per run folder while one analysis runs. */
interface RunRows {
  readonly start?: StepRows;
  readonly end?: StepRows;
}

function runRows(run: RunSummary, cache: Map<string, RunRows>): RunRows {
  const hit = cache.get(run.dir);
  if (hit) return hit;
  const files = evalStepFiles(run.dir);
  const last = lastEvalStep(run);
  const agents = run.agents.length;
  const rows: RunRows = {
    start: files.has(0) ? readStepRows(files.get(0)!, agents) : undefined,
    end: last !== undefined && files.has(last) ? readStepRows(files.get(last)!, agents) : undefined,
  };
  cache.set(run.dir, rows);
  return rows;
}

/** Per-problem value of a run in points: mean over agents of the end pass@1 (minus the start one for 'change'). */
function problemValues(rows: RunRows, metric: PrimaryMetric): Map<string, number> | undefined {
  if (!rows.end || (metric === 'change' && !rows.start)) return undefined;
  const out = new Map<string, number>();
  for (const [id, end] of rows.end.pass) {
    const start = rows.start?.pass.get(id);
    if (metric === 'change' && !start) continue;
    const v = end.reduce((s, p, a) => s + p - (metric === 'change' ? start![a]! : 0), 0) / end.length;
    if (Number.isFinite(v)) out.set(id, 100 * v);
  }
  return out;
}

/** Evaluation variance (points²) of one seed's difference; identical step-0 rows cancel. */
function diffEvalVariance(ra: RunRows, rb: RunRows, metric: PrimaryMetric): number | undefined {
  const ends = [ra.end?.variance, rb.end?.variance];
  if (ends.some((v) => v === undefined)) return undefined;
  let v = ends[0]! + ends[1]!;
  if (metric === 'change') {
    if (ra.start?.variance === undefined || rb.start?.variance === undefined) return undefined;
    if (ra.start.fingerprint !== rb.start.fingerprint) v += ra.start.variance + rb.start.variance;
  }
  return 1e4 * v;
}

/** Analyse the named pairs of a comparison's groups (finished runs, paired by seed index). */
export function analysePairs(
  groups: readonly ReportGroup[],
  pairs: readonly PairSpec[],
  metric: PrimaryMetric,
  decision: Decision,
): PairResult[] {
  const cache = new Map<string, RunRows>();
  return pairs.map((p) => analysePair(groups, p, metric, decision, cache));
}

function runsByIndex(groups: readonly ReportGroup[], name: string): Map<number, RunSummary> {
  const g = groups.find((x) => x.name === name);
  const out = new Map<number, RunSummary>();
  for (const r of g?.runs ?? []) {
    const i = seedIndex(r);
    if (i !== undefined) out.set(i, r);
  }
  return out;
}

function analysePair(
  groups: readonly ReportGroup[],
  p: PairSpec,
  metric: PrimaryMetric,
  d: Decision,
  cache: Map<string, RunRows>,
): PairResult {
  const A = runsByIndex(groups, p.a);
  const B = runsByIndex(groups, p.b);
  const wanted = d.seeds ? new Set(d.seeds) : undefined;
  const indices = [...new Set([...A.keys(), ...B.keys()])]
    .filter((i) => !wanted || wanted.has(i))
    .sort((x, y) => x - y);
  const seeds: SeedDifference[] = [];
  const unpaired: string[] = [];
  const perProblem: number[][] = [];
  let rowsComplete = true;
  for (const i of indices) {
    const ra = A.get(i);
    const rb = B.get(i);
    if (!ra || !rb) {
      unpaired.push(`${ra ? p.b : p.a}/seed-${i}`);
      continue;
    }
    const a = primaryValue(ra, metric);
    const b = primaryValue(rb, metric);
    const rowsA = runRows(ra, cache);
    const rowsB = runRows(rb, cache);
    const evalVariance = diffEvalVariance(rowsA, rowsB, metric);
    seeds.push({ index: i, a, b, diff: a - b, ...(evalVariance !== undefined ? { evalVariance } : {}) });
    const va = problemValues(rowsA, metric);
    const vb = problemValues(rowsB, metric);
    if (!va || !vb) rowsComplete = false;
    else perProblem.push([...va].filter(([id]) => vb.has(id)).map(([id, x]) => x - vb.get(id)!));
  }
  const s = sample(seeds.map((x) => x.diff).filter(Number.isFinite));
  const margin = d.margin !== undefined && d.margin > 0 ? d.margin : undefined;
  const bootstrap =
    rowsComplete && perProblem.length >= 2 && d.resamples !== 0
      ? hierarchicalBootstrap(perProblem, {
          alpha: d.alpha,
          resamples: d.resamples,
          seed: mixSeed('corl bootstrap', p.a, p.b, metric, ...seeds.map((x) => x.index)),
        })
      : undefined;
  const evalVars = seeds.map((x) => x.evalVariance);
  const variance =
    s.n >= 2 && evalVars.every((v): v is number => v !== undefined) ? split(s.sd ** 2, mean(evalVars, NaN)) : undefined;
  return {
    ...pairHead(p, metric, seeds, unpaired, s, d.alpha),
    ...(bootstrap ? { bootstrap } : {}),
    ...(margin !== undefined ? { margin } : {}),
    ...(margin !== undefined && s.n >= 2 ? { tost: tost(s, margin, d.alpha)!.interval } : {}),
    outcome: outcomeOf(s, d.alpha, margin),
    ...(variance ? { variance } : {}),
    ...(s.n >= 2 ? { seedsNeeded: seedsNeeded(s.sd, margin, d) } : {}),
    ...(rowsComplete && perProblem.length ? { problems: Math.min(...perProblem.map((x) => x.length)) } : {}),
  };
}

/** What every pair result starts with: the pair, its seeds, and the mean and t interval of their differences. */
function pairHead(
  p: PairSpec,
  metric: PrimaryMetric,
  seeds: readonly SeedDifference[],
  unpaired: readonly string[],
  s: Sample,
  alpha: number,
): Pick<PairResult, 'a' | 'b' | 'role' | 'metric' | 'seeds' | 'unpaired' | 'n' | 'mean' | 'sd' | 'alpha' | 't'> {
  const t = tInterval(s, alpha);
  return {
    a: p.a,
    b: p.b,
    ...(p.role ? { role: p.role } : {}),
    metric,
    seeds,
    unpaired,
    n: s.n,
    mean: s.mean,
    sd: s.sd,
    alpha,
    ...(t ? { t } : {}),
  };
}

function split(total: number, evaluation: number): VarianceSplit {
  return { total, evaluation, training: Math.max(0, total - evaluation) };
}

function seedsNeeded(sd: number, margin: number | undefined, d: Decision): SeedsNeeded {
  const effect = d.effect ?? margin ?? 2;
  const power = d.power ?? 0.8;
  const alpha = d.plannedAlpha ?? d.alpha;
  return {
    effect,
    power,
    difference: seedsFor((n) => tTestPower(n, effect, sd, alpha), power),
    ...(margin !== undefined ? { equivalence: seedsFor((n) => tostPower(n, margin, sd, alpha), power) } : {}),
  };
}

/**
 * A pair decided from per-seed values alone (points, by seed index), as verdicts.json keeps them:
 * the t interval and outcome at `alpha`, without bootstrap or variance split (those need the rows).
 */
export function pairFromValues(
  p: PairSpec,
  metric: PrimaryMetric,
  a: Readonly<Record<string, number>>,
  b: Readonly<Record<string, number>>,
  alpha: number,
  margin?: number,
): PairResult {
  const indices = [...new Set([...Object.keys(a), ...Object.keys(b)])].map(Number).sort((x, y) => x - y);
  const seeds: SeedDifference[] = [];
  const unpaired: string[] = [];
  for (const i of indices) {
    const x = a[String(i)];
    const y = b[String(i)];
    if (x === undefined || y === undefined) unpaired.push(`${x === undefined ? p.a : p.b}/seed-${i}`);
    else seeds.push({ index: i, a: x, b: y, diff: x - y });
  }
  const s = sample(seeds.map((x) => x.diff));
  return {
    ...pairHead(p, metric, seeds, unpaired, s, alpha),
    ...(margin !== undefined ? { margin } : {}),
    outcome: outcomeOf(s, alpha, margin),
  };
}
