import type { FinishReason } from '../contracts/completion';
import type { Problem } from '../contracts/problem';
import type { AgentAnswers, CompletionView, RewardContext, RewardResult } from '../contracts/reward-source';
import { CorlError, isCorlError } from '../errors';
import { matches } from '../voting/plurality';
import type { ServeRuntime } from './setup';
import { mapPacked } from '../util/arrays';

/** One posted completion. */
export interface PostedCompletion {
  readonly text: string;
  /** Generated tokens, when the client knows them (else the text's length in characters stands in). */
  readonly length?: number;
  readonly finishReason?: FinishReason;
}

/** One group as a client posts it: the K completions of one prompt. */
export interface PostedGroup {
  /** Group id: the same problem carries the same id in every agent's posts (verl's uid, a dataset id). */
  readonly id: string;
  readonly prompt: string;
  readonly completions: readonly PostedCompletion[];
  /** Reference answer, required when the reward source reads ground truth. */
  readonly reference?: string;
  /** Inputs of code tasks (Problem.testInputs). */
  readonly testInputs?: readonly (readonly string[])[];
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
}

/** Scores groups with the runtime's reward source, exactly as the trainer builds a {@link RewardContext}. */
export class Scorer {
  /** Raw answers found while computing a posted group's keys, so that scoring it extracts nothing again. */
  private readonly answers = new WeakMap<PostedGroup, readonly (string | null)[]>();

  constructor(private readonly rt: ServeRuntime) {}

  /** The problem a group stands for (never carrying the reference). */
  problem(group: PostedGroup): Problem {
    return { id: group.id, prompt: group.prompt, ...(group.testInputs ? { testInputs: group.testInputs } : {}) };
  }

  /** The answer keys a group's completions vote with. */
  async keys(group: PostedGroup): Promise<(string | null)[]> {
    try {
      if (!this.rt.reward.answerKeys) {
        // The run's extractor and equivalence: answer and key of each text in one pass.
        const found = mapPacked(group.completions, (c) => this.rt.keys.of(c.text));
        this.answers.set(
          group,
          mapPacked(found, (f) => f.answer),
        );
        return mapPacked(found, (f) => (typeof f.key === 'string' && f.key !== '' ? f.key : null));
      }
      const keys = await this.rt.keys.forReward(
        this.problem(group),
        group.completions.map((c) => c.text),
      );
      if (!Array.isArray(keys) || keys.length !== group.completions.length) {
        throw new CorlError(
          'CORL_ERR_REWARD_OUTPUT',
          `expected ${group.completions.length} answer keys from "${this.rt.config.reward.use}", got ${Array.isArray(keys) ? keys.length : typeof keys}`,
        );
      }
      return mapPacked(keys, (k) => (typeof k === 'string' && k !== '' ? k : null));
    } catch (e) {
      throw failure(e, `answer keys of group "${group.id}"`);
    }
  }

