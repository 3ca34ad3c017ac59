// The order a group's completions are scored in (docs/guide/serve.md "Ties"): by text, never by the
// order they were posted or arrived in. Trainers reorder batches (verl balances sequence lengths)
// and per-sample posts arrive in any order, so a plurality tie decided by position would depend on
// scheduling; decided by text it depends only on what was sampled.
import type { GroupAnswer, PostedCompletion, PostedGroup } from './scorer';

/** Code-unit order of two strings (locale-independent, the same on every machine). */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Positions of `completions` in scoring order: sorted by text, equal texts in posted order (equal
 * texts have equal answers, so their order changes no reward).
 */
export function scoringOrder(completions: readonly PostedCompletion[]): number[] {
  const order = completions.map((_, i) => i);
  order.sort((i, j) => byText(completions[i]!.text, completions[j]!.text) || i - j);
  return order;
}

/** The group with its completions in scoring order, and that order (`order[k]` = posted position of the k-th). */
export function inScoringOrder(group: PostedGroup): { group: PostedGroup; order: number[] } {
  const order = scoringOrder(group.completions);
  if (order.every((p, k) => p === k)) return { group, order };
  return { group: { ...group, completions: order.map((p) => group.completions[p]!) }, order };
}

/** An answer computed in scoring order, with its per-completion fields put back in posted order. */
export function inPostedOrder(answer: GroupAnswer, order: readonly number[]): GroupAnswer {
  if (order.every((p, k) => p === k)) return answer;
  const rewards: number[] = new Array<number>(order.length);
  const keys: (string | null)[] = new Array<string | null>(order.length);
  const right = answer.rewardRight;
  const rewardRight: number[] | undefined = right ? new Array<number>(order.length) : undefined;
  order.forEach((p, k) => {
    rewards[p] = answer.rewards[k]!;
    keys[p] = answer.keys[k] ?? null;
    if (rewardRight) rewardRight[p] = right![k]!;
  });
  return { ...answer, rewards, keys, ...(rewardRight ? { rewardRight } : {}) };
}
