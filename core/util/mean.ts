// The one rule for a mean in corl: the values summed in order from 0, divided by their count. What an
// empty list's mean is (0, or NaN for "nothing to average") is the caller's explicit choice.

/** The mean of `values` (summed in order); `empty` when there are none. */
export function mean(values: readonly number[], empty: number): number {
  if (values.length === 0) return empty;
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}

/** The mean of the finite values of `values` (a metric that could not be computed is NaN and skipped); `empty` when none is finite. */
export function finiteMean(values: readonly number[], empty: number): number {
  let s = 0;
  let n = 0;
  for (const v of values)
    if (Number.isFinite(v)) {
      s += v;
      n++;
    }
  return n ? s / n : empty;
}
