// The hierarchical (seed × problem) percentile bootstrap of a mean difference: resample seeds with
// replacement, then problems with replacement within each resampled seed. Seeded, so every report
// of the same runs prints the same interval. Checked against the bootstrap distribution's exact
// moments in test/core/stats/bootstrap.test.ts.
import { Rng } from '../util/rng';
import type { Interval } from './paired';

/** Options of {@link hierarchicalBootstrap}. */
export interface BootstrapOptions {
  /** Error rate: the interval covers 1 − alpha (its ends are the alpha/2 and 1 − alpha/2 percentiles). */
  readonly alpha: number;
  /** Resamples (default 10000). */
  readonly resamples?: number;
  /** Seed of the resampling (the same seed gives the same interval). */
  readonly seed: number;
}

/**
 * Percentile interval of the mean over seeds of the mean over problems, `values[s][p]` being seed
 * s's difference on problem p (seeds may hold different problem counts). Each resample draws as
 * many seeds as there are, with replacement, and within each drawn seed as many of its problems,
 * with replacement. Undefined with fewer than 2 seeds or a seed without problems.
 */
export function hierarchicalBootstrap(
  values: readonly (readonly number[])[],
  o: BootstrapOptions,
): Interval | undefined {
  if (values.length < 2 || values.some((v) => v.length === 0)) return undefined;
  const means = bootstrapMeans(values, o.resamples ?? 10000, o.seed).sort();
  return { lo: percentile(means, o.alpha / 2), hi: percentile(means, 1 - o.alpha / 2) };
}

/** The `resamples` bootstrap means of {@link hierarchicalBootstrap}, in the order drawn. */
export function bootstrapMeans(values: readonly (readonly number[])[], resamples: number, seed: number): Float64Array {
  const n = values.length;
  const rng = new Rng(seed);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let total = 0;
    for (let i = 0; i < n; i++) {
      const v = values[pick(rng, n)]!;
      const m = v.length;
      let s = 0;
      for (let j = 0; j < m; j++) s += v[pick(rng, m)]!;
      total += s / m;
    }
    means[r] = total / n;
  }
  return means;
}

/** A uniform index in [0, n) from one 32-bit draw (n ≪ 2³²: the bias is below n/2³²). */
function pick(rng: Rng, n: number): number {
  return Math.floor((rng.nextU32() * n) / 4294967296);
}

/** The q-quantile of sorted values, linearly interpolated between order statistics (numpy's default). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}
