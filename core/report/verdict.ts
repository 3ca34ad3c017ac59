// How a verdict reads, wherever corl prints one (the terminal, the report page, results.md,
// scripts/claims): the difference in points, its interval, and one of four outcomes; never a bare
// point estimate. The numbers come from ./paired.ts.
import type { ResultRow } from './html';
import { PRIMARY_TEXT, type PairResult } from './paired';
import type { Interval } from '../stats/paired';
import type { Design, Verdicts } from './design';
import type { FollowResult } from './follow';

/** A number of points, signed; one that rounds to 0.0 is "±0.0", never "−0.0". */
export function signedPoints(x: number, digits = 1): string {
  if (!Number.isFinite(x)) return '–';
  const text = Math.abs(x).toFixed(digits);
  return `${Number(text) === 0 ? '±' : x > 0 ? '+' : '−'}${text}`;
}

/** "[−3.0, +0.6]" (points). */
export function intervalText(i: Interval, digits = 1): string {
  return `[${signedPoints(i.lo, digits)}, ${signedPoints(i.hi, digits)}]`;
}

/** The coverage of an interval at error rate alpha: "95%", "96.9%". */
export function levelText(alpha: number): string {
  const pct = 100 * (1 - alpha);
  const one = pct.toFixed(1);
  return `${one.endsWith('.0') ? one.slice(0, -2) : one}%`;
}

/**
 * Why an interval has the level it has, when that is not the default two-sided 95% of a fixed
 * design: a look of a group-sequential design spends part of the error rate, so its interval is
 * wider ("96.9%" at the first of three Lan–DeMets Pocock looks at 5% overall); an alpha a plan or
 * the flags chose. Empty for 95% of a fixed design.
 */
export function levelReason(
  alpha: number,
  design?: Pick<Design, 'alpha' | 'sequential'>,
  look?: { readonly look: number },
): string {
  const seq = design?.sequential;
  if (seq && look && alpha !== design.alpha)
    return `the nominal level at look ${look.look} of ${seq.looks.length} of a ${seq.boundary} group-sequential design, which keeps the overall two-sided error at ${levelText(1 - design.alpha)}`;
  if (Math.abs(alpha - 0.05) < 1e-12) return '';
  return `two-sided error ${alpha}, as the design sets it`;
}

/** The outcome in words: "ahead", "behind", "equivalent within ±2.0", "inconclusive". */
export function outcomeText(r: PairResult): string {
  return r.outcome === 'equivalent' ? `equivalent within ±${r.margin!.toFixed(1)}` : r.outcome;
}

/**
 * One pair in one sentence: "co-rl-diff − ttrl: +0.5 points, 95% CI [−7.6, +8.6] over 3 seeds
 * (bootstrap [−2.9, +3.2]): inconclusive". With one seed it says it cannot decide. `reason` says
 * why the level is not 95% ({@link levelReason}).
 */
export function pairSentence(r: PairResult, reason = ''): string {
  const head = `${r.a} − ${r.b}: ${signedPoints(r.mean)} points`;
  if (r.n < 2 || !r.t)
    return `${head} on ${r.n} seed${r.n === 1 ? '' : 's'}: cannot decide (an interval needs at least 2 seeds)`;
  const boot = r.bootstrap ? ` (bootstrap ${intervalText(r.bootstrap)})` : '';
  const level = `${levelText(r.alpha)} CI ${intervalText(r.t)}${reason ? ` (${reason})` : ''}`;
  return `${head}, ${level} over ${r.n} seeds${boot}: ${outcomeText(r)}`;
}

/** Why the intervals of a comparison's verdicts have their level (its last look's, under a sequential design). */
export function verdictsReason(v: Verdicts, alpha: number): string {
  return levelReason(alpha, v.design, v.looks?.[v.looks.length - 1]);
}

const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;

/**
 * The pairs as a Markdown table: per pair its seeds, mean difference, t interval, bootstrap interval,
 * outcome, the sd of the per-seed difference and the share of its variance that evaluation sampling
 * explains, and the seeds needed at 80% power.
 */
