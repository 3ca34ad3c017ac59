import * as fs from 'node:fs';
import * as path from 'node:path';
import { standalonePlugin, standaloneRegistry } from '../config/standalone';
import { CorlError } from '../errors';
import { createHash } from 'node:crypto';
import { brotliText, existingOrGz, gzipText, readTextMaybeGz } from '../util/gz';
import { writeFileAtomic } from '../util/fs';
import { parse as parseJsonc } from 'jsonc-parser';
import { evalStepFiles } from './markdown';
import { READS_FILE } from './reads';
import { readUserText } from '../util/files';
import {
  COMPRESSED_SEALED_SUFFIX,
  folderSeal,
  SEAL_FILE,
  SEALED_SUFFIX,
  sealBytes,
  sealedFileContext,
  type Seal,
} from '../util/seal';
import { WALL_TIME_FILE } from './wall-time';

/** Options of {@link packCompare}. */
export interface PackOptions {
  /** A finished `corl compare --out` folder. */
  readonly from: string;
  /** Where the compact copy goes (created; must not hold another copy's runs). */
  readonly to: string;
  /** Absolute paths under this folder are written relative to it (default: the working directory); others keep only their last two parts. */
  readonly root?: string;
  /**
   * Problem id → category, for eval rows written before rows carried their category (see
   * {@link categoriesOfRun}); rows that already have one keep it.
   */
  readonly categories?: (runDir: string) => Promise<ReadonlyMap<string, string> | undefined>;
  /**
   * A compact copy (for comparisons of many seeds): brotli instead of gzip, JSON without
   * indentation, eval rows with only what is read of them (agent, id, correct, majority, category),
   * identical eval files (the step-0 rows of configs over the same base checkpoints) stored once
   * and linked, and the metrics no table, verdict or claim reads (losses, optimizer, vote and
   * completion statistics, reward curves) rounded to 4 significant digits. Everything the tables,
   * verdicts and claims read is kept exactly.
   */
  readonly compact?: boolean;
}

/** What {@link packCompare} wrote. */
export interface PackResult {
  readonly runs: number;
  readonly bytes: number;
  readonly skipped: readonly string[];
}

const RUN_FILES = ['config.json', 'config.source.json', 'run.json', 'state.json'];

/**
 * A compact copy of a comparison that `corl report` renders exactly as the original: per run its
 * config, run.json and state.json, metrics.jsonl gzip-compressed, and the eval rows of step 0 and
 * of the last evaluation (the ones every table uses), gzip-compressed; no checkpoints, no
 * intermediate eval rows. Unfinished runs are left out and listed.
 */
