// Variance levers of a paired comparison, measured on the runs it already has: common random numbers
// (a pair at one seed index against independent runs), the step-0 score as a covariate (final,
// change, ANCOVA), and the held-out size and samples per problem (the components of the per-seed
// variance, s²(n, K) = A + B/n + C/(n·K), fitted to subsamples of the evaluation rows). Pure numbers:
// bench/noise.ts reads the runs. The statistics guide ("Less noise per seed") says when each is valid.
import { mean } from '../util/mean';

/** One run's primary scores, in points: its last evaluation and its step-0 evaluation. */
export interface RunScore {
  readonly final: number;
  readonly start: number;
}

/** Per-seed sd (points) of a pair's difference under one design, and its degrees of freedom. */
export interface LeverSd {
  readonly sd: number;
  readonly df: number;
}

/** The six designs of a pair on the same runs. */
export interface PairLevers {
  /** Paired by seed index (common random numbers). */
  readonly paired: { readonly final: LeverSd; readonly change: LeverSd; readonly ancova: LeverSd & { slope: number } };
  /** As if the two configs' runs shared no random numbers: two independent samples of runs. */
  readonly independent: {
    readonly final: LeverSd;
    readonly change: LeverSd;
    readonly ancova: LeverSd & { slope: number };
  };
  /** Correlation over seeds of the two configs' final scores at one seed index. */
  readonly correlation: number;
  readonly seeds: number;
}

/** Sample variance (n − 1); NaN below two values. */
export function variance(xs: readonly number[]): number {
  if (xs.length < 2) return NaN;
  const m = mean(xs, NaN);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
}

function crossSum(x: readonly number[], y: readonly number[]): number {
  const mx = mean(x, NaN);
  const my = mean(y, NaN);
  return x.reduce((s, xi, i) => s + (xi - mx) * (y[i]! - my), 0);
}

/**
 * Least-squares line of `y` on `x`: its slope and residual variance (n − 2 degrees of freedom). A
 * covariate that never varies has slope 0 and leaves the variance of `y` (n − 1 degrees of freedom).
 */
export function regression(
  y: readonly number[],
  x: readonly number[],
): { slope: number; residual: number; df: number } {
  const sxx = crossSum(x, x);
  if (!(sxx > 1e-12)) return { slope: 0, residual: variance(y), df: y.length - 1 };
  const slope = crossSum(x, y) / sxx;
  const residual = (crossSum(y, y) - slope * slope * sxx) / (y.length - 2);
  return { slope, residual: Math.max(0, residual), df: y.length - 2 };
}

/**
 * The designs of the pair a − b over the same seed indices (`a[i]` and `b[i]` ran at one seed):
 * - paired: d = a − b seed by seed, of `final` and of `change` (final − start); ANCOVA regresses d
 *   on the seed's mean step-0 score (the covariate both configs share when their step-0 rows are
 *   identical) and keeps the residual sd;
 * - independent: the sd of a difference of two runs that share nothing, √(s²_a + s²_b), of `final`
 *   and of `change`; ANCOVA is the two-sample one, the slope of final on start pooled within
 *   configs, per-seed sd √(2 · pooled residual variance).
 */
