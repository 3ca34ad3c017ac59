// A paired difference over seeds: its mean, t interval, equivalence test (TOST) and one of four
// outcomes. The method is docs/guide/statistics.md's; the numbers are checked against scipy in
// test/core/stats/paired.test.ts.
import { studentTQuantile } from './distributions';
import { mean } from '../util/mean';

/** One of the four outcomes a comparison can reach. */
export type Outcome = 'ahead' | 'behind' | 'equivalent' | 'inconclusive';

/** A two-sided interval. */
export interface Interval {
  readonly lo: number;
  readonly hi: number;
}

/** Mean, sample sd and standard error of a sample of differences (one per seed). */
export interface Sample {
  readonly n: number;
  readonly mean: number;
  /** Sample standard deviation (n − 1 denominator); NaN for fewer than 2 values. */
  readonly sd: number;
  /** sd/√n; NaN for fewer than 2 values. */
  readonly se: number;
}

/** The mean, sd and standard error of `values` (non-finite values are an error of the caller). */
export function sample(values: readonly number[]): Sample {
  const n = values.length;
  if (n === 0) return { n, mean: NaN, sd: NaN, se: NaN };
  const m = mean(values, NaN);
  if (n < 2) return { n, mean: m, sd: NaN, se: NaN };
  const sd = Math.sqrt(values.reduce((a, b) => a + (b - m) ** 2, 0) / (n - 1));
  return { n, mean: m, sd, se: sd / Math.sqrt(n) };
}

/**
 * The two-sided t interval for the mean of a sample at error rate `alpha` (coverage 1 − alpha):
 * mean ± t(1 − alpha/2, n − 1)·se. Undefined for fewer than 2 values. With sd 0 it is the point.
 */
export function tInterval(s: Sample, alpha: number): Interval | undefined {
  if (s.n < 2 || !Number.isFinite(s.se)) return undefined;
  const half = s.se === 0 ? 0 : studentTQuantile(1 - alpha / 2, s.n - 1) * s.se;
  return { lo: s.mean - half, hi: s.mean + half };
}

/**
 * Two one-sided tests (TOST) of equivalence within ±margin at level `alpha`: both nulls
 * (difference ≤ −margin, difference ≥ +margin) are rejected exactly when the interval of coverage
 * 1 − 2·alpha lies strictly inside (−margin, +margin). Returns that interval and the decision;
 * undefined for fewer than 2 values.
 */
export function tost(
  s: Sample,
  margin: number,
  alpha: number,
): { readonly interval: Interval; readonly equivalent: boolean } | undefined {
  const interval = tInterval(s, 2 * alpha);
  if (!interval) return undefined;
  return { interval, equivalent: interval.lo > -margin && interval.hi < margin };
}

/**
 * The outcome of a paired difference at error rate `alpha`: ahead when the (1 − alpha) interval
 * lies above 0, behind when below 0; otherwise equivalent when a margin is given and TOST at
 * `alpha` rejects both one-sided nulls; otherwise inconclusive (also with fewer than 2 seeds).
 */
export function outcomeOf(s: Sample, alpha: number, margin?: number): Outcome {
  const ci = tInterval(s, alpha);
  if (!ci) return 'inconclusive';
  if (ci.lo > 0) return 'ahead';
  if (ci.hi < 0) return 'behind';
  if (margin !== undefined && margin > 0 && tost(s, margin, alpha)?.equivalent) return 'equivalent';
  return 'inconclusive';
}
