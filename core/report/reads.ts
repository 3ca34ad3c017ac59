// The held-out reads of a comparison folder, counted in its reads.jsonl.
//
// A read is one rendering, for a person, of evaluation results on the held-out split (the results
// table, the report page, the verdicts, results.md; by `corl compare` at its end or at a look, or by
// `corl report`) over a set of finished runs that no earlier read of the folder showed. Rendering
// the same runs again (another `corl report`, a regenerated docs table) shows nothing new and is not
// a read. The ledger names each read's runs (config → seed indices), what rendered them and, under a
// plan, the plan's sha256; `reconstructed` entries were added by hand from the history of results
// made before corl counted reads. Renderings of the validation split are not counted. The report of
// one run of a comparison (`corl report <folder>/<config>/seed-<i>`) is a read of that run. The
// ledger is chained (each record's hash covers the one before) and bound to the runs it showed
// (their run.json ids); compare.json keeps its count and last hash, so a ledger deleted, truncated or
// edited is reported (see checkedLedger), never silently restarted. Held-out
// numbers a person sees elsewhere (the progress display of an unplanned comparison prints held-out
// pass@1 at every evaluation; a plan's comparison hides it, and seals what its runs write: see
// core/util/seal.ts) are not in the ledger. A copy of a planned comparison (a copied folder, a
// pack) carries the original's seal, which names the original folder: a read of the copy is
// counted in the copy's ledger and, when the original is on this machine, in the original's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { CorlError } from '../errors';
import { readUserText } from '../util/files';
import { FolderLock } from '../util/folder-lock';
import { writeFileAtomic, writeJsonAtomic } from '../util/fs';
import { parseJson } from '../util/json';
import { checkCompareMeta, checkReadRecord } from './compare-files';
import type { ReportGroup } from './html';
import { seedIndex } from './paired';
import { folderSeal } from '../util/seal';

/** The ledger's file in a comparison folder. */
export const READS_FILE = 'reads.jsonl';

/** One read. */
export interface Read {
  /** 1-based count. */
  readonly read: number;
  /** What rendered it ("corl compare", "corl report", "corl compare, look 2"). */
  readonly by: string;
  /** ISO time (absent from reconstructed entries whose time is unknown). */
  readonly at?: string;
  /** Finished runs shown: config name → seed indices as ranges ("3-18", "0-2,5"). */
  readonly runs: Readonly<Record<string, string>>;
  /** sha256 of the plan the comparison ran under, if any. */
  readonly plan?: string;
  /** Added by hand from the history of results made before corl counted reads. */
  readonly reconstructed?: boolean;
  readonly note?: string;
  /** The hash of the read before (of its line, for a record of older corl), or the genesis hash for the first. */
  readonly prev?: string;
  /** sha256 of the identities (run.json `id`) of the runs shown, as the folder held them. */
  readonly runsDigest?: string;
  /** This record's hash: sha256 of `prev` and the record without `hash` (see {@link readHash}). */
  readonly hash?: string;
}

