// Reading and rendering a comparison folder (`corl compare --out`, or a packed copy): its table,
// report page, results.md and verdicts, running nothing. Running the comparison is core/compare's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { CorlError } from '../errors';
import { RunDirectory } from '../trainer/run-dir';
import { writeFileAtomic, writeJsonAtomic } from '../util/fs';
import { corlRoot } from '../util/paths';
import { comparisonVerdicts, designOf, type Design, type PlanRecord, type Verdicts } from './design';
import { followPlan, type FollowResult } from './follow';
import { renderReport, resultRow, resultTable, type ReportGroup, type ReportStatus, type ResultRow } from './html';
import { groupIdentities } from './committed';
import { markdownTables } from './markdown';
import { PRIMARY_TEXT, seedIndex, primaryValue } from './paired';
import { portablePath } from './portable';
import { countRead, folderLedger } from './reads';
import { readRun } from './runs';
import { pairedHtml, provenanceLine, verdictHtml, verdictsText, type Provenance } from './verdict';
import { oneLineVerdict, type OneLineVerdict } from './verdict-line';
import { readUserText } from '../util/files';
import { parseJson } from '../util/json';
import { checkCompareMeta } from './compare-files';
import { lookWallTimes, readWallTime, wallTimeLines } from './wall-time';

/** What compare.json holds (every field optional: older folders and packed copies have fewer). */
export interface CompareMeta {
  readonly configs?: unknown;
  readonly seeds?: unknown;
  readonly firstSeed?: unknown;
  readonly steps?: unknown;
  readonly order?: unknown;
  readonly packed?: unknown;
  /** How the comparison decides, when set by `corl compare` flags (a plan's design comes from the plan). */
  readonly design?: unknown;
  /** The plan the comparison runs under. */
  readonly plan?: unknown;
  /** sha256 of each config file when the comparison started, by config name. */
  readonly sha256?: unknown;
  /** The reads ledger's anchor: its count and last hash, and damage found (see ./reads.ts). */
  readonly reads?: unknown;
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
  readonly meta: CompareMeta;
  readonly design: Design;
  /** Configs of the folder with finished runs that the reading left out (not among `only`). */
  readonly others: readonly string[];
}

/** What a rendering of a comparison produced. */
export interface CompareResult {
  readonly rows: readonly ResultRow[];
  readonly table: string;
  readonly report: string;
  readonly verdicts: Verdicts;
  /** The verdicts, the look, the plan and the reads, as terminal lines. */
  readonly summary: string;
  readonly provenance: Provenance;
  readonly follow?: FollowResult;
  /** The one-line verdict of `corl compare --verdict`, when asked for. */
  readonly verdict?: string;
  /** The one-line verdict of the configs shown and the committed results it quotes (two configs or more). */
  readonly oneLine?: OneLineVerdict;
}