  /** Score one agent's group against the given supervisors' answers. */
  async score(
    agent: number,
    step: number,
    group: PostedGroup,
    keys: readonly (string | null)[],
    supervisors: readonly AgentAnswers[],
    source: LabelSource,
  ): Promise<GroupAnswer> {
    const rt = this.rt;
    const own: AgentAnswers = { agent, keys };
    const raw = rt.reward.answerKeys ? undefined : this.answers.get(group);
    const completions: CompletionView[] = mapPacked(group.completions, (c, k) => ({
      text: c.text,
      answer: rt.reward.answerKeys ? (keys[k] ?? null) : raw ? (raw[k] ?? null) : rt.keys.of(c.text).answer,
      key: keys[k] ?? null,
      length: c.length ?? c.text.length,
      finishReason: c.finishReason ?? 'stop',
    }));
    const ctx: RewardContext = {
      problem: this.problem(group),
      prompt: group.prompt,
      agent,
      agents: rt.agents.length,
      step,
      completions,
      own,
      supervisors,
      // A source that reads references compares answers with them through the grading equivalence.
      equivalence: rt.grading ?? rt.equivalence,
      ...(rt.supervised && group.reference !== undefined ? { reference: { answer: group.reference } } : {}),
    };
    let result: RewardResult;
    try {
      result = await rt.reward.score(ctx);
    } catch (e) {
      throw failure(e, `the reward of group "${group.id}"`);
    }
    if (
      !result ||
      !Array.isArray(result.rewards) ||
      result.rewards.length !== keys.length ||
      result.rewards.some((r) => typeof r !== 'number' || !Number.isFinite(r))
    ) {
      throw new CorlError(
        'CORL_ERR_SERVE_REWARD_FAILED',
        `expected ${keys.length} finite rewards from "${rt.config.reward.use}" for group "${group.id}", got ${JSON.stringify(result?.rewards)?.slice(0, 80)}`,
      );
    }
    let agree: number | undefined;
    if (result.label != null && result.ownLabel != null)
      agree = (await matches(result.label, result.ownLabel, rt.grading ?? rt.equivalence)) ? 1 : 0;
    const metrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(result.metrics ?? {}))
      if (typeof v === 'number' && Number.isFinite(v)) metrics[k] = v;
    return {
      id: group.id,
      rewards: [...result.rewards],
      keys: [...keys],
      ...(result.label !== undefined ? { label: result.label } : {}),
      ...(result.ownLabel !== undefined ? { ownLabel: result.ownLabel } : {}),
      source,
      ...(agree !== undefined ? { agree } : {}),
      metrics,
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

function failure(e: unknown, what: string): CorlError {
  if (isCorlError(e, 'CORL_ERR_SERVE_REWARD_FAILED')) return e;
  const msg = isCorlError(e) ? e.message : ((e as Error)?.message ?? String(e));
  return new CorlError('CORL_ERR_SERVE_REWARD_FAILED', `expected ${what} to succeed, got ${msg}`, { cause: e });
}

/** Request-level summary of a list of answers (deterministic: computed from stored answers only). */
export function summarize(answers: readonly GroupAnswer[]): Record<string, number> {
  // Plain loops, summing in the same order as a mean over the flattened lists (the same floats):
  // this runs once per request, and a fresh service runs it in the interpreter.
  let count = 0;
  let sum = 0;
  for (const a of answers)
    for (const r of a.rewards) {
      sum += r;
      count++;
    }
  const mu = count ? sum / count : 0;
  let squares = 0;
  for (const a of answers) for (const r of a.rewards) squares += (r - mu) * (r - mu);
  let flat = 0;
  let labeled = 0;
  let withLabel = 0;
  let agreeing = 0;
  let agreed = 0;
  let fallbacks = 0;
  for (const a of answers) {
    const r = a.rewards;
    let same = 1;
    for (let i = 1; i < r.length; i++) if (r[i] !== r[0]) same = 0;
    flat += same;
    if (a.label !== undefined) {
      labeled++;
      if (a.label !== null) withLabel++;
    }
    if (a.agree !== undefined) {
      agreeing++;
      agreed += a.agree;
    }
    if (a.source === 'self' || a.source === 'zero') fallbacks++;
  }
  const n = answers.length;
  const m: Record<string, number> = {};
  m['reward/mean'] = mu;
  m['reward/std'] = count > 1 ? Math.sqrt(squares / (count - 1)) : 0;
  m['reward/frac_zero_std'] = n ? flat / n : 0;
  if (labeled) m['label/labeled_fraction'] = withLabel / labeled;
  if (agreeing) m['label/peer_agreement'] = agreed / agreeing;
  m['exchange/fallback_fraction'] = n ? fallbacks / n : 0;
  // The reward source's metrics: per name (first-seen order), the mean over the answers that have it.
  const metrics = new Map<string, { sum: number; count: number }>();
  for (const a of answers)
    for (const k in a.metrics) {
      const v = a.metrics[k];
      if (v === undefined) continue;
      const acc = metrics.get(k);
      if (!acc) metrics.set(k, { sum: v, count: 1 });
      else {
        acc.sum += v;
        acc.count++;
      }
    }
  for (const [k, acc] of metrics) m[k] = acc.sum / acc.count;
  return m;
}
