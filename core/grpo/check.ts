import { CorlError } from '../errors';

/**
 * The NaN policy of the GRPO math (docs/algorithms/grpo.md, detail 6): every input is checked, and
 * a NaN or ±Infinity raises CORL_ERR_GRPO_NONFINITE naming where it was. Nothing is clamped,
 * skipped or replaced, because a silently dropped sample biases the gradient without a trace.
 */
export function assertFinite(value: number, what: string): void {
  if (!Number.isFinite(value)) {
    throw new CorlError('CORL_ERR_GRPO_NONFINITE', `expected a finite ${what}, got ${value}`);
  }
}

/** Check every value of an array. */
export function assertAllFinite(values: ArrayLike<number>, what: (i: number) => string): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) {
      throw new CorlError('CORL_ERR_GRPO_NONFINITE', `expected a finite ${what(i)}, got ${v}`);
    }
  }
}
