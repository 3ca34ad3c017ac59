import { escapeXml, lineChart, seriesStyle, type ReferenceLine, type Series, type SeriesStyle } from './svg';
import { lastValue, meanSd, metricSeries, movingAverage, valueAt, type RunSummary } from './runs';
import { finiteMean, mean } from '../util/mean';

/** Runs of one config (one per seed). */
export interface ReportGroup {
  readonly name: string;
  readonly runs: readonly RunSummary[];
}

/** One row of the results table, in the paper's shape. */
export interface ResultRow {
  readonly name: string;
  readonly supervised: boolean;
  readonly seeds: number;
  readonly steps: number;
  /** Final held-out pass@1 per agent, mean and sd over seeds. */
  readonly perAgent: readonly { readonly name: string; readonly mean: number; readonly sd: number }[];
  /** Average over agents, then mean and sd over seeds. */
  readonly average: { readonly mean: number; readonly sd: number };
  /** Base (step 0) average pass@1. */
  readonly base: { readonly mean: number; readonly sd: number };
  /** maj@k metric name and value (average over agents), when evaluated with several samples. */
  readonly maj?: { readonly metric: string; readonly mean: number; readonly sd: number };
  /** Budget-fair ensemble (pooled samples of all agents), when evaluated. */
  readonly ensemble?: { readonly metric: string; readonly mean: number; readonly sd: number };
  /** Final pseudo-label accuracy (average over agents of the last train step). */
  readonly labelAccuracy: { readonly mean: number; readonly sd: number };
  /** Whether the reward never used that label (a Python reward that ignores its supervisors: `python/label_unused`). */
  readonly labelUnused?: boolean;
}

const avg = (xs: readonly (number | undefined)[]): number =>
  finiteMean(
    xs.filter((x): x is number => x !== undefined),
    NaN,
  );

function lastEvalStep(run: RunSummary): number | undefined {
  const steps = run.records
    .filter((r) => r.phase === 'eval' && r.metrics['eval/accuracy'] !== undefined)
    .map((r) => r.step);
  return steps.length ? Math.max(...steps) : undefined;
}

/** Summarize a group of seeds into a table row. */
export function resultRow(g: ReportGroup): ResultRow {
  const agents = g.runs[0]?.agents ?? [];
  const finalOf = (run: RunSummary, i: number): number | undefined => {
    const step = lastEvalStep(run);
    return step === undefined ? undefined : valueAt(run.records, 'eval/accuracy', i, step);
  };
  const perAgent = agents.map((a, i) => ({ name: a.name, ...meanSd(g.runs.map((r) => finalOf(r, i) ?? NaN)) }));
  const average = meanSd(g.runs.map((r) => avg(agents.map((_, i) => finalOf(r, i)))));
  const base = meanSd(g.runs.map((r) => avg(agents.map((_, i) => valueAt(r.records, 'eval/accuracy', i, 0)))));
  const majMetric = Object.keys(
    g.runs[0]?.records.find((r) => r.phase === 'eval' && r.agent !== null)?.metrics ?? {},
  ).find((k) => k.startsWith('eval/maj@'));
  const maj = majMetric
    ? {
        metric: majMetric.slice(5),
        ...meanSd(g.runs.map((r) => avg(agents.map((_, i) => lastValue(r.records, majMetric, i, 'eval'))))),
      }
    : undefined;
  const ensMetric = Object.keys(
    g.runs[0]?.records.find((r) => r.agent === null && Object.keys(r.metrics).some((k) => k.startsWith('ensemble/')))
      ?.metrics ?? {},
  ).find((k) => k.startsWith('ensemble/'));
  const ensemble = ensMetric
    ? { metric: ensMetric, ...meanSd(g.runs.map((r) => lastValue(r.records, ensMetric, null, 'eval') ?? NaN)) }
    : undefined;
  const labelAccuracy = meanSd(
    g.runs.map((r) => avg(agents.map((_, i) => lastValue(r.records, 'label/accuracy', i, 'train')))),
  );
  const labelUnused = g.runs.some((r) =>
    r.records.some((x) => x.phase === 'train' && x.metrics['python/label_unused'] === 1),
  );
  return {
    name: g.name,
    supervised: g.runs.some((r) => r.supervised),
    seeds: g.runs.length,
    steps: Math.max(0, ...g.runs.map((r) => r.steps)),
    perAgent,
    average,
    base,
    maj,
    ensemble,
    labelAccuracy,
    ...(labelUnused ? { labelUnused } : {}),
  };
}

