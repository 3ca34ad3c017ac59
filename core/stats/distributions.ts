// The normal and Student t distributions in double precision, for the intervals, tests and
// group-sequential boundaries of docs/guide/statistics.md. Checked against scipy in
// test/core/stats/distributions.test.ts.

/** Standard normal density φ(x). */
export function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
}

/**
 * Standard normal CDF Φ(x): Hart's double-precision rational approximation as given by G. West,
 * "Better approximations to cumulative normal functions" (2005) for |x| < 3, the tail's
 * continued fraction beyond (60 terms): relative error ~1e-15 in both tails.
 */
export function normalCdf(x: number): number {
  const ax = Math.abs(x);
  let c: number;
  if (ax > 37) c = 0;
  else {
    const e = Math.exp(-0.5 * ax * ax);
    if (ax < 3) {
      let n = 0.0352624965998911 * ax + 0.700383064443688;
      n = n * ax + 6.37396220353165;
      n = n * ax + 33.912866078383;
      n = n * ax + 112.079291497871;
      n = n * ax + 221.213596169931;
      n = n * ax + 220.206867912376;
      let d = 0.0883883476483184 * ax + 1.75566716318264;
      d = d * ax + 16.064177579207;
      d = d * ax + 86.7807322029461;
      d = d * ax + 296.564248779674;
      d = d * ax + 637.333633378831;
      d = d * ax + 793.826512519948;
      d = d * ax + 440.413735824752;
      c = (e * n) / d;
    } else {
      // the tail's continued fraction φ(x) / (x + 1/(x + 2/(x + 3/(x + …)))), 60 terms deep
      let b = ax;
      for (let k = 60; k >= 1; k--) b = ax + k / b;
      c = e / b / Math.sqrt(2 * Math.PI);
    }
  }
  return x > 0 ? 1 - c : c;
}

/** Upper tail 1 − Φ(x), without the cancellation of `1 − normalCdf(x)` for large x. */
export function normalSf(x: number): number {
  return normalCdf(-x);
}

/**
 * Standard normal quantile Φ⁻¹(p): Wichura's AS 241 (PPND16, relative error ~1e-16), then one
 * Newton step on {@link normalCdf}.
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const q = p - 0.5;
  let x: number;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    x =
      (q *
        (((((((r * 2509.0809287301227 + 33430.57558358813) * r + 67265.7709270087) * r + 45921.95393154987) * r +
          13731.69376550946) *
          r +
          1971.5909503065513) *
          r +
          133.14166789178438) *
          r +
          3.3871328727963665)) /
      (((((((r * 5226.495278852546 + 28729.085735721943) * r + 39307.89580009271) * r + 21213.794301586597) * r +
        5394.196021424751) *
        r +
        687.1870074920579) *
        r +
        42.31333070160091) *
        r +
        1);
  } else {
    let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
    if (r <= 5) {
      r -= 1.6;
      x =
        (((((((r * 0.0007745450142783414 + 0.022723844989269184) * r + 0.2417807251774506) * r + 1.2704582524523684) *
          r +
          3.6478483247632045) *
          r +
          5.769497221460691) *
          r +
          4.630337846156546) *
          r +
          1.4234371107496835) /
        (((((((r * 1.0507500716444169e-9 + 0.0005475938084995345) * r + 0.015198666563616457) * r +
          0.14810397642748008) *
          r +
          0.6897673349851) *
          r +
          1.6763848301838038) *
          r +
          2.053191626637759) *
          r +
          1);
    } else {
      r -= 5;
      x =
        (((((((r * 2.0103343992922881e-7 + 0.000027115555687434876) * r + 0.0012426609473880784) * r +
          0.026532189526576124) *
          r +
          0.29656057182850487) *
          r +
          1.7848265399172913) *
          r +
          5.463784911164114) *
          r +
          6.657904643501103) /
        (((((((r * 2.0442631033899397e-15 + 1.421511758316446e-7) * r + 0.000018463183175100548) * r +
          0.0007868691311456133) *
          r +
          0.014875361290850615) *
          r +
          0.1369298809227358) *
          r +
          0.599832206555888) *
          r +
          1);
    }
    if (q < 0) x = -x;
  }
  // one Newton step against the CDF (harmless where AS 241 is already exact)
  const d = normalPdf(x);
  if (d > 1e-300 && Math.abs(q) < 0.49) x -= (normalCdf(x) - p) / d;
  return x;
}

const LANCZOS = [
  0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.6150291621406, 12.507343278686905,
  -0.13857109526572012, 0.000009984369578019572, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (Lanczos, g = 7: relative error ~1e-15). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-16) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(x, a, b)) / a : 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** Student t density with `df` degrees of freedom. */
export function studentTPdf(t: number, df: number): number {
  return Math.exp(
    logGamma((df + 1) / 2) -
      logGamma(df / 2) -
      0.5 * Math.log(df * Math.PI) -
      ((df + 1) / 2) * Math.log1p((t * t) / df),
  );
}

/** Upper tail P(T > t) of Student t for t ≥ 0, without the cancellation of 1 − CDF. */
function studentTTail(t: number, df: number): number {
  return 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
}

/** Student t CDF with `df` (> 0) degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  if (Number.isNaN(t)) return NaN;
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  // the tail beyond |t| is I_x(df/2, 1/2)/2 with x = df/(df + t²)
  const tail = studentTTail(Math.abs(t), df);
  return t > 0 ? 1 - tail : tail;
}

/** Student t quantile: the t with CDF p, for 0 ≤ p ≤ 1 and df > 0 (Newton on the tail, bracketed). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p >= 0 && p <= 1) || !(df > 0)) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  // solve P(T > t) = the smaller tail (1 − p is exact for p ≥ 0.5), then restore the sign
  const tail = Math.min(p, 1 - p);
  const sign = p < 0.5 ? -1 : 1;
  let lo = 0;
  let hi = Math.max(1, -normalQuantile(tail));
  while (studentTTail(hi, df) > tail) {
    lo = hi;
    hi *= 2;
    if (!Number.isFinite(hi)) return sign * Infinity;
  }
  let t = (lo + hi) / 2;
  for (let i = 0; i < 400; i++) {
    const f = studentTTail(t, df) - tail;
    if (f < 0) hi = t;
    else lo = t;
    const d = studentTPdf(t, df);
    let next = d > 0 ? t + f / d : NaN;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (Math.abs(next - t) <= 1e-15 * Math.max(1, Math.abs(t))) return sign * next;
    t = next;
  }
  return sign * t;
}
