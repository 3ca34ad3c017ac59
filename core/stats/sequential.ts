// Group-sequential boundaries by α-spending (Lan & DeMets 1983): at each look the cumulative
// error α(t) may be spent, t being the information fraction (seeds so far / the last look's seeds).
// The two-sided critical values c_k solve P(no earlier crossing, |Z_k| ≥ c_k) = α(t_k) − α(t_{k−1})
// under H0, where Z_k are the standardized statistics of the looks, corr(Z_i, Z_j) = √(t_i / t_j).
// The probabilities are computed by recursive numerical integration over the looks (Armitage,
// McPherson & Rowe 1969; Jennison & Turnbull 2000, ch. 19): the sub-density of Z_k on the
// continuation region, Simpson's rule on a fine grid. Checked against scipy's multivariate normal
// CDF in test/core/stats/sequential.test.ts.
import { normalCdf, normalPdf, normalQuantile } from './distributions';

/** The α-spending functions corl knows. */
export const SPENDING = ['lan-demets-pocock', 'lan-demets-obrien-fleming'] as const;
export type Spending = (typeof SPENDING)[number];

/**
 * Cumulative two-sided error spent by information fraction t (0 ≤ t ≤ 1):
 * Pocock type α·ln(1 + (e − 1)·t); O'Brien–Fleming type 2 − 2·Φ(z(1 − α/2)/√t).
 */
export function spent(family: Spending, alpha: number, t: number): number {
  if (t <= 0) return 0;
  const f = Math.min(1, t);
  if (family === 'lan-demets-pocock') return alpha * Math.log(1 + (Math.E - 1) * f);
  return 2 - 2 * normalCdf(normalQuantile(1 - alpha / 2) / Math.sqrt(f));
}

/** The boundary of a group-sequential design at its looks. */
export interface Boundary {
  /** Information fraction of each look. */
  readonly fractions: readonly number[];
  /** Cumulative error spent by each look, α(t_k). */
  readonly spent: readonly number[];
  /** Two-sided critical value of |Z| at each look (Infinity where nothing is spent). */
  readonly critical: readonly number[];
  /** Nominal two-sided level of each look, 2·(1 − Φ(c_k)): the error rate a fixed test at that look would use. */
  readonly nominal: readonly number[];
}

/** Grid points of the sub-density on the continuation region (odd, for Simpson's rule). */
const GRID = 2001;
/** The continuation region is integrated over at most ±this many sds (the mass beyond is < 1e-30). */
const FAR = 12;

/** Simpson weights for m (odd) equally spaced points with spacing h. */
function simpson(m: number, h: number): Float64Array {
  const w = new Float64Array(m);
  for (let i = 0; i < m; i++) w[i] = ((i === 0 || i === m - 1 ? 1 : i % 2 === 1 ? 4 : 2) * h) / 3;
  return w;
}

/** The sub-density of Z_k on its continuation region, on a grid with Simpson weights. */
interface SubDensity {
  readonly z: Float64Array;
  /** density × Simpson weight at each grid point */
  readonly mass: Float64Array;
}

/**
 * Critical values for looks at information fractions `fractions` (increasing, in (0, 1]) with
 * two-sided error `alpha` spent by `family`. A look where nothing more is spent gets Infinity.
 */
export function boundary(family: Spending, alpha: number, fractions: readonly number[]): Boundary {
  fractions.forEach((t, k) => {
    if (!(t > 0 && t <= 1) || (k > 0 && !(t > fractions[k - 1]!)))
      throw new RangeError(`expected increasing information fractions in (0, 1], got ${fractions.join(', ')}`);
  });
  const cumulative = fractions.map((t) => spent(family, alpha, t));
  const critical: number[] = [];
  let density: SubDensity | undefined;
  for (let k = 0; k < fractions.length; k++) {
    const target = cumulative[k]! - (k > 0 ? cumulative[k - 1]! : 0);
    const t = fractions[k]!;
    let c: number;
    if (!density) c = target > 0 ? normalQuantile(1 - target / 2) : Infinity;
    else {
      const prev = density;
      const tp = fractions[k - 1]!;
      const cross = (x: number): number => crossing(prev, tp, t, x);
      c = target > 0 ? solveDecreasing(cross, target) : Infinity;
    }
    critical.push(c);
    density = density ? convolve(density, fractions[k - 1]!, t, c) : first(c);
  }
  return {
    fractions: [...fractions],
    spent: cumulative,
    critical,
    nominal: critical.map((c) => (Number.isFinite(c) ? 2 * normalCdf(-c) : 0)),
  };
}

/** Z_1's density on (−c, c). */
function first(c: number): SubDensity {
  const e = Math.min(c, FAR);
  const h = (2 * e) / (GRID - 1);
  const w = simpson(GRID, h);
  const z = new Float64Array(GRID);
  const mass = new Float64Array(GRID);
  for (let i = 0; i < GRID; i++) {
    z[i] = -e + i * h;
    mass[i] = w[i]! * normalPdf(z[i]!);
  }
  return { z, mass };
}

/** P(|Z_k| ≥ c, no earlier crossing) from the previous look's sub-density (fractions tp < t). */
function crossing(prev: SubDensity, tp: number, t: number, c: number): number {
  const sd = Math.sqrt(t - tp);
  const st = Math.sqrt(t);
  const sp = Math.sqrt(tp);
  let p = 0;
  for (let i = 0; i < prev.z.length; i++) {
    const u = prev.z[i]! * sp;
    p += prev.mass[i]! * (normalCdf((-c * st - u) / sd) + normalCdf((-c * st + u) / sd));
  }
  return p;
}

/** The sub-density of Z_k on (−c, c): Z_k·√t = Z_{k−1}·√tp + N(0, t − tp). */
function convolve(prev: SubDensity, tp: number, t: number, c: number): SubDensity {
  const sd = Math.sqrt(t - tp);
  const st = Math.sqrt(t);
  const sp = Math.sqrt(tp);
  const e = Math.min(c, FAR);
  const h = (2 * e) / (GRID - 1);
  const w = simpson(GRID, h);
  const z = new Float64Array(GRID);
  const mass = new Float64Array(GRID);
  for (let j = 0; j < GRID; j++) {
    z[j] = -e + j * h;
    let d = 0;
    for (let i = 0; i < prev.z.length; i++) d += prev.mass[i]! * normalPdf((z[j]! * st - prev.z[i]! * sp) / sd);
    mass[j] = (w[j]! * d * st) / sd;
  }
  return { z, mass };
}

/** The x ≥ 0 where a decreasing f(x) equals `target` (bisection; f(0) ≥ target is assumed). */
function solveDecreasing(f: (x: number) => number, target: number): number {
  let lo = 0;
  let hi = 1;
  while (f(hi) > target) {
    lo = hi;
    hi *= 2;
    if (hi > 64) return Infinity;
  }
  for (let i = 0; i < 100 && hi - lo > 1e-12; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) > target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
