// The paper's claims, tested on a packed comparison of the embedded benchmark (docs/results/<regime>):
// each claim's numbers come from the committed raw outputs and its outcome from a stated rule on a
// 95% interval over seeds (holds, does not hold, inconclusive: never a bare yes or no), so
// docs/results.md can quote the table and a test can check the quote (test/scripts/claims.test.ts).
//   node dist/scripts/claims.js docs/results/slips [--blind alpha=carry,beta=borrow]
// The configs are found by name: gt, ttrl, co-rl-diff and co-rl-same. Each agent's blind spot is
// the problem category its family's pretraining corpus under-samples (models/README.md).
import { readComparison } from '../core/report/compare';
import type { ReportGroup } from '../core/report/html';
import { resultRow } from '../core/report/html';
import { averageChange, labelCategoryLines, pts, signed } from '../core/report/markdown';
import type { Stat } from '../core/report/runs';
import { analysePairs, type PairResult } from '../core/report/paired';
import { intervalText, levelText, signedPoints } from '../core/report/verdict';
import { sample, tInterval, type Interval } from '../core/stats/paired';

/** The blind spot (problem category) of each agent, by agent name. */
export type BlindSpots = Readonly<Record<string, string>>;

export const DEFAULT_BLIND_SPOTS: BlindSpots = { alpha: 'carry', beta: 'borrow' };

/** A claim's outcome by its interval: the interval lies where the claim says, lies on the other side, or straddles. */
export type ClaimOutcome = 'holds' | 'does not hold' | 'inconclusive';

/** One tested claim: what it says, the numbers with their interval, and the outcome (undefined: not measurable). */
export interface Claim {
  readonly claim: string;
  readonly rule: string;
  readonly measured: string;
  readonly outcome: ClaimOutcome | undefined;
}

/** Two-sided error rate of the claims' intervals. */
export const CLAIMS_ALPHA = 0.05;

const pct = (s: Stat): string => pts(s, true);

/** Average pass@1 over agents after training, mean ± sd over seeds. */
const final = (g: ReportGroup): Stat => ({ ...resultRow(g).average, n: g.runs.length });

/** "holds" when the whole interval satisfies `holds`, "does not hold" when the whole interval satisfies `fails`. */
function byInterval(
  i: Interval | undefined,
  holds: (x: number) => boolean,
  fails: (x: number) => boolean,
): ClaimOutcome {
  if (!i) return 'inconclusive';
  if (holds(i.lo) && holds(i.hi)) return 'holds';
  if (fails(i.lo) && fails(i.hi)) return 'does not hold';
  return 'inconclusive';
}

/** "+0.5, 95% CI [−7.6, +8.6] over 3 seeds" (points). */
function withInterval(mean: number, i: Interval | undefined, n: number): string {
  return `${signedPoints(mean)}, ${i ? `${levelText(CLAIMS_ALPHA)} CI ${intervalText(i)}` : 'no interval'} over ${n} seed${n === 1 ? '' : 's'}`;
}

/** The paired difference a − b of a metric over seeds (t interval only). */
function paired(groups: readonly ReportGroup[], a: string, b: string, metric: 'final' | 'change'): PairResult {
  return analysePairs(groups, [{ a, b }], metric, { alpha: CLAIMS_ALPHA, resamples: 0 })[0]!;
}

/** Per agent, the change of pseudo-label accuracy (points) on its own blind spot, first → last 10 steps, with its interval over seeds. */
function labelsOnBlindSpots(
  g: ReportGroup,
  blind: BlindSpots,
):
  | {
      agent: string;
      category: string;
      first: Stat;
      last: Stat;
      change: Interval | undefined;
      n: number;
      mean: number;
    }[]
  | undefined {
  const lines = labelCategoryLines([g]);
  const out = [];
  for (const [agent, category] of Object.entries(blind)) {
    const cell = lines.find((l) => l.agent === agent)?.cells[category];
    if (!cell) return undefined;
    const perSeed = g.runs
      .map((run) => labelCategoryLines([{ name: g.name, runs: [run] }]).find((l) => l.agent === agent)?.cells[category])
      .filter((c): c is NonNullable<typeof c> => c !== undefined)
      .map((c) => 100 * (c.last.mean - c.first.mean))
      .filter(Number.isFinite);
    const s = sample(perSeed);
    out.push({
      agent,
      category,
      first: cell.first,
      last: cell.last,
      change: tInterval(s, CLAIMS_ALPHA),
      n: s.n,
      mean: s.mean,
    });
  }
  return out;
}

function labelClaim(name: string, g: ReportGroup | undefined, blind: BlindSpots, direction: 'falls' | 'rises'): Claim {
  const claim = `${name}'s label accuracy ${direction} on each agent's own blind spot (${g?.name ?? 'not run'})`;
  const rule = `per agent, pseudo-label accuracy (%) on its blind-spot category, last − first 10 steps, paired by seed: holds when every agent's interval lies ${direction === 'falls' ? 'below' : 'above'} 0, does not hold when some agent's lies ${direction === 'falls' ? 'above' : 'below'} 0`;
  const cells = g && labelsOnBlindSpots(g, blind);
  if (!cells) return { claim, rule, measured: 'not recorded by these runs', outcome: undefined };
  const measured = cells
    .map(
      (c) =>
        `${c.agent} on ${c.category} ${pct({ ...c.first, n: 1 })} → ${pct({ ...c.last, n: 1 })} (${withInterval(c.mean, c.change, c.n)})`,
    )
    .join('; ');
  const want = direction === 'falls' ? (x: number) => x < 0 : (x: number) => x > 0;
  const against = direction === 'falls' ? (x: number) => x > 0 : (x: number) => x < 0;
  const each = cells.map((c) => byInterval(c.change, want, against));
  const outcome: ClaimOutcome = each.every((o) => o === 'holds')
    ? 'holds'
    : each.some((o) => o === 'does not hold')
      ? 'does not hold'
      : 'inconclusive';
  return { claim, rule, measured, outcome };
}