export function pairLevers(a: readonly RunScore[], b: readonly RunScore[]): PairLevers {
  if (a.length !== b.length || a.length < 3)
    throw new RangeError(`expected the same seeds of both configs, at least 3, got ${a.length} and ${b.length}`);
  const n = a.length;
  const fa = a.map((r) => r.final);
  const fb = b.map((r) => r.final);
  const ca = a.map((r) => r.final - r.start);
  const cb = b.map((r) => r.final - r.start);
  const d = fa.map((x, i) => x - fb[i]!);
  const dc = ca.map((x, i) => x - cb[i]!);
  const cov = a.map((r, i) => (r.start + b[i]!.start) / 2);
  const adj = regression(d, cov);
  const sa = a.map((r) => r.start);
  const sb = b.map((r) => r.start);
  const sxx = crossSum(sa, sa) + crossSum(sb, sb);
  const slope = sxx > 1e-12 ? (crossSum(sa, fa) + crossSum(sb, fb)) / sxx : 0;
  const res = [...fa.map((y, i) => y - slope * sa[i]!), ...fb.map((y, i) => y - slope * sb[i]!)];
  const resA = res.slice(0, n);
  const resB = res.slice(n);
  const ssr = crossSum(resA, resA) + crossSum(resB, resB);
  const dfPooled = 2 * n - 2 - (sxx > 1e-12 ? 1 : 0);
  const corr = crossSum(fa, fb) / Math.sqrt(crossSum(fa, fa) * crossSum(fb, fb));
  return {
    paired: {
      final: { sd: Math.sqrt(variance(d)), df: n - 1 },
      change: { sd: Math.sqrt(variance(dc)), df: n - 1 },
      ancova: { sd: Math.sqrt(adj.residual), df: adj.df, slope: adj.slope },
    },
    independent: {
      final: { sd: Math.sqrt(variance(fa) + variance(fb)), df: 2 * n - 2 },
      change: { sd: Math.sqrt(variance(ca) + variance(cb)), df: 2 * n - 2 },
      ancova: { sd: Math.sqrt((2 * ssr) / dfPooled), df: dfPooled, slope },
    },
    correlation: corr,
    seeds: n,
  };
}

/** A measured per-seed variance of a difference at `n` problems and `K` samples per problem. */
export interface GridPoint {
  readonly n: number;
  readonly K: number;
  readonly variance: number;
}

/** s²(n, K) = A + B/n + C/(n·K): A common training variation, B per-problem training, C sampling. */
export interface Components {
  readonly A: number;
  readonly B: number;
  readonly C: number;
}

/**
 * Least-squares fit of the components to the grid in relative terms: it minimises the sum of
 * ((fit − v) / v)², so the small variances of large sets weigh as much as the large ones of small sets.
 */
export function fitComponents(points: readonly GridPoint[]): Components {
  const rows = points.map((p) => [1, 1 / p.n, 1 / (p.n * p.K)].map((x) => x / p.variance));
  const m = [0, 1, 2].map((i) => [0, 1, 2].map((j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)));
  const v = [0, 1, 2].map((i) => rows.reduce((s, r) => s + r[i]!, 0));
  const [A, B, C] = solve3(m, v);
  return { A: A!, B: B!, C: C! };
}

/** The fitted variance at `n` problems and `K` samples (never below 0). */
export function varianceAt(c: Components, n: number, K: number): number {
  return Math.max(0, c.A + c.B / n + c.C / (n * K));
}

/** Gaussian elimination with partial pivoting of a 3 × 3 system. */
function solve3(m: number[][], v: number[]): number[] {
  const a = m.map((row, i) => [...row, v[i]!]);
  for (let c = 0; c < 3; c++) {
    let p = c;
    for (let r = c + 1; r < 3; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    [a[c], a[p]] = [a[p]!, a[c]!];
    if (Math.abs(a[c]![c]!) < 1e-300)
      throw new RangeError('expected a grid of at least three distinct (n, n·K) points');
    for (let r = 0; r < 3; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k < 4; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  return [0, 1, 2].map((i) => a[i]![3]! / a[i]![i]!);
}

/**
 * A run's mean pass@1 (points) over `problems` (indices into `rows`, each row one problem's samples
 * of one agent, `agents` rows per problem index: rows[p][agent]) with the first `K` samples of each.
 */
export function subsampleScore(
  rows: readonly (readonly (readonly boolean[])[])[],
  problems: readonly number[],
  K: number,
): number {
  let total = 0;
  let count = 0;
  for (const p of problems)
    for (const samples of rows[p]!) {
      let right = 0;
      for (let k = 0; k < K; k++) if (samples[k] === true) right++;
      total += right / K;
      count++;
    }
  return (100 * total) / count;
}
