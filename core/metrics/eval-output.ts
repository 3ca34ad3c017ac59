import type { Equivalence } from '../contracts/equivalence';
// Reading `corl eval` per-agent outputs back, and κ/c/w/u between two of them (`corl agreement`).
import { readTextMaybeGz } from '../util/gz';
import { CorlError } from '../errors';
import { agreement, type Agreement } from './agreement';
import { parseJson } from '../util/json';
import { matches } from '../voting/match';

/** An equivalence under which distinct keys are never equal (`matches` then compares keys alone). */
const IDENTICAL_KEYS: Pick<Equivalence, 'equal'> = { equal: async () => false };

/** One line of a `corl eval` output file: one agent's answers to one problem. */
export interface EvalOutputRow {
  readonly id: string;
  /** Agent index in its config. */
  readonly agent?: number;
  /** Agent name in its config. */
  readonly agentName?: string;
  /** Extracted answers of the samples (null: nothing parsed). */
  readonly answers?: readonly (string | null)[];
  /** Canonical answer keys of the samples. */
  readonly keys: readonly (string | null)[];
  /** The plurality key (null: no answer; absent in run directories of older versions). */
  readonly majority?: string | null;
  /** Whether each sample is right. */
  readonly correct: readonly boolean[];
  /** Whether the plurality is right. */
  readonly majCorrect: boolean;
  /** The reference answer. */
  readonly reference?: string | null;
}

const isKeyList = (v: unknown): v is (string | null)[] =>
  Array.isArray(v) && v.every((k) => k === null || typeof k === 'string');

/** Read a `corl eval` output file (gzip-compressed when its name ends in .gz). Every problem is reported as CORL_ERR_EVAL_INPUT naming the file and line. */
export function readEvalOutput(file: string): EvalOutputRow[] {
  let text: string;
  try {
    text = readTextMaybeGz(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CorlError(
      'CORL_ERR_EVAL_INPUT',
      `expected a readable evaluation output, got ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder' : (e as Error).message}`,
      { where: file },
    );
  }
  const rows: EvalOutputRow[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    const where = `${file}:${i + 1}`;
    let v: unknown;
    try {
      v = parseJson(raw);
    } catch {
      throw new CorlError('CORL_ERR_EVAL_INPUT', 'expected one JSON object per line, got invalid JSON', { where });
    }
    const o = v as Record<string, unknown>;
    if (!o || typeof o !== 'object' || Array.isArray(o))
      throw new CorlError('CORL_ERR_EVAL_INPUT', `expected a JSON object, got ${JSON.stringify(v)?.slice(0, 60)}`, {
        where,
      });
    const bad = (field: string, expected: string): CorlError =>
      new CorlError(
        'CORL_ERR_EVAL_INPUT',
        `expected "${field}" to be ${expected}, got ${JSON.stringify(o[field])?.slice(0, 60) ?? 'no such field'}`,
        { where },
      );
    if (typeof o.id !== 'string' || o.id === '') throw bad('id', 'a problem id');
    if (!isKeyList(o.keys) || o.keys.length === 0)
      throw bad('keys', 'a non-empty list of answer keys (strings or null)');
    if (
      !Array.isArray(o.correct) ||
      o.correct.length !== o.keys.length ||
      !o.correct.every((c) => typeof c === 'boolean')
    )
      throw bad('correct', `a list of ${o.keys.length} booleans (one per key)`);
    // `majority` is absent from run directories written before it was recorded; only --use majority needs it.
    if (o.majority !== undefined && o.majority !== null && typeof o.majority !== 'string')
      throw bad('majority', 'an answer key or null');
    if (typeof o.majCorrect !== 'boolean') throw bad('majCorrect', 'a boolean');
    rows.push(o as unknown as EvalOutputRow);
  });
  if (rows.length === 0)
    throw new CorlError('CORL_ERR_EVAL_INPUT', 'expected at least one row, got an empty file', { where: file });
  return rows;
}

/**
 * Which answers are compared: the first sample of each problem (the paper's "answering once"), the
 * plurality, or every aligned pair of samples (sample j of A with sample j of B, for j below the
 * smaller sample count: N·K items, the same statistic with less sampling noise).
 */
export type AgreementBasis = 'first' | 'majority' | 'all';

/**
 * The rows of one agent, picked by index or name, from a file that holds several (a run
 * directory's `eval/step-*.jsonl`). CORL_ERR_EVAL_MISMATCH, listing the agents there, when none match.
 */
export function selectAgent(rows: readonly EvalOutputRow[], agent: string, file: string): EvalOutputRow[] {
  const picked = rows.filter((r) => r.agentName === agent || (/^\d+$/.test(agent) && r.agent === Number(agent)));
  if (picked.length === 0) {
    const present = [
      ...new Set(
        rows.map((r) => (r.agentName !== undefined ? `${r.agent ?? '?'} (${r.agentName})` : String(r.agent ?? '?'))),
      ),
    ];
    throw new CorlError(
      'CORL_ERR_EVAL_MISMATCH',
      `expected rows of agent "${agent}", got only agents ${present.join(', ')}`,
      { where: file, hint: 'name an agent by its index or name' },
    );
  }
  return picked;
}

