import type { InjectionToken } from 'tsyringe';

/** What a neighbour's turn carries into the next round's prompt. */
export type InteractionShare = 'answer' | 'solution';

/**
 * The verifier's scores of every turn of one problem's debates, as an {@link Interaction} credits them.
 * `scores[r][a][k]` is the run's reward source's score of agent `a`'s turn in round `r` of debate `k`
 * (round 0: the agent answered alone; round r ≥ 1: it read its neighbours' round r − 1 turns of the
 * same debate). Debates are the K parallel conversations of one problem (K = `trainer.groupSize`).
 */
export interface DebateScores {
  /** Agents of the cohort, N. */
  readonly agents: number;
  /** Turns per debate: 1 + `rounds`. */
  readonly turns: number;
  /** Parallel debates of the problem, K. */
  readonly debates: number;
  /** `scores[round][agent][debate]`, finite. */
  readonly scores: readonly (readonly (readonly number[])[])[];
  /** `neighbours[a]`: the agents whose previous turns agent `a` read (the topology's supervisors). */
  readonly neighbours: readonly (readonly number[])[];
}

/**
 * A multi-agent interaction protocol (`interaction` in a config): agents answer a problem alone
 * (round 0), then for `rounds` more rounds each reads its neighbours' previous turns and answers
 * again. The trainer runs the rounds, scores every turn with the run's reward source (the verifier)
 * and hands the scores to `credit`, whose output is each turn's reward; advantages are then taken per
 * (agent, problem, round) over the K debates. Label-free: it sees scores, never references.
 */
export interface Interaction {
  /** Discussion rounds after round 0 (R ≥ 1); a debate has R + 1 turns per agent. */
  readonly rounds: number;
  /** Whether a neighbour's turn is quoted as its answer only, or as its whole solution. */
  readonly share: InteractionShare;
  /** Throws `CORL_ERR_INTERACTION_AGENTS` if the protocol cannot run with `agents` agents and these neighbours. */
  validate(agents: number, neighbours: readonly (readonly number[])[]): void;
  /**
   * The reward of every turn, `rewards[round][agent][debate]`, from the verifier's scores (same shape).
   * Pure: the same scores give the same rewards.
   */
  credit(scores: DebateScores): number[][][];
  /** Release resources. Optional. */
  close?(): Promise<void>;
}

/** Injection token of the run's {@link Interaction}, when the config has one. */
export const INTERACTION: InjectionToken<Interaction> = 'corl.Interaction';
