// Whether a planned comparison's runs followed its plan: the configs (each run's config against the
// planned file's content), the split, the seeds, and the looks at which results were read.
import * as path from 'node:path';
import type { Plan, PlanRecord } from './design';
import type { ReportGroup } from './html';
import { agentFamilies, CHECKPOINT_OPTION, namesMember, plannedDigest, poolDraws } from './pools';
import { seedIndex } from './paired';
import { ranges, type Read } from './reads';
import { readUserText } from '../util/files';

/** One check of a plan against its runs. */
export interface PlanCheck {
  readonly ok: boolean;
  readonly text: string;
}

/** The checks, and whether all of them hold. */
export interface FollowResult {
  readonly followed: boolean;
  readonly checks: readonly PlanCheck[];
  /**
   * Whether the plan is proven written before its runs: every run recorded the plan's sha256 in its
   * run.json at its start. Not ok for a plan attached later (`corl report --plan`), which says so.
   */
  readonly before: PlanCheck;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readUserText(file)) as unknown;
  } catch {
    return undefined;
  }
}

/** Check the runs of a comparison folder against the plan it records. */
export function followPlan(
  record: PlanRecord,
  groups: readonly ReportGroup[],
  reads: readonly Read[],
  ledger: readonly string[] = [],
): FollowResult {
  const p = record.plan;
  const checks: PlanCheck[] = [
    configsCheck(record, groups),
    splitCheck(p, groups),
    seedsCheck(p, groups),
    ledger.length
      ? {
          ok: false,
          text: `reads: the ledger is damaged (${ledger.join('; ')}), so the reads of this folder are not known`,
        }
      : readsCheck(p, reads),
  ];
  return { followed: checks.every((c) => c.ok), checks, before: beforeCheck(record, groups) };
}

/** The plan's sha256 in every run's run.json, recorded when the run started: the proof that the plan came first. */
function beforeCheck(record: PlanRecord, groups: readonly ReportGroup[]): PlanCheck {
  const without: string[] = [];
  let runs = 0;
  for (const g of groups)
    for (const run of g.runs) {
      runs++;
      const meta = readJson(path.join(run.dir, 'run.json')) as { plan?: { sha256?: unknown } } | undefined;
      if (meta?.plan?.sha256 !== record.sha256) without.push(`${g.name}/${path.basename(run.dir)}`);
    }
  const shown =
    without.length > 6 ? `${without.slice(0, 6).join(', ')} and ${without.length - 6} more` : without.join(', ');
  if (record.attached)
    return {
      ok: false,
      text: `attached after its runs (${record.attached})${without.length ? `; ${without.length} of ${runs} run(s) started without it: ${shown}` : ''}`,
    };
  if (runs === 0) return { ok: true, text: 'written before its runs (none yet)' };
  return without.length
    ? {
        ok: false,
        text: `not shown to be written before its runs: ${without.length} of ${runs} run(s) recorded no sha256 of this plan at their start: ${shown}`,
      }
    : {
        ok: true,
        text: `written before its runs (each of the ${runs} run(s) recorded the plan's sha256 at its start)`,
      };
}

function configsCheck(record: PlanRecord, groups: readonly ReportGroup[]): PlanCheck {
  const p = record.plan;
  const planned = new Set(p.configs.map((c) => c.name));
  const extra = groups.filter((g) => !planned.has(g.name)).map((g) => g.name);
  if (extra.length) return { ok: false, text: `configs: runs of configs the plan does not name: ${extra.join(', ')}` };
  if (!record.configs)
    return {
      ok: false,
      text: `configs: ${p.configs.length} planned; the runs' configs were not checked against the planned files (no digests recorded)`,
    };
  const wrong: string[] = [];
  for (const g of groups) {
    const want = record.configs.find((c) => c.name === g.name);
    for (const run of g.runs) {
      const source = readJson(path.join(run.dir, 'config.source.json')) as { seed?: unknown } | undefined;
      const i = seedIndex(run);
      const okSeed = want && i !== undefined && source?.seed === want.seed + 1000 * i;
      if (!want || !source || plannedDigest(source, p) !== want.digest || !okSeed || !drawnFromPools(p, source, i!))
        wrong.push(`${g.name}/${path.basename(run.dir)}`);
    }
  }
  return wrong.length
    ? { ok: false, text: `configs: runs whose config or seed is not the planned one: ${wrong.join(', ')}` }
    : {
        ok: true,
        text: `configs: every run's config is its planned file's (sha256 checked${record.attached ? ' when the plan was attached' : ' when the runs started'}), seed = config seed + 1000·i${
          p.checkpoints
            ? `; base checkpoints drawn from the plan's pools (${Object.entries(p.checkpoints.pools)
                .map(([f, m]) => `${f} ${m.length}`)
                .join(', ')}) by seed index`
            : ''
        }`,
      };
}

