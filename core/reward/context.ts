// The RewardContext a reward source reads, built one way for `corl train` and `corl serve`: a deep-frozen
// tree of copies, so a source can change nothing the caller, the run or the next source uses.
import type { FinishReason } from '../contracts/completion';
import type { Equivalence } from '../contracts/equivalence';
import type { CompletionView, RewardContext } from '../contracts/reward-source';
import { deepFreeze, equivalenceFacade } from '../contracts/frozen';

/** One completion as the pipeline receives it (a sampled `Completion`, or one a client posted). */
export interface CompletionInput {
  readonly text: string;
  /** Generated tokens (a client that does not know them sends the text's length). */
  readonly length: number;
  /** The generated token ids, when the caller has them (a sampled completion; not a posted one). */
  readonly tokenIds?: ArrayLike<number>;
  readonly finishReason: FinishReason;
  /** Per-token statistics, when the policy computed them. */
  readonly entropies?: ArrayLike<number>;
  readonly meanLogprobs?: ArrayLike<number>;
}

/**
 * One agent's group for one problem, as it is scored: the context's facts (problem, prompt, round,
 * agent, agents, step, supervisors, reference: only for a source that declares `readsGroundTruth`, the
 * caller decides) with the completions, their answers and their keys as the caller holds them.
 */
export interface GroupToScore extends Omit<RewardContext, 'completions' | 'own' | 'equivalence'> {
  readonly completions: readonly CompletionInput[];
  /** The run extractor's answer of each completion (null: none parsed). */
  readonly answers: readonly (string | null)[];
  /** The answer key of each completion, as the reward source votes with them. */
  readonly keys: readonly (string | null)[];
}

/**
 * The context of one group: every part a fresh copy (the problem, the views, the agent's and the
 * supervisors' keys, the reference), the equivalence as a frozen facade of its `key` and `equal`,
 * and the whole tree frozen. Only what the group carries goes in (`round` when it has one,
 * `reference` when the caller hands one: the caller decides whether the source may read it).
 */
export function buildRewardContext(group: GroupToScore, equivalence: Equivalence): RewardContext {
  const completions: CompletionView[] = group.completions.map((c, k) => ({
    text: c.text,
    answer: group.answers[k] ?? null,
    key: group.keys[k] ?? null,
    length: c.length,
    ...(c.tokenIds ? { tokenIds: Array.from(c.tokenIds) } : {}),
    finishReason: c.finishReason,
    ...(c.entropies ? { entropies: Array.from(c.entropies) } : {}),
    ...(c.meanLogprobs ? { meanLogprobs: Array.from(c.meanLogprobs) } : {}),
  }));
  return deepFreeze({
    problem: plainCopy(group.problem),
    prompt: group.prompt,
    ...(group.round !== undefined ? { round: group.round } : {}),
    agent: group.agent,
    agents: group.agents,
    step: group.step,
    ...(group.totalSteps !== undefined ? { totalSteps: group.totalSteps } : {}),
    completions,
    own: { agent: group.agent, keys: [...group.keys] },
    supervisors: group.supervisors.map((s) => ({ agent: s.agent, keys: [...s.keys] })),
    equivalence: equivalenceFacade(equivalence),
    ...(group.reference !== undefined ? { reference: plainCopy(group.reference) } : {}),
  });
}

/** A copy of plain data (arrays and plain objects copied, anything else kept as it is). */
export function plainCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => plainCopy(v)) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plainCopy(v);
    return out as T;
  }
  return value;
}
