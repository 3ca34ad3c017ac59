import type { FinishReason } from '../contracts/completion';
import type { Problem } from '../contracts/problem';
import type { AgentAnswers } from '../contracts/reward-source';
import type { WorkOptions } from '../contracts/work';
import { CorlError, isCorlError } from '../errors';
import { gradeGroup, labelStats, rewardStats, sourceStats, type GroupGrade } from '../reward/metrics';
import { referenceKey } from '../reward/grade';
import { RewardPipeline } from '../reward/pipeline';
import type { ExchangeEvents } from './exchange';
import type { ServeRuntime } from './setup';
import { mapPacked } from '../util/arrays';
import { capAnswer, capKeys } from './keys';
import { inPhase, type RequestWork } from './work';

/** One posted completion. */
export interface PostedCompletion {
  readonly text: string;
  /** Generated tokens, when the client knows them (else the text's length in characters stands in). */
  readonly length?: number;
  readonly finishReason?: FinishReason;
  /** Per-token entropy H(p_t) in nats, one per generated token (RENT). */
  readonly entropies?: readonly number[];
  /** Per-token mean over the vocabulary of log p_t(v), one per generated token (Intuitor). */
  readonly meanLogprobs?: readonly number[];
}

/** One group as a client posts it: the K completions of one prompt. */
export interface PostedGroup {
  /** Group id: the same problem carries the same id in every agent's posts (verl's uid, a dataset id). */
  readonly id: string;
  /**
   * The id plugins see as `problem.id`, where it must differ from the exchange id: a group keyed by
   * its label (POST /get_reward, `getReward.groupBy: "label"`) shows a keyed digest, never the label.
   */
  readonly problemId?: string;
  readonly prompt: string;
  readonly completions: readonly PostedCompletion[];
  /** Reference answer, required when the reward source reads ground truth. */
  readonly reference?: string;
  /** Inputs of code tasks (Problem.testInputs). */
  readonly testInputs?: readonly (readonly string[])[];
  /** POST /v1/samples: each completion's sample, stored with the answer so that a retry finds its reward. */
  readonly members?: readonly SampleMember[];
  /**
   * POST /v1/samples without a step: the rollout tag its samples carried (verl's uid), stored with
   * the answer so that a sample of that rollout arriving later, also after a restart, finds its round.
   */
  readonly rollout?: string;
}

/** A sample of a group formed by POST /v1/samples: its id (request id, or position) and fingerprint. */
export interface SampleMember {
  readonly id: string;
  /** What a retry of the sample must repeat (its completion and reference). */
  readonly h: string;
}

/** Where a group's label came from. */
export type LabelSource = 'supervisors' | 'partial' | 'self' | 'zero';

/** The stored, replayable answer for one agent and one group. */
export interface GroupAnswer {
  readonly id: string;
  /** One reward per completion, in order. */
  readonly rewards: readonly number[];
  /** The agent's own answer keys (what its peers vote with). */
  readonly keys: readonly (string | null)[];
  /** The pseudo-label rewarded against (null: no label); absent when the source uses no label. */
  readonly label?: string | null;
  /** The label the agent's own answers give, when the source computes one. */
  readonly ownLabel?: string | null;
  /** supervisors: every supervisor's answers arrived; partial: some did; self / zero: the fallback. */
  readonly source: LabelSource;
  /** Whether label and ownLabel agree (1/0), when both exist. */
  readonly agree?: number;
  /** The reward source's per-group metrics. */
  readonly metrics: Readonly<Record<string, number>>;
  /**
   * Diagnostics against the reference the trainer sent with a label-free reward (which never saw
   * it): 1/0 whether the label matches it, absent without a label or a reference.
   */
  readonly labelRight?: number;
  /** Per completion 1/0: its reward is the one a ground-truth reward would give (0/1 rewards only). */
  readonly rewardRight?: readonly number[];
  /** POST /v1/samples: the sample of each completion, aligned with `rewards`. */
  readonly members?: readonly SampleMember[];
  /** POST /v1/samples without a step: the rollout tag of the group's samples (journaled with the answer). */
  readonly rollout?: string;
}

