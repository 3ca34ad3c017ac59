import type { InjectionToken } from 'tsyringe';
import type { WorkOptions } from './work';

/**
 * Decides when two answers are the same. `key` is a cheap canonical form computed once per
 * completion and cached; answers with equal keys are equal. `equal` may go further (numeric
 * tolerance, symbolic comparison) and is only consulted for keys that differ.
 */
export interface Equivalence {
  /** Canonical key of a raw answer; null when the answer is empty after normalization (an empty answer never wins a vote). */
  key(answer: string): string | null;
  /**
   * Whether two keys denote the same answer. Must be symmetric; reflexive on equal keys. `work`
   * (optional) says whom the comparison is for and when nobody waits for it (see
   * {@link WorkOptions}): an equivalence that queues slow comparisons serves lanes in turn, and
   * rejects an aborted one (never remembering it as "not equal").
   */
  equal(a: string, b: string, work?: WorkOptions): Promise<boolean>;
  /** Release worker threads, if any. Optional. */
  close?(): Promise<void>;
}

/** Injection token of the run's {@link Equivalence}, in the container of every plugin created after it (`key` and `equal` only). */
export const EQUIVALENCE: InjectionToken<Equivalence> = 'corl.Equivalence';