/** Under checkpoint pools: each agent of the run loaded the member the plan's rule draws at its seed index. */
function drawnFromPools(p: Plan, source: unknown, i: number): boolean {
  if (!p.checkpoints) return true;
  try {
    const agents = (source as { agents: { policy?: { options?: Record<string, unknown> } }[] }).agents;
    return poolDraws(p.checkpoints, agentFamilies(source), i, 'the run').every((d) =>
      namesMember(agents[d.agent]?.policy?.options?.[CHECKPOINT_OPTION], d.path),
    );
  } catch {
    return false;
  }
}

function splitCheck(p: Plan, groups: readonly ReportGroup[]): PlanCheck {
  const splits = new Set(
    groups.flatMap((g) =>
      g.runs.map((r) => {
        const c = readJson(path.join(r.dir, 'config.json')) as { eval?: { split?: unknown } } | undefined;
        return c?.eval?.split === 'validation' ? 'validation' : 'held-out';
      }),
    ),
  );
  const ok = [...splits].every((s) => s === p.split);
  const text = `split: ${ok ? p.split : `planned ${p.split}, runs evaluated on ${[...splits].join(' and ')}`}`;
  const h = p.heldOut;
  if (!h) return { ok, text };
  // the plan's fresh held-out set: every run's task drew it (heldOutSeed and heldOut as planned)
  const other = groups.flatMap((g) =>
    g.runs
      .filter((r) => {
        const c = readJson(path.join(r.dir, 'config.json')) as
          { task?: { options?: { heldOutSeed?: unknown; heldOut?: unknown } } } | undefined;
        return c?.task?.options?.heldOutSeed !== h.seed || c?.task?.options?.heldOut !== h.size;
      })
      .map((r) => `${g.name}/${path.basename(r.dir)}`),
  );
  return other.length
    ? {
        ok: false,
        text: `${text}; runs not on the planned fresh held-out set (heldOutSeed ${h.seed}, ${h.size} problems): ${other.join(', ')}`,
      }
    : { ok, text: `${text}, the fresh set of heldOutSeed ${h.seed} (${h.size} problems)` };
}

function seedsCheck(p: Plan, groups: readonly ReportGroup[]): PlanCheck {
  const cap = p.seeds.looks[p.seeds.looks.length - 1]!;
  const outside = groups.flatMap((g) =>
    g.runs
      .map((r) => seedIndex(r))
      .filter((i) => i === undefined || i < p.seeds.first || i >= p.seeds.first + cap)
      .map((i) => `${g.name}/seed-${i ?? '?'}`),
  );
  if (outside.length)
    return {
      ok: false,
      text: `seeds: runs outside the planned indices ${p.seeds.first}–${p.seeds.first + cap - 1}: ${outside.join(', ')}`,
    };
  const all = groups.flatMap((g) => g.runs.map((r) => seedIndex(r)!));
  return {
    ok: true,
    text: `seeds: indices ${all.length ? ranges(all) : 'none yet'}, within the planned ${p.seeds.first}–${p.seeds.first + cap - 1} (looks at ${p.seeds.looks.join(', ')} seeds)`,
  };
}

function readsCheck(p: Plan, reads: readonly Read[]): PlanCheck {
  // a folder governed by a plan: every read of it counts, also those made before the plan was attached
  const under = reads;
  const looks = p.seeds.looks;
  const atLook = (r: Read): number | undefined => {
    const names = p.configs.map((c) => c.name);
    const n = names.map((c) => r.runs[c]);
    if (n.some((x) => x === undefined) || new Set(n).size !== 1) return undefined;
    const m = /^(\d+)-(\d+)$/.exec(n[0]!);
    if (!m || Number(m[1]) !== p.seeds.first) return undefined;
    const count = Number(m[2]) - Number(m[1]) + 1;
    return looks.includes(count) ? count : undefined;
  };
  const off = under.filter((r) => atLook(r) === undefined);
  if (!under.length) return { ok: true, text: 'reads: none yet under this plan' };
  return off.length
    ? {
        ok: false,
        text: `reads: ${under.length}, of which ${off.map((r) => `read ${r.read}`).join(', ')} showed runs that are not a planned look (every config at ${looks.join(', ')} seeds from index ${p.seeds.first})`,
      }
    : {
        ok: true,
        text: `reads: ${under.length}, each at a planned look (${under.map((r) => `${atLook(r)} seeds`).join(', ')})`,
      };
}
