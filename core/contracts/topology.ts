import type { InjectionToken } from 'tsyringe';

/**
 * Who supervises whom in a cohort. Co-RL's ring: S(n) = {n−1 mod N}; TTRL: S(n) = {n}.
 */
export interface Topology {
  /**
   * The agents whose answers build agent `agent`'s pseudo-label, in priority order (the first is the
   * "teacher"). Never empty unless the topology was configured to allow unsupervised agents.
   */
  supervisors(agent: number, agents: number): readonly number[];
  /** Whether an agent may appear among its own supervisors (true only for self-voting). */
  readonly selfSupervised: boolean;
  /** Throws a coded error if the topology cannot serve a cohort of `agents` agents. */
  validate(agents: number): void;
}

/** Injection token of the run's {@link Topology}, in the container of every plugin created after it. */
export const TOPOLOGY: InjectionToken<Topology> = 'corl.Topology';
