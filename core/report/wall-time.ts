// wall-time.jsonl of a comparison folder: what `corl compare --plan` predicted each look's wall time
// to be before it ran (one "prediction" line per invocation) and when each run of it ran (one "run"
// line per run span: start, end, steps), and the report's rows of predicted against actual wall time
// per look. Monitoring only: nothing in a verdict reads it, and a damaged line is named and skipped.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readUserText } from '../util/files';
import { checkFolderFile } from '../util/folder-schema';
import type { Design } from './design';

export const WALL_TIME_FILE = 'wall-time.jsonl';

/** One look of a prediction: the runs it holds, those left to run, and the seconds they are predicted to take. */
export interface LookPrediction {
  readonly look: number;
  readonly runs: number;
  readonly left: number;
  readonly seconds: number;
}

/** Where a config's alone time came from: a short run of it now, or its runs already in the folder. */
export type RateSource = 'calibrated' | 'folder';

/** A prediction, recorded when `corl compare --plan` makes it, before its runs start. */
export interface PredictionRecord {
  readonly kind: 'prediction';
  readonly at: string;
  /** The 1-minute load average before anything of the comparison ran, and the cores. */
  readonly load: number;
  readonly cores: number;
  readonly jobs: number;
  /** Cores one run keeps busy (CPU seconds over wall seconds). */
  readonly demand: number;
  /** Per config: seconds a whole run takes alone on the idle machine, and where that came from. */
  readonly alone: Readonly<Record<string, { readonly seconds: number; readonly source: RateSource }>>;
  readonly looks: readonly LookPrediction[];
}

/** One span of a run (a fresh start or a resume, to its end), as `corl compare` ran it. */
export interface RunSpan {
  readonly kind: 'run';
  readonly config: string;
  /** The seed index (the run's folder seed-<i>). */
  readonly seed: number;
  readonly startedAt: string;
  readonly endedAt: string;
  /** Steps done when the span started and when it ended, of the run's `steps`. */
  readonly from: number;
  readonly to: number;
  readonly steps: number;
  /** The invocation's load average before it ran anything, the cores, and the runs in flight when this one started (itself included). */
  readonly load: number;
  readonly cores: number;
  readonly concurrent: number;
  /** Cores the process kept busy over the span (all its runs in flight). */
  readonly cpu: number;
  /** When the invocation that ran it started: spans of one invocation are one stretch of wall time. */
  readonly invocation?: string;
}

const NUM = { type: 'number', minimum: 0 } as const;
const INT = { type: 'integer', minimum: 0 } as const;
const TIME = { type: 'string', minLength: 1 } as const;

/** A line of wall-time.jsonl. */
export const WALL_TIME_SCHEMA = {
  oneOf: [
    {
      type: 'object',
      required: ['kind', 'at', 'load', 'cores', 'jobs', 'demand', 'alone', 'looks'],
      properties: {
        kind: { const: 'prediction' },
        at: TIME,
        load: NUM,
        cores: { type: 'integer', minimum: 1 },
        jobs: { type: 'integer', minimum: 1 },
        demand: NUM,
        alone: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            required: ['seconds', 'source'],
            properties: { seconds: NUM, source: { enum: ['calibrated', 'folder'] } },
          },
        },
        looks: {
          type: 'array',
          items: {
            type: 'object',
            required: ['look', 'runs', 'left', 'seconds'],
            properties: { look: { type: 'integer', minimum: 1 }, runs: INT, left: INT, seconds: NUM },
          },
        },
      },
    },
    {
      type: 'object',
      required: ['kind', 'config', 'seed', 'startedAt', 'endedAt', 'from', 'to', 'steps'],
      properties: {
        kind: { const: 'run' },
        config: { type: 'string', minLength: 1 },
        seed: INT,
        startedAt: TIME,
        endedAt: TIME,
        from: INT,
        to: INT,
        steps: INT,
        load: NUM,
        cores: { type: 'integer', minimum: 1 },
        concurrent: { type: 'integer', minimum: 1 },
        cpu: NUM,
        invocation: TIME,
      },
    },
  ],
} as const;

/** What wall-time.jsonl holds, and the lines that could not be read (named, skipped). */
export interface WallTimeLog {
  readonly predictions: readonly PredictionRecord[];
  readonly spans: readonly RunSpan[];
  readonly damaged: readonly string[];
}

/** Read a comparison folder's wall-time.jsonl (empty when there is none). */
export function readWallTime(out: string): WallTimeLog {
  const file = path.join(out, WALL_TIME_FILE);
  const predictions: PredictionRecord[] = [];
  const spans: RunSpan[] = [];
  const damaged: string[] = [];
  if (!fs.existsSync(file)) return { predictions, spans, damaged };
  let text: string;
  try {
    text = readUserText(file);
  } catch (e) {
    return { predictions, spans, damaged: [`${WALL_TIME_FILE}: ${(e as Error).message}`] };
  }
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const v = checkFolderFile<PredictionRecord | RunSpan>(WALL_TIME_SCHEMA, JSON.parse(line), 'x');
      if (v.kind === 'prediction') predictions.push(v);
      else if (Date.parse(v.startedAt) <= Date.parse(v.endedAt)) spans.push(v);
      else damaged.push(`${WALL_TIME_FILE}:${i + 1}`);
    } catch {
      damaged.push(`${WALL_TIME_FILE}:${i + 1}`);
    }
  });
  return { predictions, spans, damaged };
}

