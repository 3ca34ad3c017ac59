import type { InjectionToken } from 'tsyringe';

/**
 * Turns rewards into advantages. Receives all groups of one agent at one step (a group = the K
 * rewards of one prompt), so batch-level statistics are possible. Output is aligned with input.
 * A group with zero spread (or a single sample) gets zero advantages.
 */
export interface AdvantageEstimator {
  /** Advantages for every reward of every group. */
  estimate(groups: readonly (readonly number[])[]): number[][];
}

/** Injection token of the run's {@link AdvantageEstimator}, in the container of every plugin created after it. */
export const ADVANTAGE_ESTIMATOR: InjectionToken<AdvantageEstimator> = 'corl.AdvantageEstimator';
