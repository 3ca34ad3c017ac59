import * as fs from 'node:fs';
import * as path from 'node:path';
import { readEvalRows, passOf } from './eval-rows';
import type { ReportGroup, ResultRow } from './html';
import { agreement } from '../metrics/agreement';
import { meanSd, metricSeries, valueAt, type RunSummary, type Stat } from './runs';
import type { Verdicts } from './design';
import { intervalText, provenanceLine, signedPoints, verdictsMarkdown, type Provenance } from './verdict';
import { baseVoteLines, beatsText, type SeedGap } from './base-vote';
import { readUserText } from '../util/files';
import { isSealedRunFolder, SEALED_SUFFIX } from '../util/seal';
import { CorlError } from '../errors';
import { insideFolder } from '../trainer/run-files';

/** What results.md says beside the tables: the plan and reads behind them, and the verdicts. */
export interface TablesContext {
  readonly verdicts: Verdicts;
  readonly provenance: Provenance;
  /** The primary metric in words. */
  readonly metricText: string;
}

/** What a category table needs of one evaluation row (a run's eval/step-N.jsonl). */
interface CategoryEvalRow {
  readonly agent: number;
  readonly category: string;
  /** pass@1 of the row: the fraction of its samples that were right. */
  readonly pass: number;
}

/**
 * The eval-row files of a run, by step: plain, gzip- or brotli-compressed, sealed (a planned run's,
 * opened with its comparison's key; `.br.sealed` in a compact pack: compressed, then sealed), or a link (a
 * `step-N.jsonl.link` file holding the path, relative to its folder, of another run's identical
 * rows: a compact pack stores the step-0 rows runs share once).
 */
export function evalStepFiles(runDir: string): Map<number, string> {
  const dir = path.join(runDir, 'eval');
  const out = new Map<number, { file: string; rank: number }>();
  if (!fs.existsSync(dir)) return new Map();
  if (!fs.statSync(dir).isDirectory())
    throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected eval to be the folder of evaluation rows, got a file`, {
      where: dir,
      hint: "a run folder's eval/ holds step-N.jsonl files: restore it from a copy",
    });
  const ranks: Record<string, number> = { '': 0, '.gz': 1, '.br': 2, '.link': 3, '.sealed': 4, '.br.sealed': 5 };
  // a sealed run's rows are all sealed: rows in the clear beside them were not written by corl
  const sealed = isSealedRunFolder(runDir);
  for (const f of fs.readdirSync(dir)) {
    const m = /^step-(\d+)\.jsonl(\.gz|\.br\.sealed|\.br|\.link|\.sealed)?$/.exec(f);
    if (!m) continue;
    const rank = ranks[m[2] ?? '']!;
    const step = Number(m[1]);
    let file = path.join(dir, f);
    // a link of a packed copy names another run's rows of the same comparison, never a file outside it
    if (m[2] === '.link') {
      const target = insideFolder(
        path.dirname(path.dirname(path.resolve(runDir))),
        dir,
        readUserText(file).trim(),
        file,
      );
      if (!/^step-\d+\.jsonl(\.gz|\.br|\.br\.sealed)?$/.test(path.basename(target)))
        throw new CorlError(
          'CORL_ERR_RUN_CORRUPT',
          `expected a link to another run's step-N.jsonl, got ${path.basename(target)}`,
          {
            where: file,
          },
        );
      file = target;
    }
    if (sealed && !file.endsWith(SEALED_SUFFIX))
      throw new CorlError(
        'CORL_ERR_RUN_CORRUPT',
        `expected the evaluation rows of a sealed run to be sealed, got ${path.basename(file)} in the clear`,
        { where: path.join(dir, f), hint: 'remove the file, or restore the run folder from a copy of the comparison' },
      );
    if (out.has(step) && out.get(step)!.rank <= rank) continue;
    out.set(step, { file, rank });
  }
  return new Map([...out].map(([step, v]) => [step, v.file]));
}

/** Read the evaluation rows of one step that carry a category (rows without one are skipped). */
export function readCategoryRows(file: string): CategoryEvalRow[] {
  return readEvalRows(file)
    .filter((r) => r.category !== undefined && r.correct.length > 0)
    .map((r) => ({ agent: r.agent, category: r.category!, pass: passOf(r) }));
}