/** Scores groups with the runtime's reward source through the reward pipeline the trainer uses (core/reward). */
export class Scorer {
  private readonly pipeline: RewardPipeline;

  constructor(
    private readonly rt: ServeRuntime,
    private readonly events: Pick<ExchangeEvents, 'graded'> = {},
  ) {
    this.pipeline = new RewardPipeline({
      reward: rt.reward,
      use: rt.config.reward.use,
      keys: rt.keys,
      // A source that reads references compares answers with them through the grading equivalence,
      // the one the service trusts with references; a label-free equivalence never sees one.
      equivalence: rt.readsGroundTruth ? (rt.grading ?? rt.equivalence) : rt.equivalence,
    });
  }

  /** The problem a group stands for (never carrying the reference). */
  problem(group: PostedGroup): Problem {
    return {
      id: group.problemId ?? group.id,
      prompt: group.prompt,
      ...(group.testInputs ? { testInputs: group.testInputs } : {}),
    };
  }

  /** The answer keys a group's completions vote with (`work`: whom for, and until when; core/contracts/work.ts). */
  async keys(group: PostedGroup, work?: WorkOptions): Promise<(string | null)[]> {
    const { keys } = await this.pipeline.answers(
      this.problem(group),
      mapPacked(group.completions, (c) => c.text),
      `group "${group.id}"`,
      work,
    );
    return keys;
  }

  /**
   * A group scored against its own answers alone (a self-supervised agent, or a reward scored per
   * sample): its keys, then its rewards, each a phase of `req` ("the answer keys of <what>", "the
   * rewards of <what>"), keys and labels bounded at `serve.maxKeyChars`.
   */
  async scoreAlone(
    agent: number,
    step: number,
    group: PostedGroup,
    req: RequestWork | undefined,
    what: string,
  ): Promise<GroupAnswer> {
    const max = this.rt.settings.maxKeyChars;
    const keys = await inPhase(req, `the answer keys of ${what}`, async (w) => capKeys(await this.keys(group, w), max));
    const answer = await inPhase(req, `the rewards of ${what}`, (w) =>
      this.score(agent, step, group, keys, [{ agent, keys }], 'supervisors', w),
    );
    return capAnswer(answer, max);
  }

  /** Score one agent's group against the given supervisors' answers. */
  async score(
    agent: number,
    step: number,
    group: PostedGroup,
    keys: readonly (string | null)[],
    supervisors: readonly AgentAnswers[],
    source: LabelSource,
    work?: WorkOptions,
  ): Promise<GroupAnswer> {
    const rt = this.rt;
    // The answers as keys() found them, from the same key cache (keys travel apart from their group: peers wait on them).
    const answers = this.pipeline.rawAnswers(
      mapPacked(group.completions, (c) => c.text),
      `group "${group.id}"`,
    );
    const result = await this.pipeline
      .score(
        {
          problem: this.problem(group),
          prompt: group.prompt,
          agent,
          agents: rt.agents.length,
          step,
          completions: mapPacked(group.completions, (c) => ({
            text: c.text,
            length: c.length ?? c.text.length,
            finishReason: c.finishReason ?? 'stop',
            ...(c.entropies ? { entropies: c.entropies } : {}),
            ...(c.meanLogprobs ? { meanLogprobs: c.meanLogprobs } : {}),
          })),
          answers,
          keys,
          supervisors,
          ...(rt.readsGroundTruth && group.reference !== undefined ? { reference: { answer: group.reference } } : {}),
        },
        `group "${group.id}" of agent "${rt.agents[agent]}" at step ${step}`,
        work,
      )
      .catch((e: unknown) => {
        throw tokenStatsRefusal(e, group, rt.config.reward.use);
      });
    const grade = await this.grade(group, result, keys);
    if (grade.labelRight !== undefined || grade.rewardRight)
      this.events.graded?.(agent, grade.labelRight, grade.rewardRight);
    return {
      id: group.id,
      rewards: result.rewards,
      keys: [...keys],
      ...(result.label !== undefined ? { label: result.label } : {}),
      ...(result.ownLabel !== undefined ? { ownLabel: result.ownLabel } : {}),
      source,
      ...(result.agree !== undefined ? { agree: result.agree } : {}),
      metrics: result.metrics,
      ...grade,
    };
  }