/** One look's row: the prediction made before it started (if any) and its runs' timed wall time. */
export interface LookWallTime {
  readonly look: number;
  /** Runs of the look (every config at each of its seeds). */
  readonly runs: number;
  readonly predicted?: {
    readonly seconds: number;
    readonly at: string;
    readonly left: number;
    readonly prediction: PredictionRecord;
  };
  /** Seconds during which at least one of the look's runs was running (the union of their spans), and how many of its runs are timed. */
  readonly actual?: { readonly seconds: number; readonly timed: number; readonly from: string; readonly to: string };
}

/** Seconds covered by a set of [start, end] intervals (ms), overlaps counted once. */
export function unionSeconds(intervals: readonly (readonly [number, number])[]): number {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let start = -Infinity;
  let end = -Infinity;
  for (const [a, b] of sorted) {
    if (a > end) {
      if (end > start) total += end - start;
      start = a;
      end = b;
    } else end = Math.max(end, b);
  }
  if (end > start) total += end - start;
  return total / 1000;
}

/**
 * The wall time a set of spans took: each invocation's stretch from its first span's start to its
 * last span's end (what lies between its runs counted), overlapping stretches (shards side by side)
 * counted once, the time between invocations (an interrupted comparison) not at all.
 */
export function spansSeconds(spans: readonly RunSpan[]): number {
  const stretches = new Map<string, [number, number]>();
  spans.forEach((s, i) => {
    const key = s.invocation ?? `#${i}`;
    const a = Date.parse(s.startedAt);
    const b = Date.parse(s.endedAt);
    const had = stretches.get(key);
    stretches.set(key, had ? [Math.min(had[0], a), Math.max(had[1], b)] : [a, b]);
  });
  return unionSeconds([...stretches.values()]);
}

/**
 * Predicted and actual wall time of each look of a sequential design: the prediction quoted is the
 * first made while the whole look was still to run (else the first that covered any of it, which
 * says how many runs it was for); the actual is {@link spansSeconds} of the look's runs.
 */
export function lookWallTimes(log: WallTimeLog, design: Design, configs: readonly string[]): LookWallTime[] {
  const seq = design.sequential;
  if (!seq || (!log.predictions.length && !log.spans.length)) return [];
  return seq.looks.map((n, k) => {
    const from = seq.first + (k > 0 ? seq.looks[k - 1]! : 0);
    const to = seq.first + n;
    const runs = (to - from) * configs.length;
    const preds = log.predictions
      .map((p) => ({ p, l: p.looks.find((x) => x.look === k + 1) }))
      .filter((x) => x.l !== undefined && x.l.left > 0);
    const chosen = preds.find((x) => x.l!.left === x.l!.runs) ?? preds[0];
    const mine = log.spans.filter((s) => s.seed >= from && s.seed < to && configs.includes(s.config));
    const timed = new Set(mine.filter((s) => s.to >= s.steps).map((s) => `${s.config}/${s.seed}`)).size;
    const ms = mine.map((s) => [Date.parse(s.startedAt), Date.parse(s.endedAt)] as const);
    return {
      look: k + 1,
      runs,
      ...(chosen
        ? { predicted: { seconds: chosen.l!.seconds, at: chosen.p.at, left: chosen.l!.left, prediction: chosen.p } }
        : {}),
      ...(mine.length
        ? {
            actual: {
              seconds: spansSeconds(mine),
              timed,
              from: new Date(Math.min(...ms.map((x) => x[0]))).toISOString(),
              to: new Date(Math.max(...ms.map((x) => x[1]))).toISOString(),
            },
          }
        : {}),
    };
  });
}

/** A duration in words: seconds below 2 minutes, minutes below 2 hours, else hours. */
export function durationText(seconds: number): string {
  if (seconds < 120) return `${seconds.toFixed(0)} s`;
  if (seconds < 7200) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(2)} h`;
}

/** "13:20 UTC" of an ISO time. */
const clock = (iso: string): string => `${iso.slice(11, 16)} UTC`;

/** One sentence per look: predicted (when, at which load) against actual (timed runs, from and to). */
export function wallTimeLines(rows: readonly LookWallTime[], log: WallTimeLog): string[] {
  const out = rows.map((r) => {
    const p = r.predicted;
    const pred = p
      ? `predicted ${durationText(p.seconds)}${p.left < r.runs ? ` for the ${p.left} of its ${r.runs} runs left` : ''} (${p.at.slice(0, 10)} ${clock(p.at)}, load ${p.prediction.load.toFixed(2)} on ${p.prediction.cores} cores, --jobs ${p.prediction.jobs})`
      : 'no prediction recorded';
    const a = r.actual;
    const act = !a
      ? 'actual: not run yet'
      : `actual ${durationText(a.seconds)}${a.timed < r.runs ? ` so far (${a.timed} of ${r.runs} runs timed to their end)` : ''} (${clock(a.from)} to ${clock(a.to)})`;
    const ratio =
      p && a && a.timed === r.runs && p.left === r.runs && p.seconds > 0
        ? `, ${(a.seconds / p.seconds).toFixed(2)}x the prediction`
        : '';
    return `Wall time of look ${r.look} (${r.runs} runs): ${pred}; ${act}${ratio}.`;
  });
  if (log.damaged.length) out.push(`Wall time: skipped unreadable lines of ${log.damaged.join(', ')}.`);
  return out;
}
