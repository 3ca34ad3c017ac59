import type { InjectionToken } from 'tsyringe';
import type { SampleRequest } from './policy';
import type { Problem } from './problem';

/** How one agent sees one problem: its phrasing, images and per-request sampling overrides. */
export type AgentView = SampleRequest;

/**
 * Gives each agent its own view of a problem (Co-RL's input diversity). Must be deterministic:
 * the same problem, agent and cohort size always give the same view. Seeds per agent are the
 * trainer's job (seed + agent index); a strategy may add overrides on top.
 */
export interface DiversityStrategy {
  /** The view of `problem` for agent `agent` of `agents`. */
  view(problem: Problem, agent: number, agents: number): AgentView;
}

/** Injection token of the run's {@link DiversityStrategy}, in the container of every plugin created after it. */
export const DIVERSITY_STRATEGY: InjectionToken<DiversityStrategy> = 'corl.DiversityStrategy';
