// How a comparison decides, as recorded in its compare.json: the primary metric, the pairs, the
// error rate and margin, and for a sequential comparison its looks and boundary; from a plan, from
// `corl compare` flags, or the defaults. comparisonVerdicts applies it to the finished runs.
import { CorlError } from '../errors';
import { boundary, SPENDING, type Spending } from '../stats/sequential';
import type { ReportGroup } from './html';
import type { CheckpointPools } from './pools';
import {
  analysePairs,
  defaultPairs,
  PRIMARY_METRICS,
  seedIndex,
  type PairResult,
  type PairSpec,
  type PrimaryMetric,
} from './paired';

/** A plan (version 1) as its file holds it; core/compare/plan.ts validates it. */
export interface Plan {
  readonly plan: 1;
  readonly name: string;
  readonly question?: string;
  readonly written?: string;
  readonly configs: readonly { readonly file: string; readonly name: string; readonly sha256: string }[];
  readonly split: 'held-out' | 'validation';
  readonly primary: PrimaryMetric;
  readonly primaryText?: string;
  readonly pairs: readonly { readonly a: string; readonly b: string; readonly role?: 'primary' | 'secondary' }[];
  readonly margin?: number;
  readonly effect?: number;
  readonly alpha: number;
  readonly seeds: { readonly first: number; readonly looks: readonly number[] };
  readonly boundary: Spending | 'fixed';
  readonly stop: 'all-resolved' | 'last-look';
  readonly method?: string;
  readonly notes?: readonly string[];
  /** The fresh held-out set every config evaluates on: corl:arith's `heldOutSeed` and `heldOut` (core/compare/plan.ts checks them). */
  readonly heldOut?: { readonly seed: number; readonly size: number };
  /** Checkpoint pools per family: each seed's base checkpoints are drawn from them (./pools.ts). */
  readonly checkpoints?: CheckpointPools;
}

/** What compare.json records of a plan: where it was, the sha256 of its bytes, and its content. */
export interface PlanRecord {
  readonly file: string;
  readonly sha256: string;
  readonly plan: Plan;
  /**
   * Per planned config, recorded when the plan was checked: the digest of its file's content
   * without "seed" (see {@link ./identity}) and its seed, so that each run can be checked against it.
   */
  readonly configs?: readonly { readonly name: string; readonly digest: string; readonly seed: number }[];
  /** When a plan was attached to runs made without it (`corl report --plan`), what was said about that. */
  readonly attached?: string;
}

/** The sequential part of a design: looks (seeds per config), their boundary and the stop rule. */
export interface Sequential {
  readonly boundary: Spending | 'fixed';
  readonly looks: readonly number[];
  /** Index of the first seed. */
  readonly first: number;
  readonly stop: 'all-resolved' | 'last-look';
}

/** How a comparison decides. */
export interface Design {
  readonly metric: PrimaryMetric;
  /** Named pairs; undefined: each config against the first (or against `against`). */
  readonly pairs?: readonly PairSpec[];
  readonly against?: readonly string[];
  readonly alpha: number;
  readonly margin?: number;
  readonly effect?: number;
  readonly sequential?: Sequential;
}

/** The default: final average pass@1, each config against the first, two-sided 5%, no margin, one look. */
export const DEFAULT_DESIGN: Design = { metric: 'final', alpha: 0.05 };

/** What `corl compare` flags or the API's `design` option give of a design, each already checked. */
export interface DesignParts {
  readonly metric?: PrimaryMetric;
  readonly pairs?: readonly PairSpec[];
  readonly against?: readonly string[];
  readonly alpha?: number;
  readonly margin?: number;
  readonly effect?: number;
  /** Seeds per config at each look: a sequential design, adding seeds until every pair is resolved. */
  readonly looks?: readonly number[];
  readonly boundary?: Spending | 'fixed';
}

/**
 * The design of its parts, the rest defaulted: final average pass@1, two-sided 5%, and with looks a
 * sequential design from seed `firstSeed` on a Lan–DeMets Pocock-type boundary that stops once every
 * pair is resolved.
 */
export function designFromParts(p: DesignParts, firstSeed: number): Design {
  return {
    metric: p.metric ?? DEFAULT_DESIGN.metric,
    ...(p.pairs ? { pairs: p.pairs.map((x) => ({ a: x.a, b: x.b })) } : {}),
    ...(p.against ? { against: [...p.against] } : {}),
    alpha: p.alpha ?? DEFAULT_DESIGN.alpha,
    ...(p.margin !== undefined ? { margin: p.margin } : {}),
    ...(p.effect !== undefined ? { effect: p.effect } : {}),
    ...(p.looks
      ? {
          sequential: {
            boundary: p.boundary ?? 'lan-demets-pocock',
            looks: [...p.looks],
            first: firstSeed,
            stop: 'all-resolved' as const,
          },
        }
      : {}),
  };
}

/** A plan's design. */
export function designFromPlan(p: Plan): Design {
  return {
    metric: p.primary,
    pairs: p.pairs.map((x) => ({ a: x.a, b: x.b, ...(x.role ? { role: x.role } : {}) })),
    alpha: p.alpha,
    ...(p.margin !== undefined ? { margin: p.margin } : {}),
    ...(p.effect !== undefined ? { effect: p.effect } : {}),
    sequential: { boundary: p.boundary, looks: [...p.seeds.looks], first: p.seeds.first, stop: p.stop },
  };
}