/** Read compare.json of a folder; CORL_ERR_RUN_NOT_FOUND without one, CORL_ERR_RUN_CORRUPT when it is not JSON. */
export function readCompareMeta(out: string): CompareMeta {
  const metaFile = path.join(out, 'compare.json');
  if (!fs.existsSync(metaFile))
    throw new CorlError(
      'CORL_ERR_RUN_NOT_FOUND',
      `expected a comparison folder with compare.json, got none in ${out}`,
      {
        where: out,
        hint: 'pass the --out folder of corl compare, or a run directory',
      },
    );
  let value: unknown;
  try {
    value = parseJson(readUserText(metaFile));
  } catch (e) {
    throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected JSON in compare.json, got ${(e as Error).message}`, {
      where: metaFile,
    });
  }
  return checkCompareMeta(value, metaFile);
}

/**
 * Read a comparison folder (`corl compare --out`, or a packed copy), running nothing: every config
 * it holds, or with `only` those configs alone (the others are named in `others`).
 */
export function readComparison(
  out: string,
  options: { readonly allowEmpty?: boolean; readonly only?: readonly string[] } = {},
): Comparison {
  const meta = readCompareMeta(out);
  const design = designOf(meta, path.join(out, 'compare.json'));
  const groups: ReportGroup[] = [];
  const unfinished: string[] = [];
  const folders = fs
    .readdirSync(out, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const others: string[] = [];
  for (const name of folders) {
    if (options.only && !options.only.includes(name)) {
      if (fs.readdirSync(path.join(out, name)).some((s) => /^seed-\d+$/.test(s))) others.push(name);
      continue;
    }
    const seeds = fs
      .readdirSync(path.join(out, name))
      .filter((s) => /^seed-\d+$/.test(s))
      .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
    const runs = [];
    for (const s of seeds) {
      const dir = path.join(out, name, s);
      if (!fs.existsSync(path.join(dir, 'state.json'))) continue;
      const state = RunDirectory.open(dir).state();
      if (!state.finished) {
        unfinished.push(`${name}/${s}`);
        continue;
      }
      runs.push(readRun(dir));
    }
    if (runs.length) groups.push({ name, runs });
  }
  if (groups.length === 0 && !options.allowEmpty)
    throw new CorlError(
      'CORL_ERR_RUN_NOT_FOUND',
      `expected at least one finished run in ${out}, got none${unfinished.length ? ` (${unfinished.length} unfinished)` : ''}`,
      { where: out },
    );
  // The order corl compare was given: each listed config's folder is named by the config's "name"
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
  const names = order.filter((n): n is string => n !== undefined);
  return {
    groups,
    unfinished,
    order: names.length ? names : groups.map((g) => g.name),
    seeds: typeof meta.seeds === 'number' ? meta.seeds : 0,
    meta,
    design,
    others,
  };
}

/** The evaluation split of a comparison's runs (the first run's config.json; held-out by default). */
function splitOf(groups: readonly ReportGroup[]): 'held-out' | 'validation' {
  const dir = groups[0]?.runs[0]?.dir;
  if (!dir) return 'held-out';
  try {
    const c = JSON.parse(readUserText(path.join(dir, 'config.json'))) as { eval?: { split?: unknown } };
    return c.eval?.split === 'validation' ? 'validation' : 'held-out';
  } catch {
    return 'held-out';
  }
}

/** Options of {@link renderComparison}. */
export interface RenderOptions {
  /** What renders it, for the reads ledger ("corl compare", "corl report"). */
  readonly by: string;
  /** Notes under the report's title. */
  readonly notes: readonly string[];
  readonly status?: ReportStatus;
  /** Where a one-seed page looks for committed results of the same configs (default: corl's docs/results). */
  readonly committed?: string;
}

/**
 * Write a comparison's table (results.txt, results.json, results.md), verdicts (verdicts.json) and
 * report.html into its folder, counting the rendering in reads.jsonl when it shows held-out
 * results of runs no earlier read showed.
 */
export async function renderComparison(out: string, c: Comparison, o: RenderOptions): Promise<CompareResult> {
  const verdicts = comparisonVerdicts(c.groups, c.order, c.design);
  const { groups, hidden } = shownRuns(c, verdicts);
  const split = splitOf(c.groups);
  const record = c.meta.plan as PlanRecord | undefined;
  // predicted and actual wall time per look: no result, so shown before a look too (on the page and
  // the terminal; results.md, the committed table, stays what the runs' results alone decide)
  const log = readWallTime(out);
  const wall = wallTimeLines(lookWallTimes(log, c.design, c.order), log);
  if (!groups.length) return renderBlind(out, c, verdicts, { split, record, hidden, wall });
  const rows = groups.map(resultRow);
  const table = resultTable(rows);
  const ledger = split === 'held-out' ? await countRead(out, groups, o.by, record?.sha256) : folderLedger(out);
  const reads = ledger.reads;
  const follow = record ? followPlan(record, groups, reads, ledger.problems) : undefined;
  const provenance: Provenance = {
    ...(record ? { plan: { name: record.plan.name, file: record.file, sha256: record.sha256 } } : {}),
    ...(follow ? { follow } : {}),
    split,
    reads: reads.length,
    ...(ledger.problems.length ? { ledger: ledger.problems } : {}),
    reconstructed: reads.filter((r) => r.reconstructed).length,
  };
  const metricText = `${split} ${PRIMARY_TEXT[c.design.metric]}`;
  const report = path.join(out, 'report.html');
  const oneLine = oneLineVerdict(groups, split, o.committed ?? committedFolder(), resultsPage());
  const oneSeed = Math.min(...groups.map((g) => g.runs.length)) < 2;
  const notes = [
    ...o.notes,
    ...(hidden ? [hiddenNote(hidden, verdicts)] : []),
    ...(c.others.length ? [othersNote(out, c.others)] : []),
    ...wall,
  ];
  await writeFileAtomic(
    report,
    renderReport(`corl compare: ${groups.map((g) => g.name).join(', ')}`, groups, notes, {
      ...(o.status ? { status: o.status } : {}),
      verdict: verdictHtml(
        verdicts,
        metricText,
        provenance,
        oneLine && oneSeed ? { committed: oneLine.committed } : {},
      ),
      paired: pairedHtml(verdicts, metricText),
    }),
  );
  await writeJsonAtomic(path.join(out, 'results.json'), rows);
  await writeFileAtomic(path.join(out, 'results.txt'), table + '\n');
  await writeFileAtomic(
    path.join(out, 'results.md'),
    markdownTables(groups, rows, { verdicts, provenance, metricText }),
  );
  await writeJsonAtomic(path.join(out, 'verdicts.json'), verdictsJson(groups, verdicts, provenance, follow));
  return {
    rows,
    table,
    report,
    verdicts,
    summary: [
      verdictsText(verdicts, metricText, provenance),
      ...(c.others.length ? [othersNote(out, c.others)] : []),
      ...wall,
    ].join('\n'),
    provenance,
    ...(follow ? { follow } : {}),
    ...(oneLine ? { oneLine } : {}),
  };
}

/** The configs a folder holds beyond those this comparison named, and that they are left out. */
export function othersNote(out: string, others: readonly string[]): string {
  return `${portablePath(out)} also holds runs of ${others.join(', ')}, not named on this command line: this table, page and verdict leave them out (corl report ${portablePath(out)} renders every config the folder holds).`;
}

/**
 * The runs a rendering may show: under a sequential design only those of the last completed look
 * (or of the look where it stopped), so that results are read at looks and nowhere between; with
 * no look yet, none. Returns them and how many finished runs it hides.
 */
function shownRuns(c: Comparison, v: Verdicts): { groups: readonly ReportGroup[]; hidden: number } {
  const seq = c.design.sequential;
  if (!seq) return { groups: c.groups, hidden: 0 };
  const look = v.looks?.[v.looks.length - 1];
  const keep = (i: number | undefined): boolean =>
    look !== undefined && i !== undefined && i >= seq.first && i < seq.first + look.seeds;
  const groups = c.groups
    .map((g) => ({ ...g, runs: g.runs.filter((r) => keep(seedIndex(r))) }))
    .filter((g) => g.runs.length);
  const total = c.groups.reduce((n, g) => n + g.runs.length, 0);
  return { groups, hidden: total - groups.reduce((n, g) => n + g.runs.length, 0) };
}

function hiddenNote(hidden: number, v: Verdicts): string {
  const look = v.looks?.[v.looks.length - 1];
  return `${hidden} finished run(s) after ${look ? `look ${look.look}` : 'the start'} are not shown: under a sequential design results are read at its looks only${v.next ? ` (${v.next})` : ''}.`;
}

/** Before a sequential comparison's first look: progress only, no held-out result, no read. */
async function renderBlind(
  out: string,
  c: Comparison,
  verdicts: Verdicts,
  x: { split: 'held-out' | 'validation'; record?: PlanRecord; hidden: number; wall: readonly string[] },
): Promise<CompareResult> {
  const ledger = folderLedger(out);
  const reads = ledger.reads;
  const provenance: Provenance = {
    ...(x.record ? { plan: { name: x.record.plan.name, file: x.record.file, sha256: x.record.sha256 } } : {}),
    split: x.split,
    reads: reads.length,
    ...(ledger.problems.length ? { ledger: ledger.problems } : {}),
    reconstructed: reads.filter((r) => r.reconstructed).length,
  };
  const finished = c.groups.map((g) => `${g.name} ${g.runs.length}`).join(', ');
  const line = `No look yet: ${verdicts.next ?? 'the first look is not complete'}. Finished runs per config: ${finished || 'none'}. Under a sequential design no result is shown before a look.`;
  const report = path.join(out, 'report.html');
  const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  await writeFileAtomic(
    report,
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>corl compare: no look yet</title></head><body style="font-family:system-ui,sans-serif;margin:24px">\n<h1>corl compare: ${esc(c.order.join(', '))}</h1>\n<p>${esc(line)}</p>\n<p>${esc(provenanceLine(provenance))}</p>\n${x.wall.map((w) => `<p>${esc(w)}</p>\n`).join('')}</body></html>\n`,
  );
  await writeJsonAtomic(path.join(out, 'results.json'), []);
  await writeFileAtomic(path.join(out, 'results.txt'), line + '\n');
  await writeFileAtomic(path.join(out, 'results.md'), `${provenanceLine(provenance)}\n\n${line}\n`);
  await writeJsonAtomic(path.join(out, 'verdicts.json'), {
    design: verdicts.design,
    split: x.split,
    reads: reads.length,
    pairs: [],
    looks: [],
    next: verdicts.next,
  });
  const metricText = `${x.split} ${PRIMARY_TEXT[c.design.metric]}`;
  return {
    rows: [],
    table: line,
    report,
    verdicts,
    summary: [verdictsText(verdicts, metricText, provenance), ...x.wall].join('\n'),
    provenance,
  };
}

