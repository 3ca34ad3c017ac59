/** One turn of a discussion as a judge reads it. */
export interface JudgedTurn {
  /** The agent that wrote it. */
  readonly agent: number;
  /** Its completion text. */
  readonly text: string;
  /** Its extracted answer (null: none parsed). */
  readonly answer: string | null;
  /** Its canonical answer key under the run's equivalence (null: none). */
  readonly key: string | null;
}

/** A proposal and the evaluation another agent wrote of it. */
export interface JudgeItem {
  /** The proposed solution. */
  readonly proposal: JudgedTurn;
  /** Another agent's evaluation of it. */
  readonly evaluation: JudgedTurn;
}

/** A completion a cohort policy sampled for a judge, with its answer and key. */
export interface JudgeSample {
  /** Its completion text. */
  readonly text: string;
  /** Its extracted answer (null: none parsed). */
  readonly answer: string | null;
  /** Its canonical answer key (null: none). */
  readonly key: string | null;
}

/**
 * What the trainer lends a judge for one problem. Label-free: answer equality and samples of the
 * cohort's own policies, never a reference.
 */
export interface JudgeTools {
  /** Agents of the cohort, N. */
  readonly agents: number;
  /** Whether two answer keys denote the same answer (the run's equivalence). */
  equal(a: string, b: string): Promise<boolean>;
  /**
   * `n` completions of agent `agent`'s policy for its own view of the problem, sampled with the
   * training sampling settings and a seed derived from the agent, the step and the problem (the
   * embedded judge). Not trained on.
   */
  sample(agent: number, n: number): Promise<readonly JudgeSample[]>;
}

/** One problem's judging: the problem, the items to score, the trainer's tools. */
export interface JudgeRequest extends JudgeTools {
  /** The problem's id. */
  readonly problem: string;
  /** The problem as the task poses it. */
  readonly prompt: string;
  /** Updates completed before this batch (TRL's `state.global_step`; 0 for the first update's). */
  readonly step: number;
  /** The proposals to score, each with the evaluation of it. */
  readonly items: readonly JudgeItem[];
}

/** A judge's scores of one request. */
export interface JudgeResult {
  /**
   * `scores[j]` for item j on the rubric of docs/algorithms/comas.md: 3 the proposal is right and no
   * criticism of the evaluation holds, 2 minor valid criticisms, 1 a fatal one (the answer is wrong);
   * a real number in [1, 3], or null when the judge gives no verdict.
   */
  readonly scores: readonly (number | null)[];
  /** Requests made to the judge's model (HTTP requests, or sampling calls of a cohort policy). */
  readonly calls: number;
  /** Completions the judge's model generated for them. */
  readonly samples: number;
}

/**
 * A judge of proposals and their evaluations (`judge` inside `corl:comas`'s options): a chat model
 * behind an OpenAI-compatible server (`corl:openai-judge`), or a judge built from a cohort policy
 * (`corl:policy-judge`). Label-free: it never receives a reference. It is a plugin kind of its own,
 * selected inside the interaction's options rather than at the top of a config, because CoMAS's
 * LLM-as-a-judge is one interchangeable part of the protocol (an LLM for real models, a cohort
 * policy on the embedded benchmark) and only the interaction that asks for judgements uses one; a
 * judge that samples a cohort policy does so through {@link JudgeTools.sample}, which the trainer
 * lends, so no plugin ever holds another agent's policy.
 */
export interface Judge {
  /** The cohort agents whose policies it samples (checked against the cohort size); absent: none. */
  readonly agents?: readonly number[];
  /** Score every item of one problem. */
  score(request: JudgeRequest): Promise<JudgeResult>;
  /** Release resources. Optional. */
  close?(): Promise<void>;
}