/** pass@1 by agent and category of one step's rows, with each category's problem count. */
function byCategory(rows: readonly CategoryEvalRow[]): Map<number, Map<string, { sum: number; n: number }>> {
  const out = new Map<number, Map<string, { sum: number; n: number }>>();
  for (const r of rows) {
    const a = out.get(r.agent) ?? new Map<string, { sum: number; n: number }>();
    out.set(r.agent, a);
    const c = a.get(r.category) ?? { sum: 0, n: 0 };
    a.set(r.category, c);
    c.sum += r.pass;
    c.n++;
  }
  return out;
}

/** One (config, agent) line of the category table: pass@1 on each category at step 0 and at the last evaluation. */
export interface CategoryLine {
  readonly config: string;
  readonly agent: string;
  readonly cells: Readonly<Record<string, { readonly start: Stat; readonly end: Stat; readonly change: Stat }>>;
}

/** The category split of a comparison: problems per category, and a line per (config, agent). */
export interface CategoryTable {
  readonly categories: readonly string[];
  readonly problems: Readonly<Record<string, number>>;
  readonly lines: readonly CategoryLine[];
}

/**
 * Held-out pass@1 by problem category (the task's `metadata.category`, carried into the eval rows)
 * at step 0 and at each run's last evaluation, mean ± sd over seeds. Undefined when no run's rows
 * carry a category.
 */
export function categoryTable(groups: readonly ReportGroup[]): CategoryTable | undefined {
  const problems: Record<string, number> = {};
  const lines: CategoryLine[] = [];
  for (const g of groups) {
    const agents = g.runs[0]?.agents ?? [];
    const perRun = g.runs.map((run) => {
      const files = evalStepFiles(run.dir);
      const steps = [...files.keys()].sort((a, b) => a - b);
      if (steps.length === 0 || steps[0] !== 0) return undefined;
      const start = byCategory(readCategoryRows(files.get(0)!));
      const end = byCategory(readCategoryRows(files.get(steps[steps.length - 1]!)!));
      return { start, end };
    });
    agents.forEach((a, i) => {
      const cells: Record<string, { start: Stat; end: Stat; change: Stat }> = {};
      const cats = new Set<string>();
      for (const r of perRun) for (const c of r?.start.get(i)?.keys() ?? []) cats.add(c);
      for (const c of cats) {
        const s: number[] = [];
        const e: number[] = [];
        for (const r of perRun) {
          const cs = r?.start.get(i)?.get(c);
          const ce = r?.end.get(i)?.get(c);
          if (!cs || !ce) continue;
          problems[c] = cs.n;
          s.push(cs.sum / cs.n);
          e.push(ce.sum / ce.n);
        }
        if (s.length) cells[c] = { start: meanSd(s), end: meanSd(e), change: meanSd(e.map((x, k) => x - s[k]!)) };
      }
      if (Object.keys(cells).length) lines.push({ config: g.name, agent: a.name, cells });
    });
  }
  if (lines.length === 0) return undefined;
  return { categories: Object.keys(problems).sort(categoryOrder), problems, lines };
}

/** plain first, then single features, then combinations, alphabetically within each. */
function categoryOrder(a: string, b: string): number {
  const rank = (c: string): number => (c === 'plain' ? 0 : c.includes('+') ? 2 : 1);
  return rank(a) - rank(b) || a.localeCompare(b);
}

/** One (config, agent) line of the pseudo-label table: label accuracy by category early and late in training. */
export interface LabelLine {
  readonly config: string;
  readonly agent: string;
  readonly cells: Readonly<Record<string, { readonly first: Stat; readonly last: Stat }>>;
}

/**
 * Pseudo-label accuracy by problem category (`label/accuracy/<c>` weighted by `label/count/<c>`)
 * over the first and the last `window` training steps of each run, mean ± sd over seeds. Only
 * configs whose reward gives labels (votes) have lines.
 */