export function pairsMarkdown(results: readonly PairResult[], metricText: string): string {
  if (!results.length) return '';
  const margin = results.find((r) => r.margin !== undefined)?.margin;
  const effect = results.find((r) => r.seedsNeeded)?.seedsNeeded?.effect;
  const levels = [...new Set(results.map((r) => levelText(r.alpha)))];
  const out = [
    `Paired differences a − b of the ${metricText}, in points, seed by seed: mean, ${levels.join(' / ')} t interval over seeds and seed × problem bootstrap interval; outcome ahead / behind (interval above / below 0)${margin !== undefined ? `, equivalent (TOST within ±${margin.toFixed(1)})` : ''} or inconclusive. sd: of the per-seed difference; eval share: the part of its variance that evaluation sampling explains; seeds needed: per config, at 80% power, for a ${effect !== undefined ? `${effect.toFixed(1)}-point` : ''} difference${margin !== undefined ? ' / for equivalence when the true difference is 0' : ''}.`,
    '',
    row(['pair (a − b)', 'seeds', 'mean', 't interval', 'bootstrap', 'outcome', 'sd', 'eval share', 'seeds needed']),
    row(Array(9).fill('---')),
  ];
  for (const r of results) {
    const needed = r.seedsNeeded
      ? `${count(r.seedsNeeded.difference)}${r.seedsNeeded.equivalence !== undefined ? ` / ${count(r.seedsNeeded.equivalence)}` : ''}`
      : '–';
    out.push(
      row([
        `${r.a} − ${r.b}${r.role === 'primary' ? ' (primary)' : ''}`,
        String(r.n),
        signedPoints(r.mean),
        r.t ? intervalText(r.t) : '–',
        r.bootstrap ? intervalText(r.bootstrap) : '–',
        r.n >= 2 ? `**${outcomeText(r)}**` : 'cannot decide (1 seed)',
        Number.isFinite(r.sd) ? r.sd.toFixed(2) : '–',
        r.variance
          ? `${Math.round((100 * Math.min(r.variance.evaluation, r.variance.total)) / r.variance.total)}%`
          : '–',
        needed,
      ]),
    );
  }
  return out.join('\n');
}

const count = (n: number): string => (Number.isFinite(n) ? String(n) : '> 100000');

/** Where the committed many-seed result of the same configs lives, and what it says. */
export interface CommittedResult {
  /** The folder, as a reader would type it (docs/results/headline-slips). */
  readonly folder: string;
  /** Whether that comparison was planned before its runs. */
  readonly planned: boolean;
  /** The pair under the committed comparison's names. */
  readonly pair: PairResult;
  /** The names of the same two configs in the comparison that quotes it (co-rl for the committed co-rl-diff). */
  readonly names?: { readonly a: string; readonly b: string };
  /** Why its interval has the level it has ({@link levelReason}); empty for 95%. */
  readonly reason?: string;
}

/**
 * The committed result in one clause: "16 seeds of the same configs committed in
 * docs/results/headline-slips (planned): co-rl − ttrl (there co-rl-diff − ttrl) +1.2 points (change
 * of …), 96.9% CI [+0.1, +2.2] (the nominal level at look 1 of 3 …), ahead".
 */
export function committedText(c: CommittedResult): string {
  const a = c.names?.a ?? c.pair.a;
  const b = c.names?.b ?? c.pair.b;
  const there = a !== c.pair.a || b !== c.pair.b ? ` (there ${c.pair.a} − ${c.pair.b})` : '';
  const interval = c.pair.t
    ? `${levelText(c.pair.alpha)} CI ${intervalText(c.pair.t)}${c.reason ? ` (${c.reason})` : ''}, `
    : '';
  return `${c.pair.n} seeds of the same configs committed in ${c.folder}${c.planned ? ' (planned)' : ''}: ${a} − ${b}${there} ${signedPoints(c.pair.mean)} points (${PRIMARY_TEXT[c.pair.metric] ?? c.pair.metric}), ${interval}${outcomeText(c.pair)}`;
}

