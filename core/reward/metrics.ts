// The reward/* and label/* metrics, one definition for `corl train` (one record per agent and step) and
// `corl serve` (one summary per request); docs/reference/metrics.md defines each and names TRL's twins.
import type { Equivalence } from '../contracts/equivalence';
import { mean } from '../util/mean';
import { gradeKeys } from './grade';
import type { ScoredGroup } from './pipeline';

/** A scored group as the metrics read it (a `ScoredGroup`, or one a service stored and restored). */
export type MetricGroup = Pick<ScoredGroup, 'rewards' | 'label' | 'agree' | 'metrics'>;

/**
 * What ground truth says of one group (training monitoring only; the service has none): whether
 * its label is right, its problem's category, and per completion whether its reward is the one a
 * ground-truth reward would give.
 */
export interface GroupGrade {
  /** 1/0: the label matches the reference key; absent without a label or a reference. */
  readonly labelRight?: number;
  /** The problem's `metadata.category`, when the task tags one. */
  readonly category?: string;
  /**
   * Per completion 1/0: its reward equals 1[key matches the reference]; absent without a reference,
   * or when the rewards are not all 0 or 1.
   */
  readonly rewardRight?: readonly number[];
}

/**
 * `reward/mean`, `reward/std` (n − 1) and `reward/frac_zero_std` over the groups: plain loops,
 * summing in order (the same floats as a mean over the flattened rewards). No groups: 0, 0, 0.
 */
export function rewardStats(groups: readonly MetricGroup[]): Record<string, number> {
  let count = 0;
  let sum = 0;
  for (const g of groups)
    for (const r of g.rewards) {
      sum += r;
      count++;
    }
  const mu = count ? sum / count : 0;
  let squares = 0;
  for (const g of groups) for (const r of g.rewards) squares += (r - mu) * (r - mu);
  let flat = 0;
  for (const g of groups) {
    let same = 1;
    for (let i = 1; i < g.rewards.length; i++) if (g.rewards[i] !== g.rewards[0]) same = 0;
    flat += same;
  }
  return {
    'reward/mean': mu,
    'reward/std': count > 1 ? Math.sqrt(squares / (count - 1)) : 0,
    'reward/frac_zero_std': groups.length ? flat / groups.length : 0,
  };
}

/**
 * The label metrics, over the groups whose source reports a label (none: no metric at all), in this
 * order: `label/labeled_fraction`; with grades, `label/accuracy`, `label/accuracy/<category>` and
 * `label/count/<category>`; `label/peer_agreement`; with grades, `reward/accuracy`. `grades[i]` is
 * group i's; without grades (a service) the ground-truth metrics are absent.
 */
export function labelStats(
  groups: readonly MetricGroup[],
  grades?: readonly (GroupGrade | undefined)[],
): Record<string, number> {
  const m: Record<string, number> = {};
  const labeled = groups.flatMap((g, i) => (g.label !== undefined ? [{ g, grade: grades?.[i] }] : []));
  if (!labeled.length) return m;
  m['label/labeled_fraction'] = mean(
    labeled.map(({ g }) => (g.label !== null ? 1 : 0)),
    0,
  );
  const accs: number[] = [];
  // Categories in the order of a plain object's keys (integer-like names first), as records have always listed them.
  const byCategory: Record<string, number[]> = Object.create(null) as Record<string, number[]>;
  const agree: number[] = [];
  const rewardRight: number[] = [];
  for (const { g, grade } of labeled) {
    if (grade?.labelRight !== undefined) {
      accs.push(grade.labelRight);
      // Per problem category (tasks that tag metadata.category): where do pseudo-labels go wrong?
      if (grade.category !== undefined) (byCategory[grade.category] ??= []).push(grade.labelRight);
    }
    if (g.agree !== undefined) agree.push(g.agree);
    if (grade?.rewardRight) rewardRight.push(...grade.rewardRight);
  }
  if (accs.length) m['label/accuracy'] = mean(accs, 0);
  for (const [category, v] of Object.entries(byCategory)) {
    m[`label/accuracy/${category}`] = mean(v, 0);
    m[`label/count/${category}`] = v.length;
  }
  if (agree.length) m['label/peer_agreement'] = mean(agree, 0);
  if (rewardRight.length) m['reward/accuracy'] = mean(rewardRight, 0);
  return m;
}

/** The reward source's own metrics: per name (first-seen order), the mean over the groups that report it. */
export function sourceStats(groups: readonly MetricGroup[]): Record<string, number> {
  const acc = new Map<string, { sum: number; count: number }>();
  for (const g of groups)
    for (const name in g.metrics) {
      const v = g.metrics[name];
      if (v === undefined) continue;
      const a = acc.get(name);
      if (!a) acc.set(name, { sum: v, count: 1 });
      else {
        a.sum += v;
        a.count++;
      }
    }
  const m: Record<string, number> = {};
  for (const [name, a] of acc) m[name] = a.sum / a.count;
  return m;
}

/**
 * Grade one group against its reference key `target` (null: the problem has none) with the run's
 * grading equivalence, by the one grader's rule (`gradeKeys`, core/reward/grade.ts): is its label right, and is each reward the ground-truth reward.
 */
export async function gradeGroup(
  group: Pick<ScoredGroup, 'rewards' | 'label'>,
  keys: readonly (string | null)[],
  target: string | null,
  category: string | undefined,
  grading: Pick<Equivalence, 'equal'>,
): Promise<GroupGrade> {
  if (target === null) return category !== undefined ? { category } : {};
  const labelRight =
    group.label !== undefined && group.label !== null
      ? Number((await gradeKeys([group.label], target, grading))[0])
      : undefined;
  const rewardRight = group.rewards.every((x) => x === 0 || x === 1)
    ? (await gradeKeys(keys, target, grading)).map((right, k) => (Number(right) === group.rewards[k] ? 1 : 0))
    : undefined;
  return {
    ...(labelRight !== undefined ? { labelRight } : {}),
    ...(category !== undefined ? { category } : {}),
    ...(rewardRight ? { rewardRight } : {}),
  };
}