export async function packCompare(o: PackOptions): Promise<PackResult> {
  const meta = path.join(o.from, 'compare.json');
  if (!fs.existsSync(meta))
    throw new CorlError(
      'CORL_ERR_RUN_NOT_FOUND',
      `expected a comparison folder with compare.json, got none in ${o.from}`,
      { where: o.from, hint: 'pass the --out folder of corl compare' },
    );
  const root = path.resolve(o.root ?? process.cwd());
  const rel = (p: string): string => {
    const abs = path.resolve(p);
    return abs === root || abs.startsWith(root + path.sep)
      ? path.relative(root, abs) || '.'
      : abs.split(path.sep).slice(-2).join('/');
  };
  let bytes = 0;
  let runs = 0;
  const skipped: string[] = [];
  // compact packs store identical eval files once: content digest → the stored file
  const shared = new Map<string, string>();
  const write = async (file: string, data: string | Buffer): Promise<void> => {
    await writeFileAtomic(file, data);
    bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  };
  const m = JSON.parse(readUserText(meta)) as { configs?: unknown[] } & Record<string, unknown>;
  // The configs' names in the order corl compare was given them: the copy renders in that order
  // even where the config files themselves have since moved or changed.
  const order = (m.configs ?? [])
    .map((c) => {
      try {
        const v = typeof c === 'string' ? (parseJsonc(readUserText(c)) as { name?: unknown }) : undefined;
        return typeof v?.name === 'string' ? v.name : undefined;
      } catch {
        return undefined;
      }
    })
    .filter((n): n is string => n !== undefined);
  await write(
    path.join(o.to, 'compare.json'),
    JSON.stringify(
      { ...m, configs: (m.configs ?? []).map((c) => (typeof c === 'string' ? rel(c) : c)), order, packed: true },
      null,
      2,
    ) + '\n',
  );
  // the held-out reads travel with the runs: a copy shows what was read of them, and re-rendering it reads nothing new
  const ledger = path.join(o.from, READS_FILE);
  if (fs.existsSync(ledger)) await write(path.join(o.to, READS_FILE), readUserText(ledger));
  // the predicted and actual wall time of each look travel too (no result in them)
  const wall = path.join(o.from, WALL_TIME_FILE);
  if (fs.existsSync(wall)) await write(path.join(o.to, WALL_TIME_FILE), readUserText(wall));
  // a planned comparison's runs stay sealed in the copy, with the original's key: the copy opens them at
  // the plan's looks only, and counts its reads in the original's ledger too (core/report/reads.ts)
  const seal = folderSeal(o.from);
  if (seal) await write(path.join(o.to, SEAL_FILE), readUserText(seal.file));
  for (const name of fs
    .readdirSync(o.from, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()) {
    for (const seed of fs
      .readdirSync(path.join(o.from, name))
      .filter((s) => /^seed-\d+$/.test(s))
      .sort()) {
      const src = path.join(o.from, name, seed);
      const dst = path.join(o.to, name, seed);
      const state = path.join(src, 'state.json');
      if (!fs.existsSync(state) || JSON.parse(readUserText(state)).finished !== true) {
        skipped.push(`${name}/${seed}`);
        continue;
      }
      await packRun(src, dst, { o, rel, root, write, shared, seal });
      runs++;
    }
  }
  if (runs === 0)
    throw new CorlError('CORL_ERR_RUN_NOT_FOUND', `expected at least one finished run in ${o.from}, got none`, {
      where: o.from,
    });
  return { runs, bytes, skipped };
}

/** What {@link packRun} needs of the pack it writes into. */
interface PackContext {
  readonly o: PackOptions;
  readonly rel: (p: string) => string;
  readonly root: string;
  readonly write: (file: string, data: string | Buffer) => Promise<void>;
  readonly shared: Map<string, string>;
  /** The comparison's seal (a compact pack seals its compressed rows again with it). */
  readonly seal: Seal | undefined;
}

/** Metrics every table, verdict and claim reads, kept exactly in a compact pack (the rest: 4 significant digits). */
const EXACT = /^(eval\/|ensemble\/|pair\/|label\/accuracy|label\/count\/)/;

/** A number to 4 significant digits (integers and non-finite values unchanged). */
const fourDigits = (v: unknown): unknown =>
  typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v) ? Number(v.toPrecision(4)) : v;