/** The design compare.json records (its plan's, else its "design", else the default); bad records are CORL_ERR_RUN_CORRUPT. */
export function designOf(meta: { plan?: unknown; design?: unknown }, where: string): Design {
  if (meta.plan !== undefined) return designFromPlan((meta.plan as PlanRecord).plan);
  if (meta.design === undefined) return DEFAULT_DESIGN;
  const d = meta.design as Partial<Design>;
  const bad = (what: string): never => {
    throw new CorlError(
      'CORL_ERR_RUN_CORRUPT',
      `expected ${what} in compare.json's "design", got ${JSON.stringify(meta.design)}`,
      {
        where,
      },
    );
  };
  if (!PRIMARY_METRICS.includes(d.metric as PrimaryMetric)) bad('a metric of ' + PRIMARY_METRICS.join(' or '));
  if (typeof d.alpha !== 'number' || !(d.alpha > 0 && d.alpha < 0.5)) bad('an alpha in (0, 0.5)');
  if (d.sequential && (![...SPENDING, 'fixed'].includes(d.sequential.boundary) || !Array.isArray(d.sequential.looks)))
    bad('a boundary and looks');
  return d as Design;
}

/** The analysis at one look of a sequential comparison. */
export interface Look {
  /** 1-based. */
  readonly look: number;
  /** Seeds per config at this look. */
  readonly seeds: number;
  /** The nominal two-sided error rate of this look's intervals. */
  readonly alpha: number;
  readonly pairs: readonly PairResult[];
  /** Every pair ahead, behind or equivalent. */
  readonly resolved: boolean;
}

/** The verdicts of a comparison under its design. */
export interface Verdicts {
  readonly design: Design;
  /** The pairs as decided: at the look where a sequential comparison stopped (or its latest look), else over every finished seed. */
  readonly pairs: readonly PairResult[];
  /** Every completed look, for a sequential design. */
  readonly looks?: readonly Look[];
  /** Whether a sequential comparison has stopped (its rule fired, or its last look is done). */
  readonly stopped?: boolean;
  /** What comes next under a sequential design, in words (e.g. "the plan calls for look 2: 24 seeds"). */
  readonly next?: string;
}

/** Bootstrap resamples for the deciding analysis (history looks get none). */
const RESAMPLES = 10000;

/** Apply a design to a comparison's finished runs. */
export function comparisonVerdicts(groups: readonly ReportGroup[], names: readonly string[], design: Design): Verdicts {
  const pairs = (design.pairs ?? defaultPairs(names, design.against)).filter(
    (p) => groups.some((g) => g.name === p.a) || groups.some((g) => g.name === p.b),
  );
  const decision = { margin: design.margin, effect: design.effect, plannedAlpha: design.alpha };
  const seq = design.sequential;
  if (!seq) return { design, pairs: analysePairs(groups, pairs, design.metric, { ...decision, alpha: design.alpha }) };
  const finished = new Map(groups.map((g) => [g.name, new Set(g.runs.map(seedIndex))]));
  const involved = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
  const complete = (n: number): boolean =>
    involved.every((c) => Array.from({ length: n }, (_, j) => seq.first + j).every((i) => finished.get(c)?.has(i)));
  const cap = seq.looks[seq.looks.length - 1]!;
  // the looks whose seeds are all finished (seeds are a prefix first, first + 1, …: the complete looks are too)
  const counted: number[] = [];
  for (const n of seq.looks) {
    if (!complete(n)) break;
    counted.push(n);
  }
  const fractions = counted.map((n) => n / cap);
  const nominal =
    seq.boundary === 'fixed'
      ? counted.map(() => design.alpha)
      : counted.length
        ? boundary(seq.boundary, design.alpha, fractions).nominal
        : [];
  const looks: Look[] = [];
  let stopped = false;
  for (let k = 0; k < counted.length && !stopped; k++) {
    const last = k === counted.length - 1;
    const seeds = Array.from({ length: counted[k]! }, (_, j) => seq.first + j);
    const at = analysePairs(groups, pairs, design.metric, { ...decision, alpha: nominal[k]!, seeds, resamples: 0 });
    const resolved = at.every((p) => p.outcome !== 'inconclusive');
    stopped = (seq.stop === 'all-resolved' && resolved) || counted[k] === cap;
    const final = stopped || last;
    const pairsAt = final
      ? analysePairs(groups, pairs, design.metric, { ...decision, alpha: nominal[k]!, seeds, resamples: RESAMPLES })
      : at;
    looks.push({ look: k + 1, seeds: counted[k]!, alpha: nominal[k]!, pairs: pairsAt, resolved });
  }
  const lastLook = looks[looks.length - 1];
  const nextLook = seq.looks[looks.length];
  const have = Math.min(
    ...involved.map((c) => [...(finished.get(c) ?? [])].filter((i) => i !== undefined && i >= seq.first).length),
  );
  const inconclusive = lastLook?.pairs.filter((p) => p.outcome === 'inconclusive').length ?? 0;
  const next =
    stopped || nextLook === undefined
      ? undefined
      : `${lastLook ? `look ${lastLook.look} left ${inconclusive} pair(s) inconclusive, so ` : ''}the design calls for look ${looks.length + 1}: ${nextLook} seeds per config (${have} finished)`;
  return {
    design,
    pairs: lastLook?.pairs ?? [],
    looks,
    stopped,
    ...(next ? { next } : {}),
  };
}
