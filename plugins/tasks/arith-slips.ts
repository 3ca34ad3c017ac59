// Stochastic step errors ("slips") in the worked solutions of corl:arith's pretraining corpus.
// A slip turns one digit operation of a step into a plausible wrong one; every later step works
// from the written (wrong) numbers, so the chain stays consistent and the boxed answer is the
// chain's last result. A model that fits such a corpus samples scattered wrong answers, which a
// majority vote over its samples can correct. docs/guide/baselines.md ("The two regimes").
import type { Rng } from '../../core/util/rng';
import type { ArithOptions, ArithProblem, ArithStep } from './arith';

/** Probability of a slip at each opportunity, by kind: corl:arith's `pretrain.slips` option. */
export type SlipRates = ArithOptions['pretrain']['slips'];

/** The slip kinds, in a fixed order. */
export const SLIP_KINDS = ['column', 'carry', 'borrow', 'copy'] as const;
export type SlipKind = (typeof SLIP_KINDS)[number];

/** Counts per slip kind. */
export type SlipCounts = Record<SlipKind, number>;

/** A worked solution as written, with the slips it contains. */
export interface WrittenChain {
  /** The steps as written: each `left` is the written copy of the previous written result. */
  readonly steps: readonly ArithStep[];
  /** The boxed answer (the written copy of the last result). */
  readonly answer: number;
  /** Slips made, by kind. */
  readonly slips: SlipCounts;
  /** Opportunities for each kind of slip (slips ≤ opportunities). */
  readonly opportunities: SlipCounts;
}

/** Whether any rate is positive. */
export function hasSlips(rates: SlipRates): boolean {
  return SLIP_KINDS.some((k) => rates[k] > 0);
}

const zero = (): SlipCounts => ({ column: 0, carry: 0, borrow: 0, copy: 0 });

/** Decimal digits, least significant first (0 → [0]). */
function digitsOf(n: number): number[] {
  const out: number[] = [];
  do {
    out.push(n % 10);
    n = Math.floor(n / 10);
  } while (n > 0);
  return out;
}

function fromDigits(ds: readonly number[]): number {
  let n = 0;
  for (let i = ds.length - 1; i >= 0; i--) n = n * 10 + ds[i]!;
  return n;
}

/** A digit written one higher or lower than `d` (never outside 0–9). */
function offByOne(d: number, rng: Rng): number {
  if (d === 0) return 1;
  if (d === 9) return 8;
  return rng.next() < 0.5 ? d - 1 : d + 1;
}

class Slipper {
  readonly slips = zero();
  readonly opportunities = zero();
  constructor(
    private readonly rates: SlipRates,
    private readonly rng: Rng,
  ) {}

  /** One opportunity of `kind`: whether it slips. */
  chance(kind: SlipKind): boolean {
    this.opportunities[kind]++;
    const p = this.rates[kind];
    if (p > 0 && this.rng.next() < p) {
      this.slips[kind]++;
      return true;
    }
    return false;
  }

  /** Column addition of non-negative a + b, digit by digit. */
  add(a: number, b: number): number {
    const da = digitsOf(a);
    const db = digitsOf(b);
    const out: number[] = [];
    let carry = 0;
    for (let i = 0; i < Math.max(da.length, db.length); i++) {
      const cin = carry > 0 && this.chance('carry') ? 0 : carry;
      const s = (da[i] ?? 0) + (db[i] ?? 0) + cin;
      carry = s >= 10 ? 1 : 0;
      out.push(this.chance('column') ? offByOne(s % 10, this.rng) : s % 10);
    }
    if (carry > 0 && !this.chance('carry')) out.push(1);
    return fromDigits(out);
  }

  /** Column subtraction a − b for a ≥ b ≥ 0, digit by digit. */
  sub(a: number, b: number): number {
    const da = digitsOf(a);
    const db = digitsOf(b);
    const out: number[] = [];
    let borrow = 0;
    for (let i = 0; i < da.length; i++) {
      const bin = borrow > 0 && this.chance('borrow') ? 0 : borrow;
      let d = da[i]! - (db[i] ?? 0) - bin;
      borrow = d < 0 ? 1 : 0;
      if (d < 0) d += 10;
      out.push(this.chance('column') ? offByOne(d, this.rng) : d);
    }
    // A forgotten borrow in the top column can leave a borrow nobody pays: the written digits stand.
    return fromDigits(out);
  }

  /** Copying a written number: one digit off by one, or two adjacent digits swapped. */
  copy(n: number): number {
    if (!this.chance('copy')) return n;
    const ds = digitsOf(n);
    if (ds.length >= 2 && this.rng.next() < 0.5) {
      const i = this.rng.int(ds.length - 1);
      const t = ds[i]!;
      ds[i] = ds[i + 1]!;
      ds[i + 1] = t;
      const swapped = fromDigits(ds);
      if (swapped !== n) return swapped;
    }
    const i = this.rng.int(ds.length);
    ds[i] = offByOne(ds[i]!, this.rng);
    return fromDigits(ds);
  }

  step(left: number, op: '+' | '-', right: number): number {
    if (op === '+') return this.add(left, right);
    // Column subtraction needs left ≥ right; a miscopied left that fell below right is subtracted exactly.
    return left >= right ? this.sub(left, right) : left - right;
  }
}

/**
 * Write the solution of `p` with slips drawn from `rng` at `rates`. With all rates 0 it is the
 * correct solution. Every step's result is computed column by column from the written operands.
 */
export function writeChain(p: ArithProblem, rates: SlipRates, rng: Rng): WrittenChain {
  const s = new Slipper(rates, rng);
  const steps: ArithStep[] = [];
  let left = p.operands[0]!;
  for (let i = 1; i < p.operands.length; i++) {
    const op = p.ops[i - 1]!;
    const right = p.operands[i]!;
    if (i > 1) left = left < 0 ? left : s.copy(left);
    const result = left < 0 ? (op === '+' ? left + right : left - right) : s.step(left, op, right);
    steps.push({ left, op, right, result });
    left = result;
  }
  const answer = left < 0 ? left : s.copy(left);
  return { steps, answer, slips: s.slips, opportunities: s.opportunities };
}