/** What {@link verdictLine} needs. */
export interface VerdictInput {
  /** The method's row (e.g. the Co-RL config). */
  readonly method: ResultRow;
  /** The baseline rows, in the order named (e.g. base, then TTRL). */
  readonly baselines: readonly ResultRow[];
  /** The method against each baseline, in the same order. */
  readonly pairs: readonly PairResult[];
  /** Evaluation problems per agent. */
  readonly problems: number;
  /** Name of the evaluation split ("held-out" or "validation"). */
  readonly split?: string;
  /** The committed many-seed results of the same configs, for each baseline that has one. */
  readonly committed?: readonly CommittedResult[];
  /** Where the many-seed comparisons are, named when one seed cannot decide and no committed result of these configs was found. */
  readonly seeAlso?: string;
}

/**
 * Each agent's change against the same agent in `b`, "(alpha +6.3, beta +10.6)", when both rows
 * have the same agents in the same order (the first baseline is the untrained base); else "".
 */
function perAgentChange(method: ResultRow, b: ResultRow): string {
  const a = method.perAgent;
  if (a.length < 2 || a.length !== b.perAgent.length || a.some((x, i) => x.name !== b.perAgent[i]!.name)) return '';
  return ` (${a.map((x, i) => `${x.name} ${signedPoints(100 * (x.mean - b.perAgent[i]!.mean))}`).join(', ')})`;
}

/**
 * The line `corl compare --verdict` ends with (npm start's): the method against each baseline, each
 * difference with its interval and outcome; with one seed, the differences and that one seed
 * cannot decide, then the committed many-seed result of the same configs where there is one.
 * Example (1 seed): "co-rl: +6.9 points over base (alpha +5.2, beta +8.6), −3.2 over ttrl on 200
 * held-out problems; 1 seed cannot decide. Committed, 16 seeds of the same configs
 * (docs/results/headline-slips, planned): co-rl-diff − ttrl +0.4, 95% CI [−1.2, +2.0]: inconclusive".
 */
export function verdictLine(v: VerdictInput): string {
  const seeds = Math.min(v.method.seeds, ...v.baselines.map((b) => b.seeds));
  const where = `on ${v.problems} ${v.split ?? 'held-out'} problems`;
  const diffs = v.baselines.map((b, i) => {
    const p = v.pairs[i];
    const d = p ? p.mean : 100 * (v.method.average.mean - b.average.mean);
    const head = `${signedPoints(d)}${i === 0 ? ' points' : ''} over ${b.name}${i === 0 ? perAgentChange(v.method, b) : ''}`;
    return seeds >= 2 && p?.t ? `${head} ${intervalText(p.t)}, ${outcomeText(p)}` : head;
  });
  if (seeds >= 2) {
    const level = v.pairs[0] ? levelText(v.pairs[0].alpha) : '95%';
    return `${v.method.name}: ${diffs.join('; ')} ${where}; ${level} intervals over ${seeds} seeds`;
  }
  const first = `${v.method.name}: ${diffs.join(', ')} ${where}; ${seeds} seed cannot decide (an interval needs at least 2 seeds)`;
  const committed = (v.committed ?? []).map(committedText);
  if (committed.length) return `${first}. ${committed.join('; ')}`;
  return v.seeAlso ? `${first}; see ${v.seeAlso} for many-seed comparisons` : first;
}

/** What a rendering says beside the verdicts: the plan and whether it was followed, and the held-out reads. */
export interface Provenance {
  /** The plan's name, file and sha256, when the comparison has one. */
  readonly plan?: { readonly name: string; readonly file: string; readonly sha256: string };
  readonly follow?: FollowResult;
  /** The evaluation split the runs read. */
  readonly split: 'held-out' | 'validation';
  /** Held-out reads recorded in the folder's reads.jsonl, this rendering included. */
  readonly reads: number;
  /** Reads that were reconstructed by hand from the history (before corl counted reads). */
  readonly reconstructed?: number;
  /** What is wrong with the folder's reads ledger (missing, truncated, edited, runs replaced), when anything is. */
  readonly ledger?: readonly string[];
}