/** "0-2,5,7-8" for [0, 1, 2, 5, 7, 8]. */
export function ranges(xs: readonly number[]): string {
  const s = [...new Set(xs)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    out.push(j === i ? String(s[i]) : `${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

/** The runs of a rendering, as a ledger names them. */
export function runsOf(groups: readonly ReportGroup[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const g of [...groups].sort((a, b) => a.name.localeCompare(b.name)))
    out[g.name] = ranges(g.runs.map((r) => seedIndex(r) ?? -1).filter((i) => i >= 0));
  return out;
}

const same = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** What the first record of a ledger is chained to. */
export const LEDGER_GENESIS = sha256('corl reads.jsonl, chained, version 1');

/** JSON with its object keys sorted, so that a record's hash does not depend on key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** The hash of a record chained to `prev`: sha256 of `prev`, a newline and the record without its `hash`, canonical. */
export function readHash(prev: string, record: Omit<Read, 'hash'> & { hash?: string }): string {
  const { hash: _hash, ...rest } = record;
  return sha256(`${prev}\n${canonical(rest)}`);
}

/** What compare.json records of its ledger: the count and the last record's hash, and every damage ever found. */
export interface LedgerAnchor {
  readonly count: number;
  readonly head: string;
  readonly damaged?: readonly string[];
}

/** A ledger as read: its records, each line's text, and what is wrong with it (empty when intact). */
export interface Ledger {
  readonly reads: readonly Read[];
  readonly problems: readonly string[];
  /** The hash the next record is chained to. */
  readonly head: string;
}

/** The seed indices of a ledger's range text ("0-2,5"); undefined for text that is not one (a reconstructed note). */
function indices(text: string): number[] | undefined {
  if (!/^(\d+(-\d+)?(,\d+(-\d+)?)*)?$/.test(text)) return undefined;
  const out: number[] = [];
  for (const part of text.split(',').filter(Boolean)) {
    const [a, b] = part.split('-').map(Number) as [number, number | undefined];
    for (let i = a; i <= (b ?? a) && out.length < 100000; i++) out.push(i);
  }
  return out;
}

/** Whether a read showed seed index `index` of config `config`. */
export function readShows(r: Read, config: string, index: number): boolean {
  const text = r.runs[config];
  return text !== undefined && (indices(text) ?? []).includes(index);
}

/** The identity of each run a record names, as the folder holds them now: its run.json's id (or start time). */
export function runsDigest(dir: string, runs: Readonly<Record<string, string>>): string {
  const lines: string[] = [];
  for (const name of Object.keys(runs).sort())
    for (const i of indices(runs[name]!) ?? []) {
      let id = 'missing';
      try {
        const meta = JSON.parse(readUserText(path.join(dir, name, `seed-${i}`, 'run.json'))) as {
          id?: unknown;
          startedAt?: unknown;
        };
        id = typeof meta.id === 'string' ? meta.id : typeof meta.startedAt === 'string' ? meta.startedAt : 'unknown';
      } catch {
        // a run that is gone or unreadable: its identity is "missing"
      }
      lines.push(`${name}/seed-${i} ${id}`);
    }
  return sha256(lines.join('\n'));
}

function readLines(file: string): string[] {
  return readUserText(file)
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/** The reads recorded in a comparison folder (none when it has no ledger), each line checked against its schema. */
export function readLedger(dir: string): Read[] {
  const file = path.join(dir, READS_FILE);
  if (!fs.existsSync(file)) return [];
  return readLines(file).map((line, i) => {
    let value: unknown;
    try {
      value = parseJson(line);
    } catch {
      throw new CorlError(
        'CORL_ERR_RUN_CORRUPT',
        `expected a read {"read", "by", "runs"} per line, got ${JSON.stringify(line.slice(0, 80))}`,
        { where: `${file}:${i + 1}`, hint: 'restore reads.jsonl from version control; it is append-only' },
      );
    }
    return checkReadRecord(value, file, i + 1) as unknown as Read;
  });
}

/**
 * Read a folder's ledger and check it: numbered 1, 2, …; each chained record's `prev` is the hash
 * of the one before (records of older corl, unchained, may only come first) and its `hash` is its
 * own; each chained record's `runsDigest` matches the runs the folder holds now (a run replaced or
 * removed since it was read shows); and the count and last hash match what compare.json recorded
 * (`anchor`), so a missing, truncated or edited ledger is reported. Damage found once stays in the
 * anchor's `damaged`.
 */
export function checkedLedger(dir: string, anchor?: LedgerAnchor): Ledger {
  const file = path.join(dir, READS_FILE);
  const reads = readLedger(dir);
  const lines = fs.existsSync(file) ? readLines(file) : [];
  const problems: string[] = [...(anchor?.damaged ?? [])];
  const add = (p: string): void => {
    if (!problems.includes(p)) problems.push(p);
  };
  let prev = LEDGER_GENESIS;
  let chained = false;
  reads.forEach((r, k) => {
    if (r.read !== k + 1) add(`read ${k + 1} of reads.jsonl is numbered ${r.read}`);
    if (r.hash === undefined) {
      if (chained) add(`read ${r.read} carries no chain hash: it was added or edited by hand`);
      prev = sha256(lines[k]!);
      return;
    }
    chained = true;
    if (r.prev !== prev || r.hash !== readHash(prev, r))
      add(`read ${r.read} does not chain to the read before it: reads.jsonl was edited`);
    // corl has written the runs' digest into every chained record since it chained them: one without
    // is a record taken from elsewhere or rewritten, its chain recomputed
    else if (r.runsDigest === undefined) add(`read ${r.read} carries no runs digest: it was added or edited by hand`);
    else if (r.runsDigest !== runsDigest(dir, r.runs))
      add(`the runs read ${r.read} showed have been replaced or removed since`);
    prev = r.hash;
  });
  if (anchor) {
    if (!fs.existsSync(file) && anchor.count > 0)
      add(`reads.jsonl is missing, though compare.json records ${anchor.count} read(s)`);
    else if (reads.length < anchor.count)
      add(`reads.jsonl holds ${reads.length} read(s), though compare.json records ${anchor.count}: it was truncated`);
    else if (anchor.count > 0) {
      const r = reads[anchor.count - 1]!;
      const h = r.hash ?? sha256(lines[anchor.count - 1]!);
      if (h !== anchor.head)
        add(`read ${anchor.count} differs from the one compare.json records: reads.jsonl was edited`);
    }
  }
  return { reads, problems, head: prev };
}

/** compare.json's record of the ledger, if any (checked field by field: it is read back). */
function anchorOf(dir: string): { meta: Record<string, unknown> | undefined; anchor: LedgerAnchor | undefined } {
  const file = path.join(dir, 'compare.json');
  if (!fs.existsSync(file)) return { meta: undefined, anchor: undefined };
  const meta = checkCompareMeta(parseJson(readUserText(file)), file) as Record<string, unknown>;
  return { meta, anchor: meta.reads as LedgerAnchor | undefined };
}

/** The folder's ledger, checked against compare.json's record of it. */
export function folderLedger(dir: string): Ledger {
  return anchoredLedger(dir).ledger;
}

/**
 * compare.json, its record of the ledger, and the ledger checked against that record. A chained
 * ledger beside a compare.json that records none is damaged: the record was removed, so that a cut
 * ledger would pass.
 */
function anchoredLedger(dir: string): {
  meta: Record<string, unknown> | undefined;
  anchor: LedgerAnchor | undefined;
  ledger: Ledger;
} {
  const { meta, anchor } = anchorOf(dir);
  const ledger = checkedLedger(dir, anchor);
  const removed = 'compare.json records no count of reads, though reads.jsonl is chained: its record was removed';
  if (meta && !anchor && ledger.reads.some((r) => r.hash !== undefined) && !ledger.problems.includes(removed))
    return { meta, anchor, ledger: { ...ledger, problems: [...ledger.problems, removed] } };
  return { meta, anchor, ledger };
}

/**
 * Count a rendering of `groups` as a read of the held-out split, unless an earlier read showed
 * exactly these runs. The record is chained to the one before and bound
 * to the runs it shows; it is appended (nothing earlier is rewritten), and compare.json records the
 * new count and hash, with any damage found. Returns the ledger after it and whether this rendering
 * was a new read.
 */
export async function countRead(
  dir: string,
  groups: readonly ReportGroup[],
  by: string,
  plan?: string,
): Promise<{ readonly reads: readonly Read[]; readonly counted: boolean; readonly problems: readonly string[] }> {
  const result = await countReadHere(dir, groups, by, plan);
  // a copy of a planned comparison (cp -r, a pack) counts its reads in the original's ledger too,
  // when the original is on this machine: deleting the copy's ledger cannot make them vanish
  const seal = folderSeal(dir);
  const origin = seal && seal.origin !== path.resolve(dir) ? seal.origin : undefined;
  if (origin && folderSeal(origin)?.id === seal!.id && fs.existsSync(path.join(origin, 'compare.json')))
    await countReadHere(origin, groups, `${by}, of a copy at ${path.resolve(dir)}`, plan);
  return result;
}

async function countReadHere(
  dir: string,
  groups: readonly ReportGroup[],
  by: string,
  plan?: string,
): Promise<{ readonly reads: readonly Read[]; readonly counted: boolean; readonly problems: readonly string[] }> {
  // one writer of the ledger at a time: renderings by corl compare and corl report may meet
  const lock = await FolderLock.wait(dir, { command: by, file: 'reads.lock', pollMs: 100 });
  try {
    const { meta, anchor, ledger } = anchoredLedger(dir);
    const runs = runsOf(groups);
    if (ledger.reads.some((r) => same(r.runs, runs))) {
      // damage found for the first time is put on record, so that restoring the file cannot hide it
      if (meta && anchor && ledger.problems.some((p) => !(anchor.damaged ?? []).includes(p)))
        await writeJsonAtomic(path.join(dir, 'compare.json'), {
          ...meta,
          reads: { ...anchor, damaged: ledger.problems } satisfies LedgerAnchor,
        });
      return { reads: ledger.reads, counted: false, problems: ledger.problems };
    }
    const body: Omit<Read, 'hash'> = {
      read: ledger.reads.length + 1,
      by,
      at: new Date().toISOString(),
      runs,
      ...(plan ? { plan } : {}),
      prev: ledger.head,
      runsDigest: runsDigest(dir, runs),
    };
    const hash = readHash(ledger.head, body);
    const entry: Read = { ...body, hash };
    const file = path.join(dir, READS_FILE);
    const text = fs.existsSync(file) ? readUserText(file) : '';
    await writeFileAtomic(file, text + (text && !text.endsWith('\n') ? '\n' : '') + JSON.stringify(entry) + '\n');
    if (meta)
      await writeJsonAtomic(path.join(dir, 'compare.json'), {
        ...meta,
        reads: {
          count: entry.read,
          head: hash,
          ...(ledger.problems.length ? { damaged: ledger.problems } : {}),
        } satisfies LedgerAnchor,
      });
    return { reads: [...ledger.reads, entry], counted: true, problems: ledger.problems };
  } finally {
    lock.release();
  }
}
