import type { MetricsRecord } from '../contracts/metrics-sink';
import * as path from 'node:path';
import { RunDirectory } from '../trainer/run-dir';
import { checkRunConfig } from '../trainer/run-files';
import { mean } from '../util/mean';

/** What a report needs of one finished (or partial) run. */
export interface RunSummary {
  readonly dir: string;
  /** Config name. */
  readonly name: string;
  readonly seed: number;
  /** Whether any reward source read ground truth. */
  readonly supervised: boolean;
  readonly agents: readonly { readonly name: string; readonly policy: string }[];
  /** The config's reward source, as resolved (`{use, options}`): rewards of different sources are on different scales. */
  readonly reward?: { readonly use: string; readonly options?: unknown };
  readonly records: readonly MetricsRecord[];
  /** Updates completed (the step of the last training record). */
  readonly steps: number;
  /** Steps the config asks for (trainer.steps). */
  readonly plannedSteps: number;
  /** Whether the run finished all its steps (state.json). */
  readonly finished: boolean;
  /** Set when the run's evaluations are sealed (a planned run) and were left out of `records`. */
  readonly sealedHidden?: true;
}

/**
 * Read a run directory. A planned run's sealed evaluations are opened (`sealed: 'open'`, what a
 * comparison's rendering at a look reads) or left out (`'hide'`).
 */
export function readRun(dir: string, o: { readonly sealed?: 'open' | 'hide' } = {}): RunSummary {
  const run = RunDirectory.open(dir);
  const config = checkRunConfig(run.config(), path.join(run.dir, 'config.json'));
  const state = run.state();
  const meta = run.meta();
  return {
    dir: run.dir,
    name: config.name,
    seed: config.seed,
    supervised: meta.supervised === true,
    agents: config.agents.map((a) => ({ name: a.name, policy: a.policy.use })),
    ...(typeof config.reward?.use === 'string'
      ? { reward: { use: config.reward.use, options: config.reward.options } }
      : {}),
    records: run.readMetrics({ sealed: o.sealed ?? 'open' }),
    steps: state.nextStep,
    plannedSteps: config.trainer?.steps ?? state.nextStep,
    finished: state.finished,
    ...(o.sealed === 'hide' && meta.sealed === true ? { sealedHidden: true as const } : {}),
  };
}

/** The series of one metric for one agent (null = cohort records), by step. */
export function metricSeries(
  records: readonly MetricsRecord[],
  metric: string,
  agent: number | null,
  phase?: 'train' | 'eval',
): [number, number][] {
  return records
    .filter((r) => r.agent === agent && (phase === undefined || r.phase === phase) && r.metrics[metric] !== undefined)
    .map((r) => [r.step, r.metrics[metric]!] as [number, number]);
}

/** The last value of a metric for an agent, or undefined. */
export function lastValue(
  records: readonly MetricsRecord[],
  metric: string,
  agent: number | null,
  phase?: 'train' | 'eval',
): number | undefined {
  const s = metricSeries(records, metric, agent, phase);
  return s.length ? s[s.length - 1]![1] : undefined;
}

/** The value at a given step, or undefined. */
export function valueAt(
  records: readonly MetricsRecord[],
  metric: string,
  agent: number | null,
  step: number,
): number | undefined {
  return metricSeries(records, metric, agent).find(([s]) => s === step)?.[1];
}

/** A mean ± sample sd over n values (seeds, runs). */
export type Stat = { readonly mean: number; readonly sd: number; readonly n: number };

/** Mean and sample standard deviation (sd 0 for a single value). */
export function meanSd(values: readonly number[]): Stat {
  const v = values.filter(Number.isFinite);
  if (v.length === 0) return { mean: NaN, sd: NaN, n: 0 };
  const m = mean(v, NaN);
  const sd = v.length > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / (v.length - 1)) : 0;
  return { mean: m, sd, n: v.length };
}

/**
 * Trailing moving average of a series: each point becomes the mean of the finite values among
 * itself and the `window − 1` points before it (NaN where there are none). Per-step training
 * metrics of small batches are noisy; the report smooths them and says by how much.
 */
export function movingAverage(points: readonly (readonly [number, number])[], window: number): [number, number][] {
  if (!Number.isInteger(window) || window < 1)
    throw new RangeError(`expected a window of at least 1 point, got ${window}`);
  const out: [number, number][] = [];
  for (let i = 0; i < points.length; i++) {
    let sum = 0;
    let n = 0;
    for (let j = Math.max(0, i - window + 1); j <= i; j++) {
      const v = points[j]![1];
      if (Number.isFinite(v)) {
        sum += v;
        n++;
      }
    }
    out.push([points[i]![0], n ? sum / n : NaN]);
  }
  return out;
}
