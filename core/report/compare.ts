import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { loadConfig, loadConfigValue, type LoadedConfig } from '../config/load';
import { CorlError } from '../errors';
import { LineProgress, NoProgress, defaultProgress, type ProgressReporter } from '../trainer/progress';
import { labelUse, RunDirectory } from '../trainer/run-dir';
import { train } from '../trainer/trainer';
import { writeFileAtomic, writeJsonAtomic } from '../util/fs';
import { corlRoot } from '../util/paths';
import { renderReport, resultRow, resultTable, type ReportGroup, type ReportStatus, type ResultRow } from './html';
import { portablePath } from './portable';
import { evalStepFiles, markdownTables } from './markdown';
import { verdictLine } from './verdict';
import { readTextMaybeGz } from '../util/gz';
import { readRun } from './runs';

/** How to run {@link runCompare}. */
export interface CompareOptions {
  /** Config files, one row each. */
  readonly configs: readonly string[];
  /** Seeds per config: run i uses seed = config seed + 1000·i (agents add their index). */
  readonly seeds: number;
  /** Index of the first seed (default 0): runs i = firstSeed … firstSeed + seeds − 1, in folders seed-<i>. */
  readonly firstSeed?: number;
  /** Folder of the comparison: <out>/<config name>/seed-<i>/ per run, report.html, results.json. */
  readonly out: string;
  /** Override trainer.steps of every training config (evaluation-only configs, with 0 steps, stay at 0). */
  readonly steps?: number;
  /** Progress display per run: 'auto' (bar on a terminal), 'lines', or 'none'. */
  readonly progress?: 'auto' | 'lines' | 'none';
  /** Where status lines go. */
  readonly log?: (line: string) => void;
  /** End with a one-line verdict: the last config against each of the others (see {@link verdictLine}). */
  readonly verdict?: boolean;
}

/** What a comparison produced. */
export interface CompareResult {
  readonly rows: readonly ResultRow[];
  readonly table: string;
  readonly report: string;
  /** The verdict line, when asked for. */
  readonly verdict?: string;
}

/** Seed of run `i` of a config whose own seed is `base`: far apart, so agents' seeds (seed + index) never collide across runs. */
export function seedOf(base: number, i: number): number {
  return base + 1000 * i;
}

/**
 * Run every config with every seed (skipping finished runs and resuming unfinished ones, so an
 * interrupted comparison continues where it stopped), then write the table and the report.
 */
