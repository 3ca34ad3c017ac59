import type { Completion } from './completion';
import type { Equivalence } from './equivalence';
import type { Problem, Reference } from './problem';
import type { WorkOptions } from './work';

/** One of this agent's completions as a reward source sees it: text, extracted answer and its canonical key. */
export interface CompletionView {
  /** The completion text. */
  readonly text: string;
  /** The extracted raw answer, or null when nothing parsed. */
  readonly answer: string | null;
  /** The answer's canonical key (what votes compare), or null. */
  readonly key: string | null;
  /** Number of generated tokens. */
  readonly length: number;
  /** The generated token ids, when the policy produced them (absent for texts `corl serve` scores). */
  readonly tokenIds?: readonly number[];
  /** How the completion ended. */
  readonly finishReason: Completion['finishReason'];
  /** Per-token entropies, when the source's manifest asked for token statistics. */
  readonly entropies?: readonly number[];
  /** Per-token mean vocabulary log-probabilities, when the manifest asked for token statistics. */
  readonly meanLogprobs?: readonly number[];
}

/** The answer keys one agent produced for the same problem: all that agents ever share. */
export interface AgentAnswers {
  /** The agent's index in the cohort. */
  readonly agent: number;
  /** Its completions' answer keys in rollout order (null = no answer). */
  readonly keys: readonly (string | null)[];
}

/** Everything a reward source may look at for one agent and one problem. */
export interface RewardContext {
  /** The problem (canonical phrasing; never the reference). */
  readonly problem: Problem;
  /**
   * The prompt text this agent actually saw (in a discussion round ≥ 1, where each of the K debates
   * quotes different neighbours, the agent's view of the problem without the quotes).
   */
  readonly prompt: string;
  /** The discussion round of these completions (0: answered alone); present only in runs with an `interaction`. */
  readonly round?: number;
  /** This agent's index, 0-based. */
  readonly agent: number;
  /** Cohort size N. */
  readonly agents: number;
  /** Updates completed before this batch (TRL's `state.global_step`): 0 for the first update's completions. */
  readonly step: number;
  /** The run's number of training steps (`trainer.steps`), when known (absent under `corl serve`). */
  readonly totalSteps?: number;
  /** This agent's K completions for the problem, in rollout order. */
  readonly completions: readonly CompletionView[];
  /** This agent's own answer keys (same as `completions[i].key`), for self-votes and metrics. */
  readonly own: AgentAnswers;
  /** The supervisors' answer keys, in the topology's priority order (teacher first). */
  readonly supervisors: readonly AgentAnswers[];
  /** The run's answer equivalence, for clustering and grading. */
  readonly equivalence: Equivalence;
  /** The reference — present only when the source's manifest declares `readsGroundTruth`. */
  readonly reference?: Reference;
}

/** What a reward source returns for one agent and one problem. */
export interface RewardResult {
  /** One reward per completion, aligned with `RewardContext.completions`. Finite numbers. */
  readonly rewards: readonly number[];
  /** The pseudo-label the rewards were computed against (a key), null for "no label", undefined if the source uses no label. */
  readonly label?: string | null;
  /** The label this agent's own answers would give (for `label/peer_agreement`), when the source computes one. */
  readonly ownLabel?: string | null;
  /** Extra per-problem metrics (averaged over the batch by the trainer), e.g. `vote/majority_ratio`. */
  readonly metrics?: Readonly<Record<string, number>>;
}

/** Input to {@link RewardSource.answerKeys}. */
export interface AnswerKeyInput {
  /** The problem (its `testInputs` for code tasks). */
  readonly problem: Problem;
  /** The completions to key, in rollout order. */
  readonly texts: readonly string[];
}

/**
 * Turns one agent's completions for one problem into rewards. Label-free sources see only answers
 * (their own and their supervisors'); a source that reads `reference` must say so in its manifest
 * (`readsGroundTruth`), and a `labelFree` config refuses it.
 */
export interface RewardSource {
  /**
   * The answer keys this source votes with, when they are not the run's extractor + equivalence
   * keys (e.g. `corl:exec-vote` runs the code). These keys are what peers see. `work` as for `score`.
   */
  answerKeys?(input: AnswerKeyInput, work?: WorkOptions): Promise<(string | null)[]>;
  /**
   * Rewards for one agent's completions to one problem. `work` (beside the context, never in it)
   * says whom the work is for and when nobody waits for it any more: pass it on to
   * `ctx.equivalence.equal` and to anything that queues or runs long (see {@link WorkOptions}).
   */
  score(ctx: RewardContext, work?: WorkOptions): Promise<RewardResult>;
  /**
   * Rewards for many contexts at once, in order: for each context exactly what `score` gives it,
   * computed in one go (e.g. one round trip to another process per step). Optional. When present,
   * the trainer hands it every agent's every problem of a step (of each discussion round) in one
   * call, agent by agent, problem by problem. `work` as for `score`, when the caller has one: the
   * trainer passes none (it waits for every group of its step and has no lane), so a source must
   * not need it.
   */
  scoreMany?(contexts: readonly RewardContext[], work?: WorkOptions): Promise<RewardResult[]>;
  /** Release sandboxes, workers. Optional. */
  close?(): Promise<void>;
}