const pct = (m: { mean: number; sd: number }, withSd: boolean): string =>
  Number.isFinite(m.mean) ? `${(m.mean * 100).toFixed(1)}${withSd ? ` ± ${(m.sd * 100).toFixed(1)}` : ''}` : '-';

/** The results table as plain text (for the terminal) — rows marked (GT) used ground truth. */
export function resultTable(rows: readonly ResultRow[]): string {
  const maxAgents = Math.max(0, ...rows.map((r) => r.perAgent.length));
  const header = [
    'config',
    'GT',
    'seeds',
    'steps',
    ...Array.from({ length: maxAgents }, (_, i) => `agent ${i} pass@1`),
    'avg pass@1',
    'base avg',
    'maj',
    'ensemble',
    'label acc',
  ];
  const body = rows.map((r) => {
    const sd = r.seeds > 1;
    return [
      r.name,
      r.supervised ? 'yes' : 'no',
      String(r.seeds),
      String(r.steps),
      ...Array.from({ length: maxAgents }, (_, i) => (r.perAgent[i] ? pct(r.perAgent[i]!, sd) : '')),
      pct(r.average, sd),
      pct(r.base, sd),
      r.maj ? `${r.maj.metric} ${pct(r.maj, sd)}` : '-',
      r.ensemble ? `${r.ensemble.metric.replace('ensemble/', '')} ${pct(r.ensemble, sd)}` : '-',
      `${pct(r.labelAccuracy, sd)}${r.labelUnused ? ' (unused)' : ''}`,
    ];
  });
  const all = [header, ...body];
  const widths = header.map((_, c) => Math.max(...all.map((row) => (row[c] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, c) => (cell ?? '').padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * Mean over seeds (and over agents when `agent` is 'mean') of a metric by step, with a ± sd band.
 * `smooth` > 1 replaces each seed's curve by its trailing moving average over that many logged steps.
 */
function seriesOf(
  g: ReportGroup,
  metric: string,
  phase: 'train' | 'eval',
  agent: number | 'mean' | null,
  style: SeriesStyle,
  smooth = 1,
): Series {
  const bySeed = g.runs.map((run) => {
    const agents = agent === 'mean' ? run.agents.map((_, i) => i) : [agent];
    const steps = new Map<number, number[]>();
    for (const a of agents)
      for (const [s, v] of metricSeries(run.records, metric, a, phase))
        (steps.get(s) ?? steps.set(s, []).get(s)!).push(v);
    const curve: [number, number][] = [...steps].sort((x, y) => x[0] - y[0]).map(([s, vs]) => [s, avg(vs)]);
    return new Map(smooth > 1 ? movingAverage(curve, smooth) : curve);
  });
  const steps = [...new Set(bySeed.flatMap((m) => [...m.keys()]))].sort((a, b) => a - b);
  const points: [number, number][] = [];
  const band: [number, number, number][] = [];
  for (const s of steps) {
    const ms = meanSd(bySeed.map((m) => m.get(s) ?? NaN));
    points.push([s, ms.mean]);
    band.push([s, ms.mean - ms.sd, ms.mean + ms.sd]);
  }
  const label = agent === 'mean' || agent === null ? g.name : `${g.name} ${g.runs[0]!.agents[agent]!.name}`;
  return {
    name: label,
    points,
    band: g.runs.length > 1 ? band : undefined,
    dashed: g.runs.some((r) => r.supervised),
    style,
  };
}

/** Smoothing window for per-step training curves: 10 logged steps, fewer for short runs (1 = none). */
export function smoothingWindow(groups: readonly ReportGroup[]): number {
  const steps = Math.max(0, ...groups.flatMap((g) => g.runs.map((r) => r.steps)));
  return Math.max(1, Math.min(10, Math.floor(steps / 10)));
}

/** Pairwise κ/c/w/u at the first and last evaluation, mean over seeds. */
function agreementTable(groups: readonly ReportGroup[]): string {
  const rows: string[] = [];
  for (const g of groups) {
    const pairs = new Set<string>();
    for (const r of g.runs)
      for (const rec of r.records)
        for (const k of Object.keys(rec.metrics)) {
          const m = /^pair\/(\d+-\d+)\/kappa$/.exec(k);
          if (m) pairs.add(m[1]!);
        }
    for (const pair of [...pairs].sort()) {
      const at = (which: 'first' | 'last', stat: string): string => {
        const vals = g.runs.map((r) => {
          const s = metricSeries(r.records, `pair/${pair}/${stat}`, null, 'eval');
          return (which === 'first' ? s[0] : s[s.length - 1])?.[1] ?? NaN;
        });
        const ms = meanSd(vals);
        return Number.isFinite(ms.mean) ? (Math.abs(ms.mean) < 5e-4 ? 0 : ms.mean).toFixed(3) : '-';
      };
      const [a, b] = pair.split('-').map(Number);
      const names = `${g.runs[0]!.agents[a!]?.name ?? a} × ${g.runs[0]!.agents[b!]?.name ?? b}`;
      rows.push(
        `<tr><td>${escapeXml(g.name)}</td><td>${escapeXml(names)}</td>${['kappa', 'complementarity', 'same_wrong', 'coverage'].map((s) => `<td>${at('first', s)}</td><td>${at('last', s)}</td>`).join('')}</tr>`,
      );
    }
  }
  if (!rows.length) return '<p>Only one agent per run: no pairwise agreement to show.</p>';
  return `<table><thead><tr><th rowspan="2">config</th><th rowspan="2">pair</th><th colspan="2">Cohen's κ</th><th colspan="2">complementarity c</th><th colspan="2">same wrong w</th><th colspan="2">coverage u</th></tr><tr>${'<th>start</th><th>end</th>'.repeat(4)}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** What the top of the report says about runs that did not finish or were left out. */
export interface ReportStatus {
  /** 'partial': unfinished runs or missing seeds; 'failed': nothing usable beyond what is shown. */
  readonly level: 'partial' | 'failed';
  readonly message: string;
}

/** Options of {@link renderReport}. */
export interface ReportOptions {
  /** Shown as a banner above everything else. */
  readonly status?: ReportStatus;
  /** The verdict block (HTML, see verdictHtml in ./verdict.ts), shown right under the title. */
  readonly verdict?: string;
  /** The paired differences (HTML), shown after the results table. */
  readonly paired?: string;
}

/**
 * The base reference line of the held-out chart: the step-0 average pass@1 (the table's "base avg"),
 * one line for all configs (their mean, when configs with different agents start apart).
 */
export function baseReference(rows: readonly ResultRow[]): ReferenceLine | undefined {
  const bases = rows.map((r) => r.base.mean).filter(Number.isFinite);
  if (!bases.length) return undefined;
  const y = mean(bases, NaN);
  const apart = Math.max(...bases) - Math.min(...bases) >= 0.0005;
  return { y, label: `base (step 0${apart ? ', mean of configs' : ''}): ${(y * 100).toFixed(1)}%` };
}

/** What one chart of the report shows besides its metric. */
interface PlotSpec {
  readonly title: string;
  readonly yLabel: string;
  /** A share (0 … 1) drawn in percent, as the results table gives it. */
  readonly percent?: boolean;
  /** Reference lines, in the metric's own unit (a share). */
  readonly references?: readonly ReferenceLine[];
}

/** A series with every value (points and band) multiplied by `k`. */
function scaleSeries(s: Series, k: number): Series {
  if (k === 1) return s;
  return {
    ...s,
    points: s.points.map(([x, y]) => [x, y * k] as [number, number]),
    band: s.band?.map(([x, lo, hi]) => [x, lo * k, hi * k] as [number, number, number]),
  };
}

/** Whether a series has at least two finite values and all of them are the same. */
export function constantSeries(s: Pick<Series, 'points'>): boolean {
  const ys = s.points.map((p) => p[1]).filter(Number.isFinite);
  return ys.length >= 2 && ys.every((y) => Math.abs(y - ys[0]!) <= 1e-12 * Math.max(1, Math.abs(ys[0]!)));
}

function formatValue(v: number, percent?: boolean): string {
  return percent ? `${Number(v.toFixed(1))}%` : String(Number(v.toPrecision(4)));
}

/**
 * The reward sources of the groups that trained, each with the indexes of its groups, in order: one
 * per reward selection (plugin and options: corl:intrinsic's RENT and Intuitor rewards are on
 * different scales). Named by the plugin, with its options where the plugin appears with several.
 */
export function rewardSources(groups: readonly ReportGroup[]): { reward: string; groups: number[] }[] {
  const out: { key: string; use: string; options: string; groups: number[] }[] = [];
  groups.forEach((g, i) => {
    // an evaluation-only config (no training step) has no reward to draw
    if (!g.runs.some((r) => r.records.some((rec) => rec.phase === 'train'))) return;
    const use = g.runs[0]?.reward?.use ?? 'unknown reward';
    const options = JSON.stringify(g.runs[0]?.reward?.options ?? {});
    const key = `${use} ${options}`;
    const at = out.find((o) => o.key === key);
    if (at) at.groups.push(i);
    else out.push({ key, use, options, groups: [i] });
  });
  // options that tell apart sources of the same plugin: "corl:intrinsic (method rent)"
  const differing = (o: (typeof out)[number]): string => {
    const same = out.filter((x) => x.use === o.use).map((x) => JSON.parse(x.options) as Record<string, unknown>);
    const mine = JSON.parse(o.options) as Record<string, unknown>;
    const keys = Object.keys(mine).filter((k) => same.some((x) => JSON.stringify(x[k]) !== JSON.stringify(mine[k])));
    const text = keys.map((k) => `${k} ${typeof mine[k] === 'string' ? mine[k] : JSON.stringify(mine[k])}`).join(', ');
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  };
  return out.map((o) => ({
    reward: out.filter((x) => x.use === o.use).length > 1 ? `${o.use} (${differing(o)})` : o.use,
    groups: o.groups,
  }));
}

/** The report: results table, plots and agreement table, as one self-contained HTML page. */
export function renderReport(
  title: string,
  groups: readonly ReportGroup[],
  notes: readonly string[] = [],
  options: ReportOptions = {},
): string {
  const rows = groups.map(resultRow);
  const single = groups.length === 1;
  const window = smoothingWindow(groups);
  const base = baseReference(rows);
  // Styles follow the config (or, for one config, the agent), so a line keeps its colour and marker in every chart.
  const plot = (
    metric: string,
    phase: 'train' | 'eval',
    chart: PlotSpec,
    among: readonly number[] = groups.map((_, i) => i),
  ): string => {
    const smooth = phase === 'train' ? window : 1;
    const raw = single
      ? groups[0]!.runs[0]!.agents.map((_, i) => seriesOf(groups[0]!, metric, phase, i, seriesStyle(i), smooth))
      : among.map((i) => ({ ...seriesOf(groups[i]!, metric, phase, 'mean', seriesStyle(i), smooth), index: i }));
    // shares are drawn in percent, the unit of the table beside them
    const k = chart.percent ? 100 : 1;
    const scaled = raw.map((s) => scaleSeries(s, k));
    // a training curve that never moves (TTRL's agreement with its own label: 1 at every step) is named, not drawn
    const still = phase === 'train' ? scaled.filter(constantSeries) : [];
    const series = scaled.filter((s) => !still.includes(s));
    const notes = [
      smooth > 1 ? `each point the mean of the last ${smooth} steps` : '',
      still.length
        ? `not drawn, the same at every step: ${still.map((s) => `${s.name} ${formatValue(s.points.find((p) => Number.isFinite(p[1]))![1], chart.percent)}`).join(', ')}`
        : '',
    ].filter(Boolean);
    // a training curve on another scale (intuitor's self-certainty reward) is named, not drawn, where it would flatten the rest
    return lineChart(series, {
      title: chart.title,
      subtitle: notes.length ? notes.join('; ') : undefined,
      xLabel: 'training step',
      yLabel: chart.percent ? `${chart.yLabel} (%)` : chart.yLabel,
      yBounds: chart.percent ? [0, 100] : undefined,
      // a share is drawn over at least 5 points, so that a tenth of a point does not fill the plot
      minSpan: chart.percent ? 5 : undefined,
      references: (chart.references ?? []).map((r) => ({ ...r, y: r.y * k })),
      offScale: phase === 'train',
    });
  };
  const maxAgents = Math.max(0, ...rows.map((r) => r.perAgent.length));
  // a value and its sd never break across lines: "47.9 ± 0.7", "maj@8 62.5 ± 2.5" stay whole; a
  // row of one seed has no sd, so it shows none (never "± 0.0"), whatever the other rows have
  const whole = (s: string): string => s.replace(/ /g, '&nbsp;');
  const cell = (r: ResultRow, m: { mean: number; sd: number } | undefined): string =>
    m ? whole(pct(m, r.seeds > 1)) : '-';
  // maj@k and the ensemble's k, in the header when every row has the same, else in each cell
  const shared = (names: readonly (string | undefined)[]): string | undefined => {
    const set = new Set(names.filter((n) => n !== undefined));
    return set.size === 1 ? [...set][0] : undefined;
  };
  const majName = shared(rows.map((r) => r.maj?.metric));
  const ensName = shared(rows.map((r) => r.ensemble?.metric.replace('ensemble/', '')));
  const named = (name: string, common: string | undefined): string =>
    common === undefined ? `${escapeXml(name)}&nbsp;` : '';
  const table = `<table><thead><tr><th>config</th><th>ground truth</th><th>seeds</th><th>steps</th>${Array.from({ length: maxAgents }, (_, i) => `<th>agent ${i} pass@1</th>`).join('')}<th>avg pass@1</th><th>base avg</th><th>${majName ? escapeXml(majName) : 'maj'}</th><th>${ensName ? `ensemble (${escapeXml(ensName)})` : 'ensemble'}</th><th>label acc</th></tr></thead><tbody>${rows.map((r) => `<tr${r.supervised ? ' class="gt"' : ''}><td>${escapeXml(r.name)}</td><td>${r.supervised ? 'yes (supervised)' : 'no'}</td><td>${r.seeds}</td><td>${r.steps}</td>${Array.from({ length: maxAgents }, (_, i) => `<td>${r.perAgent[i] ? `${escapeXml(r.perAgent[i]!.name)}: ${cell(r, r.perAgent[i])}` : ''}</td>`).join('')}<td><b>${cell(r, r.average)}</b></td><td>${cell(r, r.base)}</td><td>${r.maj ? `${named(r.maj.metric, majName)}${cell(r, r.maj)}` : '-'}</td><td>${r.ensemble ? `${named(r.ensemble.metric.replace('ensemble/', ''), ensName)}${cell(r, r.ensemble)}` : '-'}</td><td>${cell(r, r.labelAccuracy)}${r.labelUnused ? ' <span title="the reward never read this label: its Python function ignores its supervisors">(not used by the reward)</span>' : ''}</td></tr>`).join('')}</tbody></table>`;
  // rewards of different sources are on different scales: one chart of each (mean and std) per source
  const sources = rewardSources(groups);
  const rewardCharts = (metric: string, title: string, yLabel: string): string[] =>
    sources.length <= 1
      ? [plot(metric, 'train', { title, yLabel })]
      : sources.map((s) => plot(metric, 'train', { title: `${title}: ${s.reward}`, yLabel }, s.groups));
  const charts = [
    plot('eval/accuracy', 'eval', {
      title: 'Held-out accuracy (pass@1)',
      yLabel: 'accuracy',
      percent: true,
      references: base ? [base] : [],
    }),
    plot('label/accuracy', 'train', { title: 'Pseudo-label accuracy', yLabel: 'accuracy', percent: true }),
    ...rewardCharts('reward/std', 'Reward std', 'std'),
    plot('label/peer_agreement', 'train', {
      title: "Agreement with the supervisor's label",
      yLabel: 'agreement',
      percent: true,
    }),
    plot('completion/mean_length', 'train', { title: 'Completion length', yLabel: 'tokens' }),
    ...rewardCharts('reward/mean', 'Mean reward', 'reward'),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}td:first-child{white-space:nowrap}
th{background:#f3f3f3}tr.gt td{background:#fff6e5}
.charts{display:flex;flex-wrap:wrap;gap:16px}
.note{color:#555;font-size:13px}
.scroll{overflow-x:auto;max-width:100%}
.banner{border:2px solid #b00020;background:#fdecee;color:#5c000d;padding:8px 12px;margin:0 0 12px;font-size:14px}
.banner.partial{border-color:#a15c00;background:#fff4e0;color:#4a2a00}
.verdict{border:1px solid #99a;background:#f5f6fb;padding:4px 12px;margin:0 0 12px;font-size:14px}.verdict ul{margin:4px 0}
.verdict .committed{background:#fff;border-left:3px solid #446;padding:4px 8px}
</style></head><body>
${options.status ? `<div class="banner ${options.status.level}" role="alert"><b>${options.status.level === 'failed' ? 'Failed run' : 'Partial results'}:</b> ${escapeXml(options.status.message)}</div>\n` : ''}<h1>${escapeXml(title)}</h1>
${options.verdict ? `${options.verdict}\n` : ''}${notes.map((n) => `<p class="note">${escapeXml(n)}</p>`).join('\n')}
<p class="note">Held-out accuracy is measured against ground truth for monitoring only. Rows marked "yes" used ground truth in their reward (supervised); dashed lines in the plots are those rows. Values are mean ± sd over seeds where there are several; in the plots the sd is a tinted band with dotted edges. Each line has its own marker as well as its colour; the dotted grey line in the held-out chart is the base model (step 0).</p>
<h2>Results</h2>
<div class="scroll">${table}</div>
${options.paired ? `<h2>Paired differences</h2>\n${options.paired}\n` : ''}<h2>Training curves</h2>
<div class="charts">${charts.join('\n')}</div>
<h2>Error decoupling between agents (held-out, first sample of each)</h2>
<div class="scroll">${agreementTable(groups)}</div>
</body></html>
`;
}