export async function runCompare(o: CompareOptions): Promise<CompareResult> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  if (o.configs.length === 0)
    throw new CorlError('CORL_ERR_CLI_USAGE', 'expected at least one config to compare, got none');
  // Validate every config before running anything.
  const loaded: LoadedConfig[] = [];
  for (const file of o.configs) {
    const plain = await loadConfig(file);
    loaded.push(
      o.steps === undefined || plain.config.trainer.steps === 0
        ? plain
        : await loadConfig(file, { overrides: { 'trainer.steps': o.steps } }),
    );
  }
  const names = loaded.map((l) => l.config.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected configs with distinct names, got "${dup}" twice`, {
      hint: 'set a different "name" in one of them',
    });
  fs.mkdirSync(o.out, { recursive: true });
  const first = o.firstSeed ?? 0;
  await writeJsonAtomic(path.join(o.out, 'compare.json'), {
    configs: o.configs.map((c) => path.resolve(c)),
    seeds: o.seeds,
    ...(first !== 0 ? { firstSeed: first } : {}),
    steps: o.steps ?? null,
  });

  const total = loaded.length * o.seeds;
  let k = 0;
  // Seed by seed across configs, so that a comparison cut short holds whole seeds of every config.
  for (let i = first; i < first + o.seeds; i++) {
    for (const l of loaded) {
      k++;
      await runOne(l, i, `[${k}/${total}] ${l.config.name} seed ${seedOf(l.config.seed, i)}`, o, log);
    }
  }
  const groups: ReportGroup[] = loaded.map((l) => ({
    name: l.config.name,
    runs: Array.from({ length: o.seeds }, (_, j) => readRun(path.join(o.out, l.config.name, `seed-${first + j}`))),
  }));
  const verdict =
    o.verdict && groups.length > 1
      ? compareVerdict(
          groups,
          loaded[loaded.length - 1]!.config.eval.split === 'validation' ? 'validation' : 'held-out',
        )
      : undefined;
  const written = await writeCompareOutputs(o.out, groups, [
    `Command: corl compare ${o.configs.map((c) => portablePath(c)).join(' ')} --seeds ${o.seeds}${first !== 0 ? ` --first-seed ${first}` : ''}${o.steps !== undefined ? ` --steps ${o.steps}` : ''} --out ${portablePath(o.out)}`,
    o.seeds === 1 && first === 0
      ? "Seeds: one run per config, at the config's own seed."
      : `Seeds: config seed + 1000·i for i = ${first}..${first + o.seeds - 1}.`,
  ]);
  return verdict ? { ...written, verdict } : written;
}

/** Run seed index `i` of one config in the comparison folder: skip it when finished, resume it when interrupted. */
async function runOne(
  l: LoadedConfig,
  i: number,
  label: string,
  o: CompareOptions,
  log: (l: string) => void,
): Promise<void> {
  const dir = path.join(o.out, l.config.name, `seed-${i}`);
  const progress: ProgressReporter =
    o.progress === 'none'
      ? new NoProgress()
      : o.progress === 'lines'
        ? new LineProgress(l.config.trainer.logEvery)
        : defaultProgress(l.config.trainer.logEvery);
  if (fs.existsSync(path.join(dir, 'state.json'))) {
    const { run } = RunDirectory.resume(dir);
    const state = run.state();
    if (state.finished && state.nextStep >= l.config.trainer.steps) {
      log(`${label}: done earlier, skipped`);
      return;
    }
    log(`${label}: resuming at step ${state.nextStep}`);
    const again = await loadConfigValue(run.source(), {
      baseDir: run.meta().baseDir,
      overrides: { 'trainer.steps': l.config.trainer.steps },
      name: l.config.name,
    });
    await run.writeConfig(again.config, again.source);
    if (state.finished) await run.writeState({ ...state, finished: false });
    await train(again, { run, resume: true, progress });
    return;
  }
  log(`${label}: starting`);
  const fresh = await loadConfigValue(l.source, {
    baseDir: l.baseDir,
    file: l.file,
    name: l.config.name,
    overrides: { seed: seedOf(l.config.seed, i) },
  });
  const run = await RunDirectory.create(dir, fresh.config, fresh.source, {
    configFile: l.file,
    baseDir: l.baseDir,
    ...labelUse(fresh),
  });
  await train(fresh, { run, progress });
}

/** The verdict of the last group against the others; problems counted from its first run's step-0 eval rows. */
function compareVerdict(groups: readonly ReportGroup[], split: string): string {
  const rows = groups.map(resultRow);
  const method = rows[rows.length - 1]!;
  const first = groups[groups.length - 1]!.runs[0];
  const file = first ? evalStepFiles(first.dir).get(0) : undefined;
  const problems = file
    ? readTextMaybeGz(file)
        .split('\n')
        .filter((l) => l.trim() && (JSON.parse(l) as { agent?: unknown }).agent === 0).length
    : 0;
  const seeAlso = resultsPage();
  return verdictLine({ method, baselines: rows.slice(0, -1), problems, split, ...(seeAlso ? { seeAlso } : {}) });
}

/**
 * Where the verdict's "see ... for 3" points: corl's docs/results.md (three seeds of every
 * baseline), as a path from the current folder (`docs/results.md` in a checkout,
 * `node_modules/corl/docs/results.md` in a project that installed corl); undefined when that file
 * is not there, so a verdict never names a page that does not exist.
 */
export function resultsPage(cwd = process.cwd(), root = corlRoot()): string | undefined {
  const file = path.join(root, 'docs', 'results.md');
  if (!fs.existsSync(file)) return undefined;
  const rel = path.relative(cwd, file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel.split(path.sep).join('/');
}

/** Write a comparison's table (results.txt, results.json) and report.html into its folder. */
async function writeCompareOutputs(
  out: string,
  groups: readonly ReportGroup[],
  notes: readonly string[],
  status?: ReportStatus,
): Promise<CompareResult> {
  const rows = groups.map(resultRow);
  const table = resultTable(rows);
  const report = path.join(out, 'report.html');
  await writeFileAtomic(
    report,
    renderReport(`corl compare: ${groups.map((g) => g.name).join(', ')}`, groups, notes, status ? { status } : {}),
  );
  await writeJsonAtomic(path.join(out, 'results.json'), rows);
  await writeFileAtomic(path.join(out, 'results.txt'), table + '\n');
  await writeFileAtomic(path.join(out, 'results.md'), markdownTables(groups, rows));
  return { rows, table, report };
}

/** What {@link reportCompare} found besides the table. */
export interface CompareReportResult extends CompareResult {
  /** Run folders left out because they have not finished (config/seed-i). */
  readonly unfinished: readonly string[];
}

/**
 * Rewrite the table and report.html of a comparison folder from the runs it holds, running nothing:
 * finished runs only (an unfinished one is listed, not shown), configs in the order `corl compare`
 * was given them. For a folder another `corl compare` is still filling, or after upgrading corl.
 */
export async function reportCompare(out: string): Promise<CompareReportResult> {
  const { groups, unfinished, order, seeds } = readComparison(out);
  const status = compareStatus(groups, order, seeds, unfinished);
  const result = await writeCompareOutputs(
    out,
    groups,
    [
      `Rendered by corl report ${portablePath(out)} from ${groups.reduce((n, g) => n + g.runs.length, 0)} finished run(s)${unfinished.length ? `; left out, unfinished: ${unfinished.join(', ')}` : ''}.`,
      'Seeds: config seed + 1000·i for run seed-i.',
    ],
    status,
  );
  return { ...result, unfinished };
}

/** The finished runs of a comparison folder, grouped by config in the order `corl compare` was given them. */
export interface Comparison {
  readonly groups: readonly ReportGroup[];
  /** Run folders left out because they have not finished (config/seed-i). */
  readonly unfinished: readonly string[];
  /** Config names in the order `corl compare` was given them. */
  readonly order: readonly string[];
  /** Seeds per config that `corl compare` was asked for (0 when not recorded). */
  readonly seeds: number;
}

/** Read a comparison folder (`corl compare --out`, or a packed copy), running nothing. */
export function readComparison(out: string): Comparison {
  const metaFile = path.join(out, 'compare.json');
  if (!fs.existsSync(metaFile))
    throw new CorlError(
      'CORL_ERR_RUN_NOT_FOUND',
      `expected a comparison folder with compare.json, got none in ${out}`,
      { where: out, hint: 'pass the --out folder of corl compare, or a run directory' },
    );
  let meta: { configs?: unknown; seeds?: unknown; order?: unknown };
  try {
    meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
  } catch (e) {
    throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected JSON in compare.json, got ${(e as Error).message}`, {
      where: metaFile,
    });
  }
  const groups: ReportGroup[] = [];
  const unfinished: string[] = [];
  const folders = fs
    .readdirSync(out, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  for (const name of folders) {
    const seeds = fs
      .readdirSync(path.join(out, name))
      .filter((s) => /^seed-\d+$/.test(s))
      .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
    const runs = [];
    for (const s of seeds) {
      const dir = path.join(out, name, s);
      if (!fs.existsSync(path.join(dir, 'state.json'))) continue;
      const run = RunDirectory.open(dir);
      const state = run.state();
      if (!state.finished) {
        unfinished.push(`${name}/${s}`);
        continue;
      }
      runs.push(readRun(dir));
    }
    if (runs.length) groups.push({ name, runs });
  }
  if (groups.length === 0)
    throw new CorlError(
      'CORL_ERR_RUN_NOT_FOUND',
      `expected at least one finished run in ${out}, got none${unfinished.length ? ` (${unfinished.length} unfinished)` : ''}`,
      { where: out },
    );
  // The order corl compare was given: each listed config's folder is named by the config's "name".
  // (a packed copy records the names themselves: its config paths may have moved since).
  const order = Array.isArray(meta.order)
    ? (meta.order as unknown[]).map((n) => (typeof n === 'string' ? n : undefined))
    : Array.isArray(meta.configs)
      ? (meta.configs as unknown[]).map((c) => (typeof c === 'string' ? configName(c) : undefined))
      : [];
  const rank = (n: string): number => {
    const i = order.indexOf(n);
    return i < 0 ? order.length : i;
  };
  groups.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
  return {
    groups,
    unfinished,
    order: order.filter((n): n is string => n !== undefined),
    seeds: typeof meta.seeds === 'number' ? meta.seeds : 0,
  };
}