/** Copy one finished run into the pack: its config and state, metrics, and the eval rows of step 0 and its last evaluation. */
async function packRun(src: string, dst: string, c: PackContext): Promise<void> {
  const { o, rel, root, write } = c;
  const json = (v: unknown): string => (o.compact ? JSON.stringify(v) : JSON.stringify(v, null, 2)) + '\n';
  for (const f of RUN_FILES) {
    const file = path.join(src, f);
    if (!fs.existsSync(file)) continue;
    let text = readUserText(file);
    if (f === 'run.json') {
      const r = JSON.parse(text) as Record<string, unknown>;
      for (const k of ['configFile', 'baseDir']) if (typeof r[k] === 'string') r[k] = rel(r[k] as string);
      text = json(r);
    } else if (text.includes(root + path.sep)) {
      // Configs given absolute paths (checkpoints, data files): no machine paths in a copy meant to be shared.
      const walk = (v: unknown): unknown =>
        typeof v === 'string' && path.isAbsolute(v) && v.startsWith(root + path.sep)
          ? rel(v)
          : Array.isArray(v)
            ? v.map(walk)
            : v && typeof v === 'object'
              ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
              : v;
      text = json(walk(JSON.parse(text)));
    } else if (o.compact) text = json(JSON.parse(text));
    await write(path.join(dst, f), text);
  }
  const metrics = readTextMaybeGz(existingOrGz(path.join(src, 'metrics.jsonl')));
  if (!o.compact) await write(path.join(dst, 'metrics.jsonl.gz'), gzipText(metrics));
  else {
    const rounded = metrics
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const r = JSON.parse(l) as { metrics?: Record<string, unknown>; sealed?: unknown };
        // a sealed evaluation line is copied as it is: it opens with the comparison's key only
        if (r.sealed !== undefined) return l;
        const m = Object.entries(r.metrics ?? {}).map(([k, v]) => [k, EXACT.test(k) ? v : fourDigits(v)]);
        return JSON.stringify({ ...r, metrics: Object.fromEntries(m) });
      });
    await write(path.join(dst, 'metrics.jsonl.br'), brotliText(rounded.join('\n') + '\n'));
  }
  const files = evalStepFiles(src);
  const steps = [...files.keys()].sort((a, b) => a - b);
  const keep = [...new Set([steps[0], steps[steps.length - 1]].filter((s): s is number => s !== undefined))];
  const categories = await o.categories?.(src);
  for (const step of keep) {
    const source = files.get(step)!;
    const name = `step-${String(step).padStart(6, '0')}.jsonl`;
    const sealed = source.endsWith(SEALED_SUFFIX);
    if (sealed && !o.compact) {
      // sealed rows stay sealed (bound to config/seed-i/eval/name, the same path in the copy)
      await write(path.join(dst, 'eval', `${name}${SEALED_SUFFIX}`), readUserText(source));
      continue;
    }
    // a compact pack opens sealed rows only to reduce and compress them, and seals them again with
    // the same key (ciphertext does not compress): nothing is shown, so nothing counts as a read
    const text = packedRows(readTextMaybeGz(source, { openSealed: sealed }), o.compact === true, categories);
    if (!o.compact) {
      await write(path.join(dst, 'eval', `${name}.gz`), gzipText(text));
      continue;
    }
    const digest = createHash('sha256')
      .update(sealed ? 'sealed\n' : 'clear\n')
      .update(text)
      .digest('hex');
    const stored = c.shared.get(digest);
    if (stored)
      await write(path.join(dst, 'eval', `${name}.link`), path.relative(path.join(dst, 'eval'), stored) + '\n');
    else {
      const file = path.join(dst, 'eval', `${name}${sealed ? COMPRESSED_SEALED_SUFFIX : '.br'}`);
      await write(file, sealed ? sealBytes(c.seal!, brotliText(text), sealedFileContext(file)) : brotliText(text));
      c.shared.set(digest, file);
    }
  }
}

/**
 * The eval rows of one step as a pack stores them: each row with its category (from the task, when
 * the row predates rows carrying one); a compact pack keeps only what the tables, verdicts and
 * scripts read of a row.
 */
function packedRows(text: string, compact: boolean, categories: ReadonlyMap<string, string> | undefined): string {
  const lines = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const row = JSON.parse(l) as Record<string, unknown>;
      const cat = typeof row.id === 'string' ? categories?.get(row.id) : undefined;
      const full = row.category === undefined && cat !== undefined ? { ...row, category: cat } : row;
      return JSON.stringify(
        compact
          ? Object.fromEntries(
              ['agent', 'id', 'correct', 'majority', 'category'].filter((k) => k in full).map((k) => [k, full[k]]),
            )
          : full,
      );
    });
  return lines.join('\n') + '\n';
}

/**
 * Problem id → category (the task's `metadata.category`) of a run's held-out and validation
 * problems, regenerated from the task section of its config.json: eval rows written before rows
 * carried their category get it when packed. Undefined when the task cannot be rebuilt.
 */
export async function categoriesOfRun(runDir: string): Promise<ReadonlyMap<string, string> | undefined> {
  try {
    const config = JSON.parse(readUserText(path.join(runDir, 'config.json'))) as {
      seed?: number;
      task?: { use?: string; options?: unknown };
    };
    if (typeof config.task?.use !== 'string') return undefined;
    const options = structuredClone(config.task.options ?? {}) as Record<string, unknown>;
    const task = await standalonePlugin(
      await standaloneRegistry([], runDir),
      'task',
      { use: config.task.use, options },
      { baseDir: runDir, seed: config.seed ?? 0, where: 'task' },
    );
    const data = await task.load();
    const out = new Map<string, string>();
    for (const p of [...data.heldOut, ...(data.validation ?? [])])
      if (typeof p.metadata?.category === 'string') out.set(p.id, p.metadata.category);
    return out;
  } catch {
    return undefined;
  }
}