export function labelCategoryLines(groups: readonly ReportGroup[], window = 10): LabelLine[] {
  const lines: LabelLine[] = [];
  for (const g of groups) {
    const agents = g.runs[0]?.agents ?? [];
    agents.forEach((a, i) => {
      const cats = new Set<string>();
      for (const run of g.runs)
        for (const r of run.records)
          if (r.agent === i && r.phase === 'train')
            for (const k of Object.keys(r.metrics))
              if (k.startsWith('label/accuracy/')) cats.add(k.slice('label/accuracy/'.length));
      const cells: Record<string, { first: Stat; last: Stat }> = {};
      for (const c of cats) {
        const first: number[] = [];
        const last: number[] = [];
        for (const run of g.runs) {
          const acc = metricSeries(run.records, `label/accuracy/${c}`, i, 'train');
          const cnt = new Map(metricSeries(run.records, `label/count/${c}`, i, 'train'));
          const steps = run.steps;
          const weighted = (from: number, to: number): number => {
            let s = 0;
            let n = 0;
            for (const [step, v] of acc)
              if (step >= from && step <= to) {
                const w = cnt.get(step) ?? 1;
                s += v * w;
                n += w;
              }
            return n ? s / n : NaN;
          };
          first.push(weighted(1, window));
          last.push(weighted(steps - window + 1, steps));
        }
        cells[c] = { first: meanSd(first), last: meanSd(last) };
      }
      if (Object.keys(cells).length) lines.push({ config: g.name, agent: a.name, cells });
    });
  }
  return lines;
}

/** κ and c of every agent pair at step 0 and at the last evaluation, mean ± sd over seeds. */
export interface PairLine {
  readonly config: string;
  readonly pair: string;
  readonly kappa: { readonly start: Stat; readonly end: Stat };
  readonly complementarity: { readonly start: Stat; readonly end: Stat };
}

function lastEval(run: RunSummary): number {
  return Math.max(0, ...run.records.filter((r) => r.phase === 'eval').map((r) => r.step));
}

/** Correctness flags of one step's eval rows: agent → problem id → flags of its samples. */
function correctnessByAgent(file: string): Map<number, Map<string, boolean[]>> {
  const out = new Map<number, Map<string, boolean[]>>();
  for (const r of readEvalRows(file)) {
    if (r.id === undefined) continue;
    const m = out.get(r.agent) ?? new Map<string, boolean[]>();
    out.set(r.agent, m);
    m.set(r.id, [...r.correct]);
  }
  return out;
}

/** κ and c of two agents pooled over every aligned sample pair (sample k of A with sample k of B) of the problems both answered. */
export function pooledAgreement(
  a: ReadonlyMap<string, readonly boolean[]>,
  b: ReadonlyMap<string, readonly boolean[]>,
): { kappa: number; complementarity: number } {
  const ca: boolean[] = [];
  const cb: boolean[] = [];
  for (const [id, xs] of a) {
    const ys = b.get(id);
    if (!ys) continue;
    for (let k = 0; k < Math.min(xs.length, ys.length); k++) {
      ca.push(xs[k]!);
      cb.push(ys[k]!);
    }
  }
  const r = agreement(ca, cb);
  return { kappa: r.kappa, complementarity: r.complementarity };
}

/**
 * Pooled κ and complementarity of each agent pair at step 0 and at the last evaluation, computed
 * from the eval rows themselves (only correctness enters κ and c), so runs written by any corl
 * version give the same statistic.
 */
export function pairLines(groups: readonly ReportGroup[]): PairLine[] {
  const lines: PairLine[] = [];
  for (const g of groups) {
    const agents = g.runs[0]?.agents ?? [];
    if (agents.length < 2) continue;
    const perRun = g.runs.map((run) => {
      const files = evalStepFiles(run.dir);
      const steps = [...files.keys()].sort((x, y) => x - y);
      if (steps.length === 0 || steps[0] !== 0) return undefined;
      return {
        start: correctnessByAgent(files.get(0)!),
        end: correctnessByAgent(files.get(steps[steps.length - 1]!)!),
      };
    });
    for (let a = 0; a < agents.length; a++) {
      for (let b = a + 1; b < agents.length; b++) {
        const stat = (which: 'start' | 'end', key: 'kappa' | 'complementarity'): Stat =>
          meanSd(
            perRun.map((r) => {
              const x = r?.[which].get(a);
              const y = r?.[which].get(b);
              return x && y ? pooledAgreement(x, y)[key] : NaN;
            }),
          );
        lines.push({
          config: g.name,
          pair: `${agents[a]!.name} × ${agents[b]!.name}`,
          kappa: { start: stat('start', 'kappa'), end: stat('end', 'kappa') },
          complementarity: { start: stat('start', 'complementarity'), end: stat('end', 'complementarity') },
        });
      }
    }
  }
  return lines;
}

