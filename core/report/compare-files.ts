// The files of a comparison folder that corl reads back, each with its schema and one check function:
// compare.json, verdicts.json and a reads.jsonl record (the run folders' files are
// core/trainer/run-files.ts's). A damaged file is CORL_ERR_RUN_CORRUPT naming the file and the field.
import { checkFolderFile } from '../util/folder-schema';
import type { CompareMeta } from './compare';

const HEX64 = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
const NAME = { type: 'string', minLength: 1 } as const;

/** A plan as compare.json records it (what the reports read of it). */
const PLAN_IN_RECORD = {
  type: 'object',
  required: ['plan', 'name', 'configs', 'split', 'primary', 'pairs', 'alpha', 'seeds', 'boundary', 'stop'],
  properties: {
    plan: { const: 1 },
    name: NAME,
    configs: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['file', 'name', 'sha256'],
        properties: { file: NAME, name: NAME, sha256: HEX64 },
      },
    },
    split: { enum: ['held-out', 'validation'] },
    primary: { type: 'string' },
    pairs: {
      type: 'array',
      minItems: 1,
      items: { type: 'object', required: ['a', 'b'], properties: { a: NAME, b: NAME } },
    },
    margin: { type: 'number', exclusiveMinimum: 0 },
    effect: { type: 'number', exclusiveMinimum: 0 },
    alpha: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 0.5 },
    seeds: {
      type: 'object',
      required: ['first', 'looks'],
      properties: {
        first: { type: 'integer', minimum: 0 },
        looks: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 1 } },
      },
    },
    boundary: { type: 'string' },
    stop: { enum: ['all-resolved', 'last-look'] },
  },
} as const;

/** compare.json. */
export const COMPARE_META_SCHEMA = {
  type: 'object',
  properties: {
    configs: { type: 'array', items: { type: 'string' } },
    seeds: { type: 'integer', minimum: 0 },
    firstSeed: { type: 'integer', minimum: 0 },
    steps: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 0 }] },
    order: { type: 'array', items: NAME },
    packed: { type: 'boolean' },
    design: { type: 'object' },
    sha256: { type: 'object', additionalProperties: HEX64 },
    reads: {
      type: 'object',
      required: ['count', 'head'],
      additionalProperties: false,
      properties: {
        count: { type: 'integer', minimum: 0 },
        head: HEX64,
        damaged: { type: 'array', items: { type: 'string' } },
      },
    },
    plan: {
      type: 'object',
      required: ['file', 'sha256', 'plan'],
      properties: {
        file: { type: 'string' },
        sha256: HEX64,
        plan: PLAN_IN_RECORD,
        configs: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'digest', 'seed'],
            properties: { name: NAME, digest: { type: 'string' }, seed: { type: 'integer' } },
          },
        },
        attached: { type: 'string' },
      },
    },
  },
} as const;

/** verdicts.json (what `corl compare --shard` reads of it). */
export const VERDICTS_SCHEMA = {
  type: 'object',
  properties: { looks: { type: 'array' }, stopped: { type: 'boolean' } },
} as const;

/** One line of reads.jsonl. */
export const READ_SCHEMA = {
  type: 'object',
  required: ['read', 'by', 'runs'],
  properties: {
    read: { type: 'integer', minimum: 1 },
    by: { type: 'string' },
    at: { type: 'string' },
    runs: {
      type: 'object',
      additionalProperties: { type: 'string' },
    },
    plan: HEX64,
    reconstructed: { type: 'boolean' },
    note: { type: 'string' },
    prev: HEX64,
    hash: HEX64,
    runsDigest: HEX64,
  },
  additionalProperties: false,
} as const;

export function checkCompareMeta(value: unknown, file: string): CompareMeta {
  return checkFolderFile<CompareMeta>(COMPARE_META_SCHEMA, value, file);
}

export function checkVerdicts(value: unknown, file: string): { looks?: unknown[]; stopped?: boolean } {
  return checkFolderFile(VERDICTS_SCHEMA, value, file);
}

/** `file` is reads.jsonl and `line` its 1-based line. */
export function checkReadRecord(value: unknown, file: string, line: number): Record<string, unknown> {
  return checkFolderFile(
    READ_SCHEMA,
    value,
    `${file}:${line}`,
    'reads.jsonl is append-only: restore it from version control; corl changed nothing',
  );
}
