// The corl:arith options the task's tests start from, so that each test states only what it changes.
import type { ArithOptions } from '../../../plugins/tasks/arith';
import type { SlipRates } from '../../../plugins/tasks/arith-slips';

export const NO_SLIPS: SlipRates = Object.freeze({ column: 0, carry: 0, borrow: 0, copy: 0 });
export const NO_DISCUSSION: ArithOptions['pretrain']['discussion'] = Object.freeze({
  fraction: 0,
  neighbours: { min: 1, max: 2 },
  neighbourRight: 0.6,
  adopt: 0.5,
});

/** Overrides of {@link arithOptions}: top-level fields, and `pretrain` fields merged into the default corpus. */
export type ArithOverrides = Partial<Omit<ArithOptions, 'pretrain'>> & { pretrain?: Partial<ArithOptions['pretrain']> };

/** 2–3 operand sums and differences of 1–2 digit numbers, a 500-solution corpus without slips or discussion turns. */
export function arithOptions(over: ArithOverrides = {}): ArithOptions {
  const { pretrain, ...top } = over;
  return {
    seed: 5,
    train: 300,
    heldOut: 60,
    heldOutSeed: 0,
    validation: 0,
    operands: { min: 2, max: 3 },
    digits: { min: 1, max: 2 },
    operations: ['+', '-'],
    nonNegative: true,
    phrasings: 4,
    ...top,
    pretrain: {
      size: 500,
      weights: { carry: 1, borrow: 1, hundreds: 1 },
      phrasings: [0, 1, 2, 3],
      slips: NO_SLIPS,
      discussion: NO_DISCUSSION,
      ...pretrain,
    },
  };
}