/**
 * verdicts.json: the design, the verdicts (and every look), the plan check, the reads, each
 * config's identity (to find the committed result of the same configs) and each seed's primary
 * metric, so that a verdict on any pair can be recomputed without the runs.
 */
function verdictsJson(
  groups: readonly ReportGroup[],
  v: Verdicts,
  p: Provenance,
  follow: FollowResult | undefined,
): unknown {
  const identities = groupIdentities(groups);
  const values: Record<string, Record<string, Record<string, number>>> = { final: {}, change: {} };
  for (const g of groups) {
    for (const metric of ['final', 'change'] as const)
      values[metric]![g.name] = Object.fromEntries(
        g.runs.flatMap((r) => {
          const i = seedIndex(r);
          return i === undefined ? [] : [[String(i), round(primaryValue(r, metric))]];
        }),
      );
  }
  return {
    design: v.design,
    ...(p.plan ? { plan: p.plan } : {}),
    ...(follow ? { followed: follow.followed, checks: follow.checks, before: follow.before } : {}),
    split: p.split,
    reads: p.reads,
    pairs: v.pairs,
    ...(v.looks
      ? {
          looks: v.looks.map((l) => ({
            ...l,
            pairs: l.pairs.map(({ seeds, ...rest }) => ({ ...rest, seeds: seeds.length })),
          })),
        }
      : {}),
    ...(v.stopped !== undefined ? { stopped: v.stopped } : {}),
    ...(v.next ? { next: v.next } : {}),
    identities,
    values,
  };
}

