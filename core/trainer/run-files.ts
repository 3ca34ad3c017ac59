// The files of a run directory that corl reads back, each with its schema and one check function
// (what `corl train --resume`, `corl report` and `corl compare` read goes through these): run.json,
// state.json, a metrics.jsonl line, an eval row, and any path the folder records, which must stay
// inside the folder. A damaged file is CORL_ERR_RUN_CORRUPT naming the file and the field.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricsRecord } from '../contracts/metrics-sink';
import { CorlError } from '../errors';
import { checkFolderFile } from '../util/folder-schema';
import type { RunMeta, RunState } from './run-dir';

/** run.json. */
export const RUN_META_SCHEMA = {
  type: 'object',
  required: ['corl', 'baseDir', 'supervised'],
  properties: {
    corl: { type: 'string', minLength: 1 },
    configFile: { type: 'string', minLength: 1 },
    baseDir: { type: 'string', minLength: 1 },
    startedAt: { type: 'string' },
    id: { type: 'string', minLength: 1 },
    supervised: { type: 'boolean' },
    trainedOnLabels: { type: 'boolean' },
    plan: {
      type: 'object',
      required: ['sha256', 'file'],
      additionalProperties: false,
      properties: { sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' }, file: { type: 'string' } },
    },
    sealed: { const: true },
  },
  additionalProperties: false,
} as const;

/** A checkpoint folder as state.json records it: relative, inside the run's checkpoints/ folder. */
const CHECKPOINT_PATTERN = '^checkpoints/step-[0-9]{6,}$';

/** state.json. */
export const RUN_STATE_SCHEMA = {
  type: 'object',
  required: ['version', 'nextStep', 'metricsBytes', 'rolloutsBytes', 'checkpoint', 'finished'],
  properties: {
    version: { const: 1 },
    nextStep: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    metricsBytes: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    rolloutsBytes: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    checkpoint: { anyOf: [{ type: 'null' }, { type: 'string', pattern: CHECKPOINT_PATTERN }] },
    finished: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

/** One line of metrics.jsonl. */
export const METRICS_RECORD_SCHEMA = {
  type: 'object',
  required: ['step', 'agent', 'phase', 'metrics'],
  properties: {
    step: { type: 'integer', minimum: 0 },
    agent: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 0 }] },
    phase: { enum: ['train', 'eval'] },
    metrics: { type: 'object', additionalProperties: { type: 'number' } },
  },
} as const;

/** One row of eval/step-N.jsonl as the reports read it (other fields are free). */
export const EVAL_ROW_SCHEMA = {
  type: 'object',
  required: ['agent', 'correct'],
  properties: {
    agent: { type: 'integer', minimum: 0 },
    id: { type: 'string' },
    category: { type: 'string' },
    correct: { type: 'array', items: { type: 'boolean' } },
  },
} as const;

/** The parts of config.json a report reads. */
export const RUN_CONFIG_SCHEMA = {
  type: 'object',
  required: ['name', 'seed', 'agents'],
  properties: {
    name: { type: 'string', minLength: 1 },
    seed: { type: 'integer' },
    agents: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['name', 'policy'],
        properties: {
          name: { type: 'string' },
          policy: { type: 'object', required: ['use'], properties: { use: { type: 'string' } } },
        },
      },
    },
    trainer: { type: 'object', properties: { steps: { type: 'integer', minimum: 0 } } },
    eval: { type: 'object', properties: { split: { type: 'string' } } },
  },
} as const;

/** The parts of a run's config.json that reports read. */
export interface RunConfigView {
  readonly name: string;
  readonly seed: number;
  readonly agents: readonly { readonly name: string; readonly policy: { readonly use: string } }[];
  readonly reward?: { readonly use?: unknown; readonly options?: unknown };
  readonly trainer?: { readonly steps?: number };
  readonly eval?: { readonly split?: string };
}

export function checkRunMeta(value: unknown, file: string): RunMeta {
  return checkFolderFile<RunMeta>(RUN_META_SCHEMA, value, file);
}

export function checkRunState(value: unknown, file: string): RunState {
  return checkFolderFile<RunState>(RUN_STATE_SCHEMA, value, file);
}

export function checkRunConfig(value: unknown, file: string): RunConfigView {
  return checkFolderFile<RunConfigView>(RUN_CONFIG_SCHEMA, value, file);
}

/** `file` is the metrics file and `line` its 1-based line. */
export function checkMetricsRecord(value: unknown, file: string, line: number): MetricsRecord {
  return checkFolderFile<MetricsRecord>(METRICS_RECORD_SCHEMA, value, `${file}:${line}`);
}

export function checkEvalRow(
  value: unknown,
  file: string,
  line: number,
): { agent: number; id?: string; category?: string; correct: boolean[] } {
  return checkFolderFile(EVAL_ROW_SCHEMA, value, `${file}:${line}`);
}

/**
 * A path a folder's file records (`rel`, relative to `base`), resolved and checked to stay inside
 * `root` (by its text and through symbolic links); CORL_ERR_RUN_CORRUPT naming `where` otherwise.
 */
export function insideFolder(root: string, base: string, rel: string, where: string): string {
  const abs = path.resolve(base, rel);
  const realRoot = realOrSelf(root);
  const inside = (p: string, r: string): boolean => p === r || p.startsWith(r + path.sep);
  if (path.isAbsolute(rel) || !inside(abs, path.resolve(root)) || !inside(realOrSelf(abs), realRoot))
    throw new CorlError(
      'CORL_ERR_RUN_CORRUPT',
      `expected a path inside ${root}, got ${JSON.stringify(rel.slice(0, 200))}, which leads out of it`,
      { where, hint: 'a run folder names only its own files; restore the file from a copy' },
    );
  return abs;
}

/** A path with its symbolic links resolved, as far as it exists. */
function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    const up = path.dirname(p);
    return up === p ? p : path.join(realOrSelf(up), path.basename(p));
  }
}