/**
 * The banner of a comparison's report: what is missing against what `corl compare` was asked for
 * (configs without a finished run, configs with fewer finished seeds, unfinished runs left out).
 */
export function compareStatus(
  groups: readonly ReportGroup[],
  configs: readonly string[],
  seeds: number,
  unfinished: readonly string[],
): ReportStatus | undefined {
  const shown = new Set(groups.map((g) => g.name));
  const missing = configs.filter((n) => !shown.has(n));
  const short = groups.filter((g) => g.runs.length < seeds).map((g) => `${g.name} (${g.runs.length} of ${seeds})`);
  const parts = [
    missing.length ? `no finished run of ${missing.join(', ')}` : '',
    short.length ? `fewer finished seeds than asked for: ${short.join(', ')}` : '',
    unfinished.length ? `left out, unfinished: ${unfinished.join(', ')}` : '',
  ].filter(Boolean);
  if (!parts.length) return undefined;
  return {
    level: 'partial',
    message: `this comparison is incomplete: ${parts.join('; ')}. Means and sds are over the finished runs only; running the same corl compare again finishes it.`,
  };
}

/** The "name" of a config file, or undefined when it cannot be read (the report then orders by folder name). */
function configName(file: string): string | undefined {
  try {
    const v = parseJsonc(fs.readFileSync(file, 'utf8')) as { name?: unknown } | undefined;
    return typeof v?.name === 'string' ? v.name : undefined;
  } catch {
    return undefined;
  }
}
