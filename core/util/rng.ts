// Deterministic randomness for the whole project: nothing in corl draws unseeded random numbers.
// xoshiro128** (Blackman & Vigna), 32-bit state words, seeded through splitmix32.

/** Mix any number of integers (or strings) into one 32-bit seed; order matters. */
export function mixSeed(...parts: (number | string)[]): number {
  let h = 0x9e3779b9 | 0;
  for (const p of parts) {
    if (typeof p === 'string') {
      for (let i = 0; i < p.length; i++) h = splitmix32(h ^ p.charCodeAt(i));
    } else {
      // Fold in both 32-bit halves so large integers (e.g. 2**40 + 1) stay distinct.
      const lo = p | 0;
      const hi = Math.floor(p / 4294967296) | 0;
      h = splitmix32(splitmix32(h ^ lo) ^ hi);
    }
  }
  return h >>> 0;
}

function splitmix32(x: number): number {
  x = (x + 0x9e3779b9) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) | 0;
}

/** A seeded generator whose whole state can be saved and restored (for exact resume). */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    let x = seed | 0;
    x = splitmix32(x);
    this.s0 = x;
    x = splitmix32(x);
    this.s1 = x;
    x = splitmix32(x);
    this.s2 = x;
    x = splitmix32(x);
    this.s3 = x;
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9);
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result >>> 0;
  }

  /** A uniform float in [0, 1) with 53 bits of precision. */
  next(): number {
    const hi = this.nextU32() >>> 5; // 27 bits
    const lo = this.nextU32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A standard normal sample (Box–Muller; one value per call, deterministic). */
  normal(): number {
    let u = this.next();
    while (u === 0) u = this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Fisher–Yates shuffle of a copy. */
  shuffle<T>(items: readonly T[]): T[] {
    const a = items.slice();
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = a[i]!;
      a[i] = a[j]!;
      a[j] = t;
    }
    return a;
  }

  /** The four state words, for checkpoints. */
  getState(): [number, number, number, number] {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }

  /** Restore a state from {@link getState}. */
  setState(state: readonly number[]): void {
    if (state.length !== 4 || state.some((w) => !Number.isInteger(w)))
      throw new TypeError('Rng state must be four integers');
    [this.s0, this.s1, this.s2, this.s3] = state.map((w) => w | 0) as [number, number, number, number];
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
