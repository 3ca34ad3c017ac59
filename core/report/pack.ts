import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../errors';
import { existingOrGz, gzipText, readTextMaybeGz } from '../util/gz';
import { writeFileAtomic } from '../util/fs';
import { parse as parseJsonc } from 'jsonc-parser';
import { evalStepFiles } from './markdown';
import { READS_FILE } from './reads';

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
  const write = async (file: string, data: string | Buffer): Promise<void> => {
    await writeFileAtomic(file, data);
    bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  };
  const m = JSON.parse(fs.readFileSync(meta, 'utf8')) as { configs?: unknown[] } & Record<string, unknown>;
  // The configs' names in the order corl compare was given them: the copy renders in that order
  // even where the config files themselves have since moved or changed.
  const order = (m.configs ?? [])
    .map((c) => {
      try {
        const v = typeof c === 'string' ? (parseJsonc(fs.readFileSync(c, 'utf8')) as { name?: unknown }) : undefined;
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
  if (fs.existsSync(ledger)) await write(path.join(o.to, READS_FILE), fs.readFileSync(ledger, 'utf8'));
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
      if (!fs.existsSync(state) || JSON.parse(fs.readFileSync(state, 'utf8')).finished !== true) {
        skipped.push(`${name}/${seed}`);
        continue;
      }
      for (const f of RUN_FILES) {
        const file = path.join(src, f);
        if (!fs.existsSync(file)) continue;
        let text = fs.readFileSync(file, 'utf8');
        if (f === 'run.json') {
          const r = JSON.parse(text) as Record<string, unknown>;
          for (const k of ['configFile', 'baseDir']) if (typeof r[k] === 'string') r[k] = rel(r[k] as string);
          text = JSON.stringify(r, null, 2) + '\n';
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
          text = JSON.stringify(walk(JSON.parse(text)), null, 2) + '\n';
        }
        await write(path.join(dst, f), text);
      }
      await write(
        path.join(dst, 'metrics.jsonl.gz'),
        gzipText(readTextMaybeGz(existingOrGz(path.join(src, 'metrics.jsonl')))),
      );
      const files = evalStepFiles(src);
      const steps = [...files.keys()].sort((a, b) => a - b);
      const keep = [...new Set([steps[0], steps[steps.length - 1]].filter((s): s is number => s !== undefined))];
      const categories = await o.categories?.(src);
      for (const step of keep) {
        const lines = readTextMaybeGz(files.get(step)!)
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => {
            const row = JSON.parse(l) as Record<string, unknown>;
            const c = typeof row.id === 'string' ? categories?.get(row.id) : undefined;
            return JSON.stringify(row.category === undefined && c !== undefined ? { ...row, category: c } : row);
          });
        await write(
          path.join(dst, 'eval', `step-${String(step).padStart(6, '0')}.jsonl.gz`),
          gzipText(lines.join('\n') + '\n'),
        );
      }
      runs++;
    }
  }
  if (runs === 0)
    throw new CorlError('CORL_ERR_RUN_NOT_FOUND', `expected at least one finished run in ${o.from}, got none`, {
      where: o.from,
    });
  return { runs, bytes, skipped };
}
