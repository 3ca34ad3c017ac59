import type { InjectionToken } from 'tsyringe';
import type { JudgeTools } from './judge';

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
  /**
   * The interaction's own judgement of the turns, when it has a {@link Interaction.judge} step (CoMAS):
   * what `judge` returned for this problem. Absent otherwise (and in the contract suite's probes).
   */
  readonly judged?: Judgement;
}

/** What a turn is: an answer to the problem (reading earlier turns), or an evaluation of one earlier turn. */
export type InteractionTurn = 'answer' | 'evaluate';

/** One earlier turn of the same debate: round `round` of agent `agent`. */
export interface TurnRef {
  /** Its round, earlier than the one reading it. */
  readonly round: number;
  /** The agent that wrote it. */
  readonly agent: number;
}

/** One turn of a discussion, whole, as {@link Interaction.judge} reads it. */
export interface DiscussionTurnText {
  /** The prompt it was sampled from. */
  readonly prompt: string;
  /** Its completion text. */
  readonly text: string;
  /** Its extracted answer (null: none parsed). */
  readonly answer: string | null;
  /** Its canonical answer key (null: none). */
  readonly key: string | null;
}

/** One problem's discussion as text: `turns[round][agent][debate]`. */
export interface DiscussionRecord {
  /** The problem's id. */
  readonly problem: string;
  /** The problem as the task poses it. */
  readonly prompt: string;
  /** Updates completed before this batch (TRL's `state.global_step`; 0 for the first update's). */
  readonly step: number;
  /** Agents of the cohort, N. */
  readonly agents: number;
  /** Parallel debates of the problem, K. */
  readonly debates: number;
  /** `turns[round][agent][debate]`: every turn of every round, round 0 first. */
  readonly turns: readonly (readonly (readonly DiscussionTurnText[])[])[];
}

/** An interaction's judgement of one problem's turns (see {@link Interaction.judge}). */
export interface Judgement {
  /**
   * `quality[round][agent][debate]`: the judged quality of a turn in [0, 1], null where the turn was
   * not judged or the judge gave no verdict. Same shape as the scores.
   */
  readonly quality: readonly (readonly (readonly (number | null)[])[])[];
  /** Requests made to a judge model for this problem (reported per step as `judge/calls`). */
  readonly calls: number;
  /** Completions a judge model generated for them (`judge/samples`). */
  readonly samples: number;
}

/**
 * A multi-agent interaction protocol (`interaction` in a config): agents answer a problem alone
 * (round 0), then for `rounds` more rounds each reads its neighbours' previous turns and answers
 * again. The trainer runs the rounds, scores every turn with the run's reward source (the verifier)
 * and hands the scores to `credit`, whose output is each turn's reward; advantages are then taken per
 * (agent, problem, round) over the K debates. Label-free: it sees scores, never references.
 *
 * The optional `turn`, `reads` and `judge` let a protocol other than a debate run through the same
 * trainer: CoMAS (arXiv 2510.08529, `corl:comas`) has evaluation turns (an agent checks one other
 * agent's proposal) and a judge that scores proposals against their evaluations, which the
 * verifier's scores and a pure `credit` alone cannot express. They were added without changing the
 * members above; absent, the trainer runs the debate it always ran.
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
  /**
   * Optional: what round r (1..rounds) is. `answer` (the default): agents answer the problem again,
   * reading earlier turns through the task's discussion prompt. `evaluate`: each agent evaluates one
   * earlier turn (exactly one in {@link Interaction.reads}) through the task's evaluation prompt.
   */
  turn?(round: number): InteractionTurn;
  /**
   * Optional: the earlier turns of the same debate that agent `agent` reads in round `round` (each
   * with 0 ≤ round' < round). Default: its neighbours' turns of round − 1.
   */
  reads?(round: number, agent: number, neighbours: readonly (readonly number[])[]): readonly TurnRef[];
  /**
   * Optional: judge one problem's whole discussion before `credit` (e.g. with a judge model, CoMAS);
   * the trainer hands the result to `credit` as {@link DebateScores.judged}. Label-free: the record
   * and the tools carry no reference. Async and separate from `credit` because a judge calls a model
   * (an HTTP server, or a cohort policy through the tools), while `credit` stays pure.
   */
  judge?(record: DiscussionRecord, tools: JudgeTools): Promise<Judgement>;
  /** Release resources. Optional. */
  close?(): Promise<void>;
}

/** Injection token of the run's {@link Interaction}, when the config has one. */
export const INTERACTION: InjectionToken<Interaction> = 'corl.Interaction';
