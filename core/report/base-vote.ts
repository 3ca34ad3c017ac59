// Every trained row beside the base models' own vote: the maj@K and the budget-fair ensemble of the
// untrained checkpoints (the step-0 rows of the same runs), and whether training went past them.
// A label-free method that only closes part of the gap between the base's pass@1 and its own
// majority vote has learned less than sampling the base K times already gives.
import type { ReportGroup } from './html';
import { valueAt, type RunSummary, type Stat, meanSd } from './runs';
import { sample, tInterval, type Interval } from '../stats/paired';
import { mean } from '../util/mean';

/** Two-sided error rate of the base-vote intervals. */
export const BASE_VOTE_ALPHA = 0.05;

/** A paired difference over seeds, in points. */
export interface SeedGap {
  readonly n: number;
  readonly mean: number;
  readonly interval?: Interval;
}

/** One trained config against its base models' vote. */
export interface BaseVoteLine {
  readonly config: string;
  readonly supervised: boolean;
  readonly seeds: number;
  /** maj@K metric name (`maj@8`). */
  readonly metric: string;
  /** The base models' maj@K (average over agents, step 0), points, mean ± sd over seeds. */
  readonly baseMaj: Stat;
  /** Average pass@1 after training − the base's maj@K, seed by seed. */
  readonly overMaj: SeedGap;
  /** The base models' budget-fair ensemble (step 0), when evaluated. */
  readonly baseEnsemble?: Stat;
  /** The ensemble after training − the base's ensemble, seed by seed. */
  readonly overEnsemble?: SeedGap;
}

const lastEval = (run: RunSummary): number =>
  Math.max(0, ...run.records.filter((r) => r.phase === 'eval' && r.agent !== null).map((r) => r.step));

const meanOver = (xs: readonly (number | undefined)[]): number =>
  xs.every((x): x is number => x !== undefined) ? mean(xs, NaN) : NaN;

function gap(values: readonly number[]): SeedGap {
  const s = sample(values.filter(Number.isFinite));
  const interval = tInterval(s, BASE_VOTE_ALPHA);
  return { n: s.n, mean: s.mean, ...(interval ? { interval } : {}) };
}

/** The maj@K metric a run's evaluation records carry (`eval/maj@8`), if any. */
function majMetric(run: RunSummary): string | undefined {
  for (const r of run.records)
    if (r.phase === 'eval' && r.agent !== null) {
      const k = Object.keys(r.metrics).find((m) => m.startsWith('eval/maj@'));
      if (k) return k;
    }
  return undefined;
}

/** The ensemble metric a run's cohort evaluation records carry (`ensemble/maj@8`), if any. */
function ensembleMetric(run: RunSummary): string | undefined {
  for (const r of run.records)
    if (r.phase === 'eval' && r.agent === null) {
      const k = Object.keys(r.metrics).find((m) => m.startsWith('ensemble/'));
      if (k) return k;
    }
  return undefined;
}

/** The trained configs (steps > 0, maj@K evaluated) against their base models' own maj@K and ensemble. */
export function baseVoteLines(groups: readonly ReportGroup[]): BaseVoteLine[] {
  const lines: BaseVoteLine[] = [];
  for (const g of groups) {
    const first = g.runs[0];
    const maj = first && majMetric(first);
    if (!first || !maj || !g.runs.some((r) => r.steps > 0)) continue;
    const ens = ensembleMetric(first);
    const agents = first.agents.map((_, i) => i);
    const baseMaj = g.runs.map((r) => 100 * meanOver(agents.map((i) => valueAt(r.records, maj, i, 0))));
    const final = g.runs.map(
      (r) => 100 * meanOver(agents.map((i) => valueAt(r.records, 'eval/accuracy', i, lastEval(r)))),
    );
    const line: BaseVoteLine = {
      config: g.name,
      supervised: g.runs.some((r) => r.supervised),
      seeds: g.runs.length,
      metric: maj.slice('eval/'.length),
      baseMaj: meanSd(baseMaj),
      overMaj: gap(final.map((f, k) => f - baseMaj[k]!)),
    };
    if (!ens) {
      lines.push(line);
      continue;
    }
    const baseEns = g.runs.map((r) => 100 * (valueAt(r.records, ens, null, 0) ?? NaN));
    const endEns = g.runs.map((r) => 100 * (valueAt(r.records, ens, null, lastEval(r)) ?? NaN));
    lines.push({ ...line, baseEnsemble: meanSd(baseEns), overEnsemble: gap(endEns.map((e, k) => e - baseEns[k]!)) });
  }
  return lines;
}

/** Whether training went past the base's own vote: by the interval of pass@1 − base maj@K. */
export function beatsText(g: SeedGap): string {
  if (!g.interval) return g.n < 2 ? 'one seed: no interval' : 'no interval';
  if (g.interval.lo > 0) return '**yes**';
  if (g.interval.hi < 0) return '**no**, below it';
  return 'inconclusive';
}
