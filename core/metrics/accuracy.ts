// The one pass@1 rule, over the verdicts the grader (core/reward/grade.ts) gave: the trainer's and
// `corl eval`'s `eval/accuracy`, pretraining's held-out pass@1 and the report's per-problem pass.
import { finiteMean, mean } from '../util/mean';

/** One problem's pass@1: the share of its samples graded right (NaN for a problem without samples). */
export function sampleAccuracy(correct: readonly boolean[]): number {
  return mean(correct.map(Number), NaN);
}

/** pass@1 over problems: the mean of their {@link sampleAccuracy} (a problem without samples is skipped; 0 for none). */
export function passAt1(rows: readonly { readonly correct: readonly boolean[] }[]): number {
  return finiteMean(
    rows.map((r) => sampleAccuracy(r.correct)),
    0,
  );
}
