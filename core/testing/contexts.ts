import type { Equivalence } from '../contracts/equivalence';
import type { GroundTruth, Problem, Reference } from '../contracts/problem';
import type { CompletionView, RewardContext } from '../contracts/reward-source';
import type { Task } from '../contracts/task';
import { buildRewardContext as pipelineContext, type CompletionInput, type GroupToScore } from '../reward/context';
import { Rng } from '../util/rng';

/**
 * The simplest equivalence: a key is the trimmed answer (null when empty), and keys are equal only
 * when identical. Contract suites use it so that a reward's behaviour does not depend on math
 * normalization; pass your own where it matters.
 */
export const exactEquivalence: Equivalence = Object.freeze({
  key: (answer: string): string | null => (answer.trim() === '' ? null : answer.trim()),
  equal: async (a: string, b: string): Promise<boolean> => a === b,
});

/** What {@link rewardContext} builds a context from. Only `keys` is required. */
export interface RewardContextSpec {
  /** This agent's answer keys, one per completion in rollout order (null = no answer). */
  readonly keys: readonly (string | null)[];
  /**
   * The supervisors' keys, teacher first. Default: one peer (agent `agent + 1`) with the same keys as
   * this agent. Give `[{ agent, keys }]` to choose the agent indices (e.g. self-supervision).
   */
  readonly supervisors?: readonly (
    readonly (string | null)[] | { readonly agent: number; readonly keys: readonly (string | null)[] }
  )[];
  /** The problem; default `{ id: 'p1', prompt: 'What is 2 + 2?' }`. */
  readonly problem?: Problem;
  /** This agent's index (default 0) and the cohort size (default: enough for the supervisors). */
  readonly agent?: number;
  readonly agents?: number;
  /** Updates completed before this batch (default 0: the first update's batch). */
  readonly step?: number;
  /** The run's number of steps (absent by default, as under `corl serve`). */
  readonly totalSteps?: number;
  /** The discussion round (absent by default: a run without an interaction). */
  readonly round?: number;
  /** Completion texts; default `The answer is \boxed{<key>}.` (or a sentence without an answer). */
  readonly texts?: readonly string[];
  /** How each completion ended; default all `stop`. */
  readonly finishReasons?: readonly CompletionView['finishReason'][];
  /** Add per-token entropies and mean log-probabilities (seeded, plausible values). */
  readonly tokenStats?: boolean;
  /** The reference, for sources that declare `readsGroundTruth`. A string is the reference answer. */
  readonly reference?: Reference | string;
  /** Default {@link exactEquivalence}. */
  readonly equivalence?: Equivalence;
  /** Seed of the generated token statistics. */
  readonly seed?: number;
}

function isKeyList(
  s: readonly (string | null)[] | { readonly agent: number; readonly keys: readonly (string | null)[] },
): s is readonly (string | null)[] {
  return Array.isArray(s);
}

/** The default completion text for a key. */
export function completionText(key: string | null): string {
  return key === null ? 'I am not sure how to solve this.' : `Adding them up, the answer is \\boxed{${key}}.`;
}

/**
 * A group as the trainer hands it to the reward pipeline (`GroupToScore`, core/reward/context.ts),
 * from answer keys: each completion's answer is its key. Tokens are the texts' characters (a
 * character-level tokenizer: each id is a UTF-16 code unit).
 */
export function rewardGroup(spec: RewardContextSpec): GroupToScore {
  const agent = spec.agent ?? 0;
  const rawSups = spec.supervisors ?? [spec.keys];
  const supervisors = rawSups.map((s, i) =>
    isKeyList(s) ? { agent: agent + 1 + i, keys: [...s] } : { agent: s.agent, keys: [...s.keys] },
  );
  const agents = spec.agents ?? Math.max(agent + 1, ...supervisors.map((s) => s.agent + 1));
  const rng = new Rng(spec.seed ?? 1);
  const completions: CompletionInput[] = spec.keys.map((key, k) => {
    const text = spec.texts?.[k] ?? completionText(key);
    const length = text.length;
    return {
      text,
      length,
      tokenIds: Array.from({ length }, (_, i) => text.charCodeAt(i)),
      finishReason: spec.finishReasons?.[k] ?? 'stop',
      ...(spec.tokenStats
        ? {
            entropies: Array.from({ length }, () => rng.next() * 2),
            meanLogprobs: Array.from({ length }, () => -3 - rng.next() * 2),
          }
        : {}),
    };
  });
  const reference = typeof spec.reference === 'string' ? { answer: spec.reference } : spec.reference;
  return {
    problem: spec.problem ?? { id: 'p1', prompt: 'What is 2 + 2?' },
    prompt: spec.problem?.prompt ?? 'What is 2 + 2?',
    agent,
    agents,
    step: spec.step ?? 0,
    ...(spec.totalSteps !== undefined ? { totalSteps: spec.totalSteps } : {}),
    ...(spec.round !== undefined ? { round: spec.round } : {}),
    completions,
    answers: [...spec.keys],
    keys: [...spec.keys],
    supervisors,
    ...(reference ? { reference } : {}),
  };
}

/**
 * A {@link RewardContext} exactly as `corl train` and `corl serve` build it: the pipeline's own
 * builder (core/reward/context.ts) over {@link rewardGroup}, so it is deep-frozen and its
 * equivalence is the pipeline's facade of `key` and `equal`. A source that changes its context
 * (sorts `completions`, say) throws here as it would in a run.
 */
export function rewardContext(spec: RewardContextSpec): RewardContext {
  return pipelineContext(rewardGroup(spec), spec.equivalence ?? exactEquivalence);
}

/** A record of every attempt to reach ground truth. */
export interface GroundTruthTripwire {
  /** A {@link GroundTruth} that records each access and answers the canary references (none by default). */
  readonly groundTruth: GroundTruth;
  /** A {@link Task} whose `load()` records the call and returns the canary references as its data. */
  readonly task: Task;
  /** What was touched, e.g. `GroundTruth.get("p1")`, `Task.load()`. */
  readonly touches: string[];
}

/**
 * Tripwires for label-free sources: hand `groundTruth` and `task` to `createPlugin` (its
 * `groundTruth` and `task` options) as a run would hold them; corl withholds both from a source that
 * does not declare `readsGroundTruth`, so `touches` stays empty. `canary` maps problem ids to the
 * references the wire answers with, so that rewards which followed them would show it.
 */
export function groundTruthTripwire(canary: Readonly<Record<string, Reference>> = {}): GroundTruthTripwire {
  const touches: string[] = [];
  const groundTruth: GroundTruth = {
    get(problemId: string) {
      touches.push(`GroundTruth.get(${JSON.stringify(problemId)})`);
      return Object.prototype.hasOwnProperty.call(canary, problemId) ? canary[problemId] : undefined;
    },
    get size() {
      touches.push('GroundTruth.size');
      return Object.keys(canary).length;
    },
  };
  const task: Task = {
    async load() {
      touches.push('Task.load()');
      return { train: [], heldOut: [], groundTruth };
    },
  };
  return { groundTruth, task, touches };
}