/** One line: the plan (or none), whether the runs followed it, and the held-out reads. */
export function provenanceLine(p: Provenance): string {
  const plan = p.plan
    ? `Plan: ${p.plan.name} (${p.plan.file}, sha256 ${p.plan.sha256.slice(0, 12)}…), ${p.follow?.before.text ?? 'not shown to be written before its runs'}; followed: ${
        p.follow?.followed
          ? 'yes'
          : `no (${
              p.follow?.checks
                .filter((c) => !c.ok)
                .map((c) => c.text)
                .join('; ') ?? 'not checked'
            })`
      }.`
    : 'Plan: none (an unplanned comparison).';
  const reads =
    p.split === 'validation'
      ? 'Split: validation, so these tables read no held-out result.'
      : `Held-out reads of this folder: ${p.reads}${p.reconstructed ? ` (${p.reconstructed} reconstructed from the history)` : ''} (reads.jsonl)${p.ledger?.length ? `; the ledger is damaged, so the true count is not known: ${p.ledger.join('; ')}` : ''}.`;
  return `${plan} ${reads}`;
}

/** The verdicts of a comparison as Markdown: the look (sequential designs), then the pairs table. */
export function verdictsMarkdown(v: Verdicts, metricText: string): string {
  const decided = v.pairs.filter((p) => p.n >= 2);
  const out: string[] = [];
  const seq = v.design.sequential;
  if (seq) {
    const look = v.looks?.[v.looks.length - 1];
    out.push(
      look
        ? `Sequential design (${seq.boundary}, looks at ${seq.looks.join(', ')} seeds): ${v.stopped ? 'stopped at' : 'at'} look ${look.look} of ${seq.looks.length} (${look.seeds} seeds per config), nominal two-sided level ${(100 * look.alpha).toFixed(2)}%${v.next ? `; ${v.next}` : ''}.`
        : `Sequential design (${seq.boundary}, looks at ${seq.looks.join(', ')} seeds): no look yet${v.next ? `; ${v.next}` : ''}, so no verdict.`,
    );
    if (!look) return out.join('\n');
    out.push('');
  }
  if (!decided.length) {
    out.push('One seed per config: no paired interval (it needs at least 2 seeds), so no verdict.');
    return out.join('\n');
  }
  out.push(pairsMarkdown(v.pairs, metricText));
  return out.join('\n');
}

/** Terminal lines: each pair's sentence, the look, the plan and the reads. */
export function verdictsText(v: Verdicts, metricText: string, p: Provenance): string {
  const lines = [`verdicts (paired by seed, ${metricText}, a − b in points):`];
  if (!v.pairs.length) lines.push('  none yet');
  for (const r of v.pairs)
    lines.push(`  ${pairSentence(r, verdictsReason(v, r.alpha))}${r.role === 'primary' ? ' [primary]' : ''}`);
  const look = v.looks?.[v.looks.length - 1];
  if (v.design.sequential)
    lines.push(
      look
        ? `look ${look.look} of ${v.design.sequential.looks.length} (${look.seeds} seeds)${v.stopped ? ': stopped' : ''}${v.next ? `; ${v.next}` : ''}`
        : `no look yet${v.next ? `: ${v.next}` : ''}`,
    );
  lines.push(provenanceLine(p));
  return lines.join('\n');
}

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** What a report page says beside a comparison's own verdicts when they cannot decide (one seed). */
export interface PageVerdict {
  /** The committed many-seed results of the same configs (those the terminal's one-line verdict quotes). */
  readonly committed?: readonly CommittedResult[];
}

/**
 * The verdict block at the top of a report page: one line per pair (outcome and interval), the look,
 * the plan and the reads; with one seed, a plain statement of what one seed can and cannot say and
 * the committed many-seed result of the same configs where one matches (what the terminal says).
 */