const round = (x: number): number => (Number.isFinite(x) ? Math.round(x * 1e9) / 1e9 : x);

/** What {@link reportCompare} found besides the table. */
export interface CompareReportResult extends CompareResult {
  /** Run folders left out because they have not finished (config/seed-i). */
  readonly unfinished: readonly string[];
}

/**
 * Rewrite the table, verdicts and report.html of a comparison folder from the runs it holds, running
 * nothing: finished runs only (an unfinished one is listed, not shown), configs in the order
 * `corl compare` was given them. For a folder another `corl compare` is still filling, or after
 * upgrading corl.
 */
export async function reportCompare(out: string): Promise<CompareReportResult> {
  const c = readComparison(out);
  const status = compareStatus(c.groups, c.order, c.seeds, c.unfinished);
  const result = await renderComparison(out, c, {
    by: 'corl report',
    notes: [
      `Rendered by corl report ${portablePath(out)} from ${c.groups.reduce((n, g) => n + g.runs.length, 0)} finished run(s)${c.unfinished.length ? `; left out, unfinished: ${c.unfinished.join(', ')}` : ''}.`,
      'Seeds: config seed + 1000·i for run seed-i.',
    ],
    ...(status ? { status } : {}),
  });
  return { ...result, unfinished: c.unfinished };
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
    const v = parseJsonc(readUserText(file)) as { name?: unknown } | undefined;
    return typeof v?.name === 'string' ? v.name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * corl's docs/results.md (the many-seed comparisons of every baseline), as a path from the current
 * folder (`docs/results.md` in a checkout, `node_modules/corl/docs/results.md` in a project that
 * installed corl); undefined when that file is not there, so a verdict never names a page that does
 * not exist.
 */
export function resultsPage(cwd = process.cwd(), root = corlRoot()): string | undefined {
  const file = path.join(root, 'docs', 'results.md');
  if (!fs.existsSync(file)) return undefined;
  const rel = path.relative(cwd, file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel.split(path.sep).join('/');
}

/** corl's committed comparisons (docs/results/, in a checkout; an installed package ships none). */
export function committedFolder(root = corlRoot()): string {
  return path.join(root, 'docs', 'results');
}