/** "Validation" when the runs evaluated on the task's validation split (`eval.split`), else "Held-out". */
function evalSplit(groups: readonly ReportGroup[]): string {
  const dir = groups[0]?.runs[0]?.dir;
  if (!dir) return 'Held-out';
  try {
    const c = JSON.parse(readUserText(path.join(dir, 'config.json'))) as { eval?: { split?: unknown } };
    return c.eval?.split === 'validation' ? 'Validation' : 'Held-out';
  } catch {
    return 'Held-out';
  }
}

/** Change of pass@1 from step 0 to the last evaluation, averaged over agents, then mean ± sd over seeds. */
export function averageChange(g: ReportGroup): Stat {
  return meanSd(
    g.runs.map((run) => {
      const n = run.agents.length;
      const last = lastEval(run);
      let s = 0;
      for (let i = 0; i < n; i++)
        s +=
          (valueAt(run.records, 'eval/accuracy', i, last) ?? NaN) -
          (valueAt(run.records, 'eval/accuracy', i, 0) ?? NaN);
      return s / n;
    }),
  );
}

/** A share as percent with one decimal, `± sd` when asked and over more than one value; `–` when not finite. */
export const pts = (s: Stat, sd: boolean): string =>
  Number.isFinite(s.mean) ? `${(100 * s.mean).toFixed(1)}${sd && s.n > 1 ? ` ± ${(100 * s.sd).toFixed(1)}` : ''}` : '–';
/** Like `pts`, signed (`+` or `−`): a change in points. */
export const signed = (s: Stat, sd: boolean): string =>
  Number.isFinite(s.mean)
    ? `${s.mean >= 0 ? '+' : '−'}${Math.abs(100 * s.mean).toFixed(1)}${sd && s.n > 1 ? ` ± ${(100 * s.sd).toFixed(1)}` : ''}`
    : '–';
const fixed3 = (s: Stat): string =>
  Number.isFinite(s.mean) ? `${s.mean.toFixed(3)}${s.n > 1 ? ` ± ${s.sd.toFixed(3)}` : ''}` : '–';
const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;

const gapText = (g: SeedGap): string => `${signedPoints(g.mean)}${g.interval ? ` ${intervalText(g.interval)}` : ''}`;

/** Each trained row beside its base models' own maj@K and ensemble (none when no row trained). */
function baseVoteTable(groups: readonly ReportGroup[]): string[] {
  const lines = baseVoteLines(groups);
  if (!lines.length) return [];
  const out = [
    '',
    "Each trained row against its base models' own vote (the step-0 rows of the same runs): the base's maj@K and budget-fair ensemble, and how far training went past each, in points, mean and 95% t interval over seeds; it beats the base's vote when the interval of avg pass@1 − base maj lies above 0.",
    '',
    row([
      'config',
      'GT used',
      'seeds',
      'base maj',
      'avg pass@1 − base maj',
      'base ensemble',
      'ensemble − base ensemble',
      "beats the base's vote",
    ]),
    row(Array(8).fill('---')),
  ];
  for (const l of lines)
    out.push(
      row([
        l.config,
        l.supervised ? '**yes**' : 'no',
        String(l.seeds),
        `${l.metric} ${pts({ ...l.baseMaj, mean: l.baseMaj.mean / 100, sd: l.baseMaj.sd / 100 }, true)}`,
        gapText(l.overMaj),
        l.baseEnsemble
          ? pts({ ...l.baseEnsemble, mean: l.baseEnsemble.mean / 100, sd: l.baseEnsemble.sd / 100 }, true)
          : '–',
        l.overEnsemble ? gapText(l.overEnsemble) : '–',
        beatsText(l.overMaj),
      ]),
    );
  return out;
}

