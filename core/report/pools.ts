// A plan's checkpoint pools: a family is a pretraining recipe, not one file, so a planned
// comparison draws each seed's base checkpoints from several pretraining seeds per family. The
// assignment of pool member to seed index is a pure function of the plan, the config's agents and
// the index: `corl compare` applies it, the plan checks of a report verify it.
import { CorlError } from '../errors';
import { canonicalJson, configDigest, PLAN_OMIT } from './identity';
import type { Plan } from './design';

/** One checkpoint of a pool: its folder (relative to the plan's project root) and the sha256 of files in it. */
export interface PoolMember {
  readonly path: string;
  /** File name inside the folder → sha256 (hex) of its bytes (`sha256sum <folder>/<file>`). */
  readonly sha256: Readonly<Record<string, string>>;
}

/** A plan's `checkpoints`: per family, its pool; the policy option a member is handed as. */
export interface CheckpointPools {
  readonly pools: Readonly<Record<string, readonly PoolMember[]>>;
}

/** The fewest checkpoints a pool holds: a family's verdict should cover several pretraining seeds. */
export const MIN_POOL = 4;

/** Where an agent's checkpoint lives in a config: the policy option the pool member replaces. */
export const CHECKPOINT_OPTION = 'checkpoint';

/** One agent's pool member at one seed index. */
export interface PoolDraw {
  /** The agent's index in the config. */
  readonly agent: number;
  readonly family: string;
  /** Index of the member in the family's pool. */
  readonly member: number;
  /** The member's folder, as the plan writes it. */
  readonly path: string;
}

/** The `family` option of each agent's policy (undefined where there is none). */
export function agentFamilies(source: unknown): (string | undefined)[] {
  const agents = (source as { agents?: unknown } | undefined)?.agents;
  if (!Array.isArray(agents)) return [];
  return agents.map((a) => {
    const f = (a as { policy?: { options?: { family?: unknown } } } | undefined)?.policy?.options?.family;
    return typeof f === 'string' ? f : undefined;
  });
}

/**
 * The pool member of every agent at seed index `index`: the k-th agent of family F (k = 0, 1, … in
 * the config's agent order, counting agents of F only) gets member (index + k) mod |pool F|. So at
 * a given seed every config draws the same first checkpoint of each family (paired configs share
 * their base checkpoints), two agents of one family always get different checkpoints, and over
 * |pool| consecutive seeds each member is drawn equally often. `where` names the config in errors.
 */
export function poolDraws(
  pools: CheckpointPools,
  families: readonly (string | undefined)[],
  index: number,
  where: string,
): PoolDraw[] {
  const seen = new Map<string, number>();
  return families.map((family, agent) => {
    if (family === undefined)
      throw new CorlError(
        'CORL_ERR_PLAN_MISMATCH',
        `expected agents[${agent}] of ${where} to name its policy's "family", got none: the plan draws checkpoints by family`,
        {
          where: `${where} agents[${agent}].policy.options.family`,
          hint: `the plan's pools are ${Object.keys(pools.pools).join(', ')}`,
        },
      );
    const pool = pools.pools[family];
    if (!pool)
      throw new CorlError(
        'CORL_ERR_PLAN_MISMATCH',
        `expected agents[${agent}] of ${where} to be of a family the plan pools, got "${family}"`,
        {
          where: `${where} agents[${agent}].policy.options.family`,
          hint: `the plan's pools are ${Object.keys(pools.pools).join(', ')}: add a pool for "${family}" in a new plan`,
        },
      );
    const k = seen.get(family) ?? 0;
    seen.set(family, k + 1);
    if (k >= pool.length)
      throw new CorlError(
        'CORL_ERR_PLAN_MISMATCH',
        `expected at most ${pool.length} agents of family "${family}" in ${where} (its pool's size), got more: two would share a checkpoint`,
        { where: `${where} agents[${agent}]`, hint: `add checkpoints to the pool of "${family}" in a new plan` },
      );
    const member = (index + k) % pool.length;
    return { agent, family, member, path: pool[member]!.path };
  });
}

/** A config source without its seed and, under a plan with pools, without its agents' checkpoints (the pool sets those). */
function planned(source: unknown, plan: Pick<Plan, 'checkpoints'>): unknown {
  if (!plan.checkpoints || !source || typeof source !== 'object' || Array.isArray(source)) return source;
  const s = JSON.parse(canonicalJson(source)) as { agents?: unknown };
  if (Array.isArray(s.agents))
    for (const a of s.agents) {
      const o = (a as { policy?: { options?: Record<string, unknown> } } | undefined)?.policy?.options;
      if (o && typeof o === 'object') delete o[CHECKPOINT_OPTION];
    }
  return s;
}

/** What a plan pins of a config: its content without the seed, and without the checkpoints a pool draws. */
export function plannedDigest(source: unknown, plan: Pick<Plan, 'checkpoints'>): string {
  return configDigest(planned(source, plan), PLAN_OMIT);
}

/** Whether a checkpoint path as a run's config writes it names the pool member's folder (written relative to another folder). */
export function namesMember(written: unknown, member: string): boolean {
  if (typeof written !== 'string') return false;
  const norm = (p: string): string[] =>
    p
      .replace(/\\/g, '/')
      .split('/')
      .filter((x) => x !== '' && x !== '.');
  const w = norm(written);
  const m = norm(member);
  return m.length > 0 && w.length >= m.length && m.every((x, i) => w[w.length - m.length + i] === x);
}