  /**
   * TTRL's diagnostics of a label-free reward: the group's label and rewards graded against the
   * reference its trainer sent (verl's ground_truth, a TRL column, OpenRLHF's labels), through the
   * grading equivalence. The reward source and its extractor and equivalence never see the reference;
   * it reaches only this agent's own reply as two numbers.
   */
  private async grade(
    group: PostedGroup,
    result: { readonly rewards: readonly number[]; readonly label?: string | null },
    keys: readonly (string | null)[],
  ): Promise<{ labelRight?: number; rewardRight?: readonly number[] }> {
    const grading = this.rt.grading;
    if (this.rt.readsGroundTruth || !grading || group.reference === undefined) return {};
    const g = await gradeGroup(result, keys, referenceKey({ answer: group.reference }, grading), undefined, grading);
    return {
      ...(g.labelRight !== undefined ? { labelRight: g.labelRight } : {}),
      ...(g.rewardRight ? { rewardRight: g.rewardRight } : {}),
    };
  }

  /** The `zero` fallback: no label, every reward 0. */
  zero(group: PostedGroup, keys: readonly (string | null)[]): GroupAnswer {
    return {
      id: group.id,
      rewards: mapPacked(keys, () => 0),
      keys: [...keys],
      label: null,
      source: 'zero',
      metrics: {},
    };
  }
}

/**
 * Request-level summary of a list of answers (deterministic: computed from stored answers only): the
 * reward and label metrics of core/reward/metrics.ts, `exchange/fallback_fraction`, and the mean of
 * each reward source metric.
 */
export function summarize(answers: readonly GroupAnswer[]): Record<string, number> {
  let fallbacks = 0;
  for (const a of answers) if (a.source === 'self' || a.source === 'zero') fallbacks++;
  return {
    ...rewardStats(answers),
    ...labelStats(answers, answers.map(gradeOf)),
    'exchange/fallback_fraction': answers.length ? fallbacks / answers.length : 0,
    ...sourceStats(answers),
  };
}

/** A stored answer's diagnostics as the label metrics read them (`label/accuracy`, `reward/accuracy`). */
export function gradeOf(a: GroupAnswer): GroupGrade | undefined {
  if (a.labelRight === undefined && a.rewardRight === undefined) return undefined;
  return {
    ...(a.labelRight !== undefined ? { labelRight: a.labelRight } : {}),
    ...(a.rewardRight ? { rewardRight: a.rewardRight } : {}),
  };
}

/** One sample's diagnostics (completion `k` of its group): `label/accuracy`, `reward/accuracy`. */
export function sampleGrades(a: GroupAnswer, k: number): Record<string, number> {
  const m: Record<string, number> = {};
  if (a.labelRight !== undefined) m['label/accuracy'] = a.labelRight;
  const right = a.rewardRight?.[k];
  if (right !== undefined) m['reward/accuracy'] = right;
  return m;
}

/**
 * The reward's refusal of a completion's per-token statistics (CORL_ERR_REWARD_TOKEN_STATS: RENT
 * without entropies, Intuitor without meanLogprobs) is the client's to fix: a 400 naming the group
 * and the field it lacks, not a 500. The request check (routes/route.ts) only knows that some
 * statistic is needed, not which one.
 */
function tokenStatsRefusal(e: unknown, group: PostedGroup, use: string): unknown {
  if (!isCorlError(e, 'CORL_ERR_REWARD_TOKEN_STATS')) return e;
  const field = /meanLogprobs/.test(e.message) ? 'meanLogprobs' : 'entropies';
  const missing = group.completions.filter((c) => c[field] === undefined).length;
  return new CorlError(
    'CORL_ERR_SERVE_BAD_REQUEST',
    missing
      ? `expected every completion of group "${group.id}" to carry ${field} (one per generated token) because "${use}" reads them, got ${missing} of ${group.completions.length} without`
      : `expected the ${field} of group "${group.id}" to be what "${use}" reads, got: ${e.message}`,
    {
      where: `completions[].${field}`,
      hint: `send ${field} with each completion (docs/guide/serve.md "Lengths and token statistics")`,
    },
  );
}