/**
 * The comparison's tables as Markdown, exactly as docs/results.md quotes them: the plan and the
 * held-out reads behind them, the results table (pass@1 per agent and its change from step 0), the
 * verdicts of the paired differences, the split of each agent's change by problem
 * category, pseudo-label accuracy by category early and late in training, and error overlap.
 */
export function markdownTables(
  groups: readonly ReportGroup[],
  rows: readonly ResultRow[],
  context?: TablesContext,
): string {
  const out: string[] = [];
  if (context) out.push(provenanceLine(context.provenance), '');
  const split = evalSplit(groups);
  out.push(
    `${split} pass@1 (%) after training, mean ± sd over seeds; change = final − step-0 average over agents.`,
    '',
  );
  out.push(
    row([
      'config',
      'GT used',
      'seeds',
      'steps',
      'pass@1 per agent',
      'avg',
      'base avg',
      'change',
      'maj',
      'ensemble maj',
    ]),
  );
  out.push(row(Array(10).fill('---')));
  for (const [k, r] of rows.entries()) {
    const g = groups[k]!;
    const change = averageChange(g);
    out.push(
      row([
        r.name,
        r.supervised ? '**yes**' : 'no',
        String(r.seeds),
        String(r.steps),
        r.perAgent.map((a) => `${a.name} ${pts({ ...a, n: r.seeds }, false)}`).join(' / '),
        pts({ ...r.average, n: r.seeds }, true),
        pts({ ...r.base, n: r.seeds }, false),
        signed(change, true),
        r.maj ? pts({ ...r.maj, n: r.seeds }, false) : '–',
        r.ensemble ? pts({ ...r.ensemble, n: r.seeds }, true) : '–',
      ]),
    );
  }
  out.push(...baseVoteTable(groups));
  if (context) out.push('', verdictsMarkdown(context.verdicts, context.metricText));
  const cats = categoryTable(groups);
  if (cats) {
    out.push('', `${split} pass@1 (%) by problem category: step 0 → last evaluation (change), mean over seeds.`, '');
    out.push(row(['config', 'agent', ...cats.categories.map((c) => `${c} (${cats.problems[c]})`)]));
    out.push(row(Array(2 + cats.categories.length).fill('---')));
    for (const l of cats.lines) {
      out.push(
        row([
          l.config,
          l.agent,
          ...cats.categories.map((c) => {
            const cell = l.cells[c];
            return cell ? `${pts(cell.start, false)} → ${pts(cell.end, false)} (${signed(cell.change, false)})` : '–';
          }),
        ]),
      );
    }
  }
  const labels = labelCategoryLines(groups);
  if (labels.length) {
    const lc = [...new Set(labels.flatMap((l) => Object.keys(l.cells)))].sort(categoryOrder);
    out.push(
      '',
      'Pseudo-label accuracy (%) on training prompts by category: first 10 → last 10 steps, mean over seeds.',
      '',
    );
    out.push(row(['config', 'agent', ...lc]));
    out.push(row(Array(2 + lc.length).fill('---')));
    for (const l of labels)
      out.push(
        row([
          l.config,
          l.agent,
          ...lc.map((c) => (l.cells[c] ? `${pts(l.cells[c]!.first, false)} → ${pts(l.cells[c]!.last, false)}` : '–')),
        ]),
      );
  }
  const pairs = pairLines(groups);
  if (pairs.length) {
    out.push(
      '',
      `Error overlap of each agent pair on the ${split.toLowerCase()} problems (pooled over all aligned sample pairs): step 0 → last evaluation, mean ± sd over seeds.`,
      '',
    );
    out.push(row(['config', 'pair', "Cohen's κ, start", 'κ, end', 'complementarity c, start', 'c, end']));
    out.push(row(Array(6).fill('---')));
    for (const p of pairs)
      out.push(
        row([
          p.config,
          p.pair,
          fixed3(p.kappa.start),
          fixed3(p.kappa.end),
          pts(p.complementarity.start, false),
          pts(p.complementarity.end, false),
        ]),
      );
  }
  return out.join('\n') + '\n';
}
