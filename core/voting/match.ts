// The one key-match rule: "is answer key x the answer y" (docs/reference/metrics.md, "Matching answers").
import type { Equivalence } from '../contracts/equivalence';
import type { WorkOptions } from '../contracts/work';

/**
 * Whether a key is an answer at all. Null is no answer, and so is the empty key: the
 * `Equivalence` contract gives null for an answer that is empty after normalization, and a key
 * that breaks it with `''` (a reward source's own `answerKeys`, a third-party equivalence) is read
 * the same way, so an empty answer never votes and never matches, not even another empty one.
 */
export function isAnswer(key: string | null | undefined): key is string {
  return typeof key === 'string' && key !== '';
}

/**
 * Whether key `x` is the answer `y`: both are answers (see {@link isAnswer}) and they are identical
 * or the equivalence says they are equal. Symmetric. The one rule rewards, labels, metrics,
 * evaluation and judges compare answers with. `work` goes to `equal` (core/contracts/work.ts).
 */
export async function matches(
  x: string | null | undefined,
  y: string | null | undefined,
  equivalence: Pick<Equivalence, 'equal'>,
  work?: WorkOptions,
): Promise<boolean> {
  return matchesAtOnce(x, y) ?? equivalence.equal(x!, y!, work);
}

/**
 * What {@link matches} says when it needs no `equal`: false when either side is no answer, true for
 * identical keys; undefined when only `equal` can tell. Lets a caller skip a wait per completion
 * for the common cases.
 */
export function matchesAtOnce(x: string | null | undefined, y: string | null | undefined): boolean | undefined {
  if (!isAnswer(x) || !isAnswer(y)) return false;
  return x === y ? true : undefined;
}