/** The claims of issue 13 on one comparison's groups, each decided by its 95% interval over seeds. Configs missing from it give `outcome: undefined`. */
export function evaluateClaims(groups: readonly ReportGroup[], blind: BlindSpots = DEFAULT_BLIND_SPOTS): Claim[] {
  const by = (n: string): ReportGroup | undefined => groups.find((g) => g.name === n);
  const gt = by('gt');
  const ttrl = by('ttrl');
  const diff = by('co-rl-diff');
  const same = by('co-rl-same');
  const claims: Claim[] = [];
  const missing = (claim: string, rule: string, names: string[]): Claim => ({
    claim,
    rule,
    measured: `no ${names.join(' or ')} in this comparison`,
    outcome: undefined,
  });
  const beats = {
    claim: 'Co-RL cross-family beats TTRL by ≥ 2 points',
    rule: 'co-rl-diff − ttrl in average pass@1 after training, paired by seed: holds when the interval lies above 2 points, does not hold when it lies below 2',
  };
  const within = {
    claim: 'Co-RL is within 2 points of ground truth',
    rule: 'gt − co-rl-diff in average pass@1 after training, paired by seed: holds when the interval lies below 2 points, does not hold when it lies above 2',
  };
  if (!diff || !ttrl) claims.push(missing(beats.claim, beats.rule, ['co-rl-diff', 'ttrl']));
  else {
    const p = paired(groups, 'co-rl-diff', 'ttrl', 'final');
    claims.push({
      ...beats,
      measured: `co-rl-diff ${pct(final(diff))} against ttrl ${pct(final(ttrl))}: ${withInterval(p.mean, p.t, p.n)}`,
      outcome: byInterval(
        p.t,
        (x) => x >= 2,
        (x) => x < 2,
      ),
    });
  }
  if (!diff || !gt) claims.push(missing(within.claim, within.rule, ['co-rl-diff', 'gt']));
  else {
    const p = paired(groups, 'gt', 'co-rl-diff', 'final');
    claims.push({
      ...within,
      measured: `co-rl-diff ${pct(final(diff))} against gt ${pct(final(gt))}: gt − co-rl-diff ${withInterval(p.mean, p.t, p.n)}`,
      outcome: byInterval(
        p.t,
        (x) => x <= 2,
        (x) => x > 2,
      ),
    });
  }
  claims.push(labelClaim('TTRL', ttrl, blind, 'falls'));
  claims.push(labelClaim('Co-RL', diff, blind, 'rises'));
  {
    const claim = 'Cross-family Co-RL beats same-family';
    const rule =
      'co-rl-diff − co-rl-same in the change of average pass@1 from step 0 (the pairs start from different bases), paired by seed: holds when the interval lies above 0, does not hold when below';
    if (!diff || !same) claims.push(missing(claim, rule, ['co-rl-diff', 'co-rl-same']));
    else {
      const p = paired(groups, 'co-rl-diff', 'co-rl-same', 'change');
      claims.push({
        claim,
        rule,
        measured: `co-rl-diff ${pct(final(diff))} (change ${signed(averageChange(diff), true)}) against co-rl-same ${pct(final(same))} (change ${signed(averageChange(same), true)}): change ${withInterval(p.mean, p.t, p.n)}`,
        outcome: byInterval(
          p.t,
          (x) => x > 0,
          (x) => x < 0,
        ),
      });
    }
  }
  return claims;
}

/** The claims as the Markdown table docs/results.md quotes. */
export function claimsTable(claims: readonly Claim[]): string {
  const outcome = (c: Claim): string =>
    c.outcome === undefined ? '–' : c.outcome === 'inconclusive' ? 'inconclusive' : `**${c.outcome}**`;
  return [
    '| claim | rule (95% t interval over seeds) | measured (mean ± sd over seeds; difference with its interval) | outcome |',
    '| --- | --- | --- | --- |',
    ...claims.map((c) => `| ${c.claim} | ${c.rule} | ${c.measured} | ${outcome(c)} |`),
  ].join('\n');
}

/** Parse `alpha=carry,beta=borrow`. */
export function parseBlindSpots(text: string): BlindSpots {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const m = /^\s*([^=\s]+)\s*=\s*([^=\s]+)\s*$/.exec(part);
    if (!m) throw new Error(`expected --blind agent=category[,agent=category…], got "${text}"`);
    out[m[1]!] = m[2]!;
  }
  return out;
}

function main(argv: readonly string[]): void {
  const args = [...argv];
  let blind = DEFAULT_BLIND_SPOTS;
  const i = args.indexOf('--blind');
  if (i >= 0) {
    blind = parseBlindSpots(args[i + 1] ?? '');
    args.splice(i, 2);
  }
  if (args.length !== 1) {
    process.stderr.write('usage: node dist/scripts/claims.js <comparison folder> [--blind alpha=carry,beta=borrow]\n');
    process.exit(2);
  }
  process.stdout.write(claimsTable(evaluateClaims(readComparison(args[0]!).groups, blind)) + '\n');
}

if (require.main === module) main(process.argv.slice(2));
