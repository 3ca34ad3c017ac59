// GRPO advantage estimators. Equations: docs/algorithms/grpo.md (1)–(4).
import { assertAllFinite } from './check';
import { mean } from '../util/mean';

/** How the centred reward is scaled: by the group's std (GRPO), the whole batch's std, or not at all (Dr. GRPO). */
export type AdvantageScale = 'group' | 'batch' | 'none';

/** Options of {@link grpoAdvantages}. */
export interface GrpoAdvantageOptions {
  /** Scaling of r − mean_group: 'group' (eq. 1), 'batch' (eq. 2) or 'none' (eq. 3). */
  scale: AdvantageScale;
  /** ε added to the std in the denominator; verl uses 1e-6, TRL 1e-4. */
  epsilon: number;
  /** Use the unbiased (n−1) standard deviation, as torch.std does in TRL and verl. */
  unbiased: boolean;
}

/** Mean of a group. Empty group → 0. */
export function groupMean(rewards: readonly number[]): number {
  return mean(rewards, 0);
}

/** Standard deviation; `unbiased` divides by n−1. Fewer than two values → 0. */
export function groupStd(rewards: readonly number[], unbiased: boolean): number {
  const n = rewards.length;
  if (n < 2) return 0;
  const m = groupMean(rewards);
  let ss = 0;
  for (const r of rewards) ss += (r - m) * (r - m);
  return Math.sqrt(ss / (unbiased ? n - 1 : n));
}

function checkRewards(groups: readonly (readonly number[])[]): void {
  groups.forEach((g, i) => assertAllFinite(g, (k) => `reward (group ${i}, completion ${k})`));
}

/**
 * GRPO advantages Â_k = (r_k − mean_group) / (std + ε). A group whose rewards are all equal, or that
 * has a single sample, gets exactly zero advantages (its centred rewards are zero).
 */
export function grpoAdvantages(groups: readonly (readonly number[])[], options: GrpoAdvantageOptions): number[][] {
  checkRewards(groups);
  const batchStd = options.scale === 'batch' ? groupStd(groups.flat(), options.unbiased) : 0;
  return groups.map((g) => {
    const mean = groupMean(g);
    if (g.length < 2) return g.map(() => 0);
    const std = options.scale === 'group' ? groupStd(g, options.unbiased) : batchStd;
    if (g.every((r) => r === g[0])) return g.map(() => 0);
    const denom = options.scale === 'none' ? 1 : std + options.epsilon;
    return g.map((r) => (r - mean) / denom);
  });
}

/** Dr. GRPO advantages (eq. 3): r − mean_group, no std scaling. */
export function drGrpoAdvantages(groups: readonly (readonly number[])[]): number[][] {
  return grpoAdvantages(groups, { scale: 'none', epsilon: 0, unbiased: true });
}

/**
 * RLOO advantages (eq. 4): r_k − mean_{j≠k} r_j = n/(n−1)·(r_k − mean_group). A one-sample group → 0.
 */
export function rlooAdvantages(groups: readonly (readonly number[])[]): number[][] {
  checkRewards(groups);
  return groups.map((g) => {
    const n = g.length;
    if (n < 2) return g.map(() => 0);
    const mean = groupMean(g);
    return g.map((r) => (n / (n - 1)) * (r - mean));
  });
}
