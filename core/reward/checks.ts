// What the pipeline accepts from a reward source, and the codes of what it refuses (core/errors/codes/reward.ts):
// CORL_ERR_REWARD_OUTPUT for output that breaks the contract, CORL_ERR_REWARD_FAILED for an uncoded throw.
import type { RewardResult } from '../contracts/reward-source';
import { CorlError, isCorlError } from '../errors';
import { isAnswer } from '../voting/match';

/** Who and what a check speaks of in its message: the source's config name, and the group. */
export interface CheckSubject {
  /** The reward source's name in the config (`reward.use`). */
  readonly use: string;
  /** The group, for the message, e.g. `problem "p7" of agent 0 (alpha) at step 3`. */
  readonly what: string;
  /** The config path the error points at (`where`). */
  readonly where?: string;
}

/** A result of `score` once checked: plain copies, label and own label as given, finite metrics only. */
export interface CheckedResult {
  readonly rewards: readonly number[];
  readonly label?: string | null;
  readonly ownLabel?: string | null;
  /** The source's metrics whose values are finite numbers (a non-finite one is not reported). */
  readonly metrics: Readonly<Record<string, number>>;
}

/**
 * Check what `score` returned for a group of `k` completions and copy it: `{ rewards }` with `k`
 * finite numbers, `label` and `ownLabel` a string, null or absent, `metrics` an object of numbers
 * or absent. Anything else is CORL_ERR_REWARD_OUTPUT, naming what came back.
 */
export function checkResult(result: unknown, k: number, s: CheckSubject): CheckedResult {
  const bad = (got: string, hint?: string): CorlError =>
    new CorlError('CORL_ERR_REWARD_OUTPUT', `expected ${k} finite rewards from "${s.use}" for ${s.what}, got ${got}`, {
      ...(s.where !== undefined ? { where: s.where } : {}),
      ...(hint !== undefined ? { hint } : {}),
    });
  if (Array.isArray(result)) throw bad('a bare array', 'score() returns { rewards: [...] }, one reward per completion');
  const r = result as Partial<Record<keyof RewardResult, unknown>> | null | undefined;
  if (!r || typeof r !== 'object') throw bad(String(result));
  if (!Array.isArray(r.rewards)) throw bad(`rewards: ${typeof r.rewards}`);
  if (r.rewards.length !== k) throw bad(`${r.rewards.length}`);
  const rewards = [...(r.rewards as unknown[])];
  rewards.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(`${String(v)} for completion ${i}`);
  });
  for (const name of ['label', 'ownLabel'] as const) {
    const v = r[name];
    if (v !== undefined && v !== null && typeof v !== 'string')
      throw new CorlError(
        'CORL_ERR_REWARD_OUTPUT',
        `expected ${name} from "${s.use}" for ${s.what} to be a string, null or absent, got ${typeof v}`,
        s.where !== undefined ? { where: s.where } : {},
      );
  }
  if (r.metrics !== undefined && (r.metrics === null || typeof r.metrics !== 'object' || Array.isArray(r.metrics)))
    throw new CorlError(
      'CORL_ERR_REWARD_OUTPUT',
      `expected metrics from "${s.use}" for ${s.what} to be an object of numbers, got ${Array.isArray(r.metrics) ? 'an array' : String(r.metrics)}`,
      s.where !== undefined ? { where: s.where } : {},
    );
  const metrics: Record<string, number> = {};
  for (const [name, v] of Object.entries((r.metrics ?? {}) as Record<string, unknown>))
    if (typeof v === 'number' && Number.isFinite(v)) metrics[name] = v;
  return {
    rewards: rewards as number[],
    ...(r.label !== undefined ? { label: r.label as string | null } : {}),
    ...(r.ownLabel !== undefined ? { ownLabel: r.ownLabel as string | null } : {}),
    metrics,
  };
}

/**
 * Check the answer keys of a group of `k` completions (a reward source's own `answerKeys`): one
 * string or null each, else CORL_ERR_REWARD_OUTPUT. Keys that are no answer (`''`) become null.
 */
export function checkKeys(keys: unknown, k: number, s: CheckSubject): (string | null)[] {
  const ok = Array.isArray(keys) && keys.length === k && keys.every((x) => x === null || typeof x === 'string');
  if (!ok)
    throw new CorlError(
      'CORL_ERR_REWARD_OUTPUT',
      `expected ${k} answer keys (a string or null each) from "${s.use}" for ${s.what}, got ${
        Array.isArray(keys) ? `${keys.length}: ${JSON.stringify(keys)?.slice(0, 80)}` : typeof keys
      }`,
      s.where !== undefined ? { where: s.where } : {},
    );
  return (keys as (string | null)[]).map((x) => (isAnswer(x) ? x : null));
}

/** A failure of the reward path: a coded error keeps its code, anything else becomes CORL_ERR_REWARD_FAILED. */
export function rewardFailure(e: unknown, what: string): CorlError {
  if (isCorlError(e)) return e;
  return new CorlError(
    'CORL_ERR_REWARD_FAILED',
    `expected ${what} to succeed, got ${(e as Error)?.message ?? String(e)}`,
    { cause: e },
  );
}
