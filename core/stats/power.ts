// Seeds needed: the power of the paired t test and of TOST over n seeds, computed exactly by
// integrating over the distribution of the sample sd (s/σ = W/√ν, W² ~ χ²_ν), and the smallest n
// reaching a target power. Checked against scipy's noncentral t in test/core/stats/power.test.ts.
import { logGamma, normalCdf, studentTQuantile } from './distributions';

/**
 * ∫ g(s/σ) over the distribution of the sample sd's ratio to σ with ν degrees of freedom (Simpson's
 * rule), g being 0 above `maxRatio` (so that a kink there does not cost accuracy).
 */
function overSampleSd(nu: number, g: (ratio: number) => number, maxRatio = Infinity): number {
  const centre = Math.sqrt(nu);
  const lo = Math.max(0, centre - 12);
  const hi = Math.min(centre + 12, maxRatio * centre);
  if (hi <= lo) return 0;
  const steps = 4000;
  const h = (hi - lo) / steps;
  const logNorm = (nu / 2 - 1) * Math.log(2) + logGamma(nu / 2);
  let total = 0;
  for (let i = 0; i <= steps; i++) {
    const w = lo + i * h;
    const density =
      w === 0 ? (nu === 1 ? Math.exp(-logNorm) : 0) : Math.exp((nu - 1) * Math.log(w) - (w * w) / 2 - logNorm);
    const weight = i === 0 || i === steps ? 1 : i % 2 === 1 ? 4 : 2;
    total += weight * density * g(w / centre);
  }
  return (total * h) / 3;
}

/**
 * Power of the two-sided one-sample (paired) t test at level `alpha` over `n` differences whose
 * true mean is `effect` and true sd `sd`: P(|T| > t(1 − alpha/2, n − 1)).
 */
export function tTestPower(n: number, effect: number, sd: number, alpha: number): number {
  if (n < 2) return NaN;
  const nu = n - 1;
  const c = studentTQuantile(1 - alpha / 2, nu);
  if (sd === 0) return effect === 0 ? alpha : 1;
  const lambda = (Math.abs(effect) * Math.sqrt(n)) / sd;
  return overSampleSd(nu, (r) => normalCdf(lambda - c * r) + normalCdf(-lambda - c * r));
}

/**
 * Power of TOST (equivalence within ±margin, each one-sided test at `alpha`) over `n` differences
 * whose true mean is `effect` and true sd `sd`: the chance that the interval of coverage
 * 1 − 2·alpha lies inside (−margin, +margin).
 */
export function tostPower(n: number, margin: number, sd: number, alpha: number, effect = 0): number {
  if (n < 2) return NaN;
  const nu = n - 1;
  const c = studentTQuantile(1 - alpha, nu);
  if (sd === 0) return Math.abs(effect) < margin ? 1 : 0;
  const scale = sd / Math.sqrt(n);
  return overSampleSd(
    nu,
    (r) => {
      const half = margin - c * r * scale;
      return half <= 0 ? 0 : Math.max(0, normalCdf((half - effect) / scale) - normalCdf((-half - effect) / scale));
    },
    margin / (c * scale),
  );
}

/**
 * The smallest number of seeds n ≥ 2 at which `power(n)` reaches `target` (power grows with n);
 * Infinity when no n up to `cap` does.
 */
export function seedsFor(power: (n: number) => number, target = 0.8, cap = 100000): number {
  if (power(2) >= target) return 2;
  let lo = 2;
  let hi = 4;
  while (power(hi) < target) {
    lo = hi;
    hi *= 2;
    if (hi > cap) return power(cap) >= target ? seedsBetween(power, target, lo, cap) : Infinity;
  }
  return seedsBetween(power, target, lo, hi);
}

/** Bisection: power(lo) < target ≤ power(hi). */
function seedsBetween(power: (n: number) => number, target: number, lo: number, hi: number): number {
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (power(mid) >= target) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** How long a paired difference takes to resolve on a machine: seeds needed and their wall time. */
export interface DecisionTime {
  /** Seeds per config for the paired t test to detect `effect` at the target power. */
  readonly seeds: number;
  /** seeds × minutes per seed of the pair (both configs of one seed index). */
  readonly minutes: number;
}

/**
 * Seeds per config that resolve a true difference `effect` (points) with per-seed sd `sd` at
 * two-sided level `alpha` and power `target` (the exact paired t power of `tTestPower`), and the
 * minutes they take at `minutesPerSeed` (wall minutes to run one seed of both configs).
 */
export function decisionTime(
  effect: number,
  sd: number,
  alpha: number,
  minutesPerSeed: number,
  target = 0.8,
): DecisionTime {
  const seeds = seedsFor((n) => tTestPower(n, effect, sd, alpha), target);
  return { seeds, minutes: seeds * minutesPerSeed };
}