export function verdictHtml(v: Verdicts, metricText: string, p: Provenance, page: PageVerdict = {}): string {
  const items = v.pairs.map(
    (r) =>
      `<li><b>${esc(`${r.a} − ${r.b}`)}</b>${r.role === 'primary' ? ' (primary)' : ''}: ${esc(pairSentence(r, verdictsReason(v, r.alpha)).slice(`${r.a} − ${r.b}: `.length))}</li>`,
  );
  const seq = v.design.sequential;
  const look = v.looks?.[v.looks.length - 1];
  const lookText = seq
    ? `<p class="note">${esc(look ? `Sequential design (${seq.boundary}, looks at ${seq.looks.join(', ')} seeds): ${v.stopped ? 'stopped at' : 'at'} look ${look.look} of ${seq.looks.length}, nominal level ${(100 * look.alpha).toFixed(2)}%${v.next ? `; ${v.next}` : ''}.` : `Sequential design: no look yet${v.next ? `; ${v.next}` : ''}, so no verdict.`)}</p>`
    : '';
  const checks = p.follow
    ? `<ul class="note">${p.follow.checks.map((c) => `<li>${c.ok ? '✓' : '✗'} ${esc(c.text)}</li>`).join('')}</ul>`
    : '';
  const single = v.pairs.length > 0 && v.pairs.every((r) => r.n < 2);
  const oneSeed = single
    ? `<p class="one-seed">${esc('One seed per config: each difference above is one draw of training and evaluation, not a verdict. It says which way this seed went; it cannot say whether another seed would go the same way (an interval needs at least 2 seeds).')}</p>`
    : '';
  const committed = (page.committed ?? []).length
    ? `<p class="committed"><b>Committed many-seed result</b>: ${esc(page.committed!.map(committedText).join('; '))}.</p>`
    : single
      ? `<p class="committed">${esc('No committed many-seed result of these configs: run them over more seeds (corl compare … --seeds 3 or more) for an interval.')}</p>`
      : '';
  return `<div class="verdict"><p><b>Verdict</b> (paired by seed; ${esc(metricText)}; a − b in points):</p><ul>${items.join('') || '<li>no pair to decide yet</li>'}</ul>${oneSeed}${committed}${lookText}<p class="note">${esc(provenanceLine(p))}</p>${checks}</div>`;
}

/** The paired differences as an HTML table, with each pair's per-seed differences and variance split. */
export function pairedHtml(v: Verdicts, metricText: string): string {
  const rows = v.pairs.filter((r) => r.n >= 1);
  if (!rows.length) return '';
  const cells = rows.map((r) => {
    const needed = r.seedsNeeded
      ? `${count(r.seedsNeeded.difference)}${r.seedsNeeded.equivalence !== undefined ? ` / ${count(r.seedsNeeded.equivalence)}` : ''}`
      : '–';
    const split = r.variance
      ? `${r.variance.total.toFixed(2)} = ${r.variance.training.toFixed(2)} training + ${Math.min(r.variance.evaluation, r.variance.total).toFixed(2)} evaluation`
      : '–';
    return `<tr><td>${esc(`${r.a} − ${r.b}`)}${r.role === 'primary' ? ' (primary)' : ''}</td><td>${r.n}</td><td>${signedPoints(r.mean)}</td><td>${r.t ? `${levelText(r.alpha)} ${intervalText(r.t)}` : 'needs 2 seeds'}</td><td>${r.bootstrap ? intervalText(r.bootstrap) : '–'}</td><td><b>${r.n >= 2 ? esc(outcomeText(r)) : 'cannot decide (1 seed)'}</b></td><td>${esc(split)}</td><td>${needed}</td><td>${r.seeds.map((s) => `${s.index}: ${signedPoints(s.diff)}`).join(', ')}</td></tr>`;
  });
  const effect = rows.find((r) => r.seedsNeeded)?.seedsNeeded;
  const decided = rows.find((r) => r.t);
  const reason = decided ? verdictsReason(v, decided.alpha) : '';
  const level = reason ? ` (${levelText(decided!.alpha)}: ${esc(reason)})` : '';
  return `<p class="note">a − b of the ${esc(metricText)}, in points, paired by seed index: t interval over seeds${level}, seed × problem bootstrap interval (it does not decide), outcome; variance of the per-seed difference (points²) split into training and evaluation sampling; seeds needed per config at 80% power${effect ? ` for a ${effect.effect.toFixed(1)}-point difference${effect.equivalence !== undefined ? ' / for equivalence when the true difference is 0' : ''}` : ''}. docs/guide/statistics.md has the method.</p>
<div class="scroll"><table><thead><tr><th>pair (a − b)</th><th>seeds</th><th>mean</th><th>t interval</th><th>bootstrap</th><th>outcome</th><th>variance</th><th>seeds needed</th><th>per seed (index: a − b)</th></tr></thead><tbody>${cells.join('')}</tbody></table></div>`;
}