/** κ/c/w/u of two outputs joined by problem id. */
export interface OutputAgreement {
  readonly agreement: Agreement;
  /** The problems compared, in the order of the first file. */
  readonly ids: readonly string[];
  /** Ids only in the first file, and only in the second (empty unless `intersect`). */
  readonly onlyA: readonly string[];
  readonly onlyB: readonly string[];
}

function byId(rows: readonly EvalOutputRow[], file: string): Map<string, EvalOutputRow> {
  const map = new Map<string, EvalOutputRow>();
  for (const r of rows) {
    if (map.has(r.id)) {
      const agents = new Set(rows.map((x) => x.agentName ?? x.agent)).size;
      throw new CorlError(
        'CORL_ERR_EVAL_MISMATCH',
        `expected one row per problem, got id "${r.id}" twice${agents > 1 ? ` (the file holds ${agents} agents)` : ''}`,
        { where: file, hint: "pass one agent's output file (corl eval --out writes one per agent)" },
      );
    }
    map.set(r.id, r);
  }
  return map;
}

const preview = (ids: readonly string[]): string =>
  `${ids
    .slice(0, 3)
    .map((i) => `"${i}"`)
    .join(', ')}${ids.length > 3 ? `, … (${ids.length} in all)` : ''}`;

/**
 * Join two outputs by problem id and compute κ, c, w and u. Correctness is the first sample's, the
 * plurality's, or every aligned sample pair's (`basis`); w counts items both get wrong with the same answer
 * (equal keys, or keys `equivalence` finds equal; null keys never match).
 */
export async function outputAgreement(
  a: readonly EvalOutputRow[],
  b: readonly EvalOutputRow[],
  options: {
    basis?: AgreementBasis;
    intersect?: boolean;
    fileA?: string;
    fileB?: string;
    equivalence?: Pick<Equivalence, 'equal'>;
  } = {},
): Promise<OutputAgreement> {
  const basis = options.basis ?? 'first';
  const mapA = byId(a, options.fileA ?? 'A');
  const mapB = byId(b, options.fileB ?? 'B');
  const onlyA = [...mapA.keys()].filter((id) => !mapB.has(id));
  const onlyB = [...mapB.keys()].filter((id) => !mapA.has(id));
  if ((onlyA.length || onlyB.length) && !options.intersect) {
    const parts = [
      onlyA.length ? `${onlyA.length} only in ${options.fileA ?? 'A'} (${preview(onlyA)})` : '',
      onlyB.length ? `${onlyB.length} only in ${options.fileB ?? 'B'} (${preview(onlyB)})` : '',
    ].filter(Boolean);
    throw new CorlError(
      'CORL_ERR_EVAL_MISMATCH',
      `expected both outputs to answer the same problems, got ${parts.join(' and ')}`,
    );
  }
  const ids = [...mapA.keys()].filter((id) => mapB.has(id));
  if (ids.length === 0)
    throw new CorlError('CORL_ERR_EVAL_MISMATCH', 'expected the outputs to share at least one problem id, got none', {
      hint: 'evaluate both models on the same data',
    });
  const ca: boolean[] = [];
  const cb: boolean[] = [];
  const same: boolean[] = [];
  // Without an equivalence, keys are the same only when identical.
  const eq = options.equivalence ?? IDENTICAL_KEYS;
  const add = async (kx: string | null, rx: boolean, ky: string | null, ry: boolean): Promise<void> => {
    ca.push(rx);
    cb.push(ry);
    // Two wrong answers are "the same" by the one key-match rule (0.5 and \frac{1}{2} when the run's
    // equivalence says so), as in the trainer's pair/* metrics.
    same.push(await matches(kx, ky, eq));
  };
  for (const id of ids) {
    const x = mapA.get(id)!;
    const y = mapB.get(id)!;
    if (basis === 'first') await add(x.keys[0] ?? null, x.correct[0]!, y.keys[0] ?? null, y.correct[0]!);
    else if (basis === 'majority') {
      if (x.majority === undefined || y.majority === undefined)
        throw new CorlError('CORL_ERR_EVAL_INPUT', `expected a "majority" field on problem "${id}", got none`, {
          where: x.majority === undefined ? (options.fileA ?? 'A') : (options.fileB ?? 'B'),
          hint: 'use --use first or all, or evaluate again with this version',
        });
      await add(x.majority, x.majCorrect, y.majority, y.majCorrect);
    } else
      for (let j = 0; j < Math.min(x.keys.length, y.keys.length); j++)
        await add(x.keys[j]!, x.correct[j]!, y.keys[j]!, y.correct[j]!);
  }
  return { agreement: agreement(ca, cb, same), ids, onlyA, onlyB };
}
