// The paper's claims, tested on a packed comparison of the embedded benchmark (docs/results/<regime>):
// each claim's numbers come from the committed raw outputs and its verdict from a stated rule, so
// docs/results.md can quote the table and a test can check the quote (test/scripts/claims.test.ts).
//   node dist/scripts/claims.js docs/results/slips [--blind alpha=carry,beta=borrow]
// The configs are found by name: gt, ttrl, co-rl-diff and co-rl-same. Each agent's blind spot is
// the problem category its family's pretraining corpus under-samples (models/README.md).
import { readComparison } from '../core/report/compare';
import type { ReportGroup } from '../core/report/html';
import { resultRow } from '../core/report/html';
import { averageChange, labelCategoryLines, pts, signed } from '../core/report/markdown';
import type { Stat } from '../core/report/runs';

/** The blind spot (problem category) of each agent, by agent name. */
export type BlindSpots = Readonly<Record<string, string>>;

export const DEFAULT_BLIND_SPOTS: BlindSpots = { alpha: 'carry', beta: 'borrow' };

/** One tested claim: what it says, the numbers, and whether the rule holds (undefined: not measurable). */
export interface Claim {
  readonly claim: string;
  readonly rule: string;
  readonly measured: string;
  readonly holds: boolean | 'mixed' | undefined;
}

const pct = (s: Stat): string => pts(s, true);
const points = (x: number): string => signed({ mean: x, sd: 0, n: 1 }, false);

/** Average pass@1 over agents after training, mean ± sd over seeds. */
const final = (g: ReportGroup): Stat => ({ ...resultRow(g).average, n: g.runs.length });

/** Average pass@1 over agents after training and its change from step 0, mean ± sd over seeds. */
function finalAndChange(g: ReportGroup): { final: Stat; change: Stat } {
  return { final: final(g), change: averageChange(g) };
}

/** Pseudo-label accuracy on each agent's own blind spot, first → last 10 training steps. */
function labelsOnBlindSpots(
  g: ReportGroup,
  blind: BlindSpots,
): { agent: string; category: string; first: Stat; last: Stat }[] | undefined {
  const lines = labelCategoryLines([g]);
  const out = [];
  for (const [agent, category] of Object.entries(blind)) {
    const cell = lines.find((l) => l.agent === agent)?.cells[category];
    if (!cell) return undefined;
    out.push({ agent, category, first: cell.first, last: cell.last });
  }
  return out;
}

function labelClaim(name: string, g: ReportGroup | undefined, blind: BlindSpots, direction: 'falls' | 'rises'): Claim {
  const claim = `${name}'s label accuracy ${direction} on each agent's own blind spot (${g?.name ?? 'not run'})`;
  const rule = `pseudo-label accuracy (%) on the agent's blind-spot category, first → last 10 steps, ${direction === 'falls' ? 'lower' : 'higher'} for every agent`;
  const cells = g && labelsOnBlindSpots(g, blind);
  if (!cells) return { claim, rule, measured: 'not recorded by these runs', holds: undefined };
  const measured = cells
    .map((c) => `${c.agent} on ${c.category} ${pct({ ...c.first, n: 1 })} → ${pct({ ...c.last, n: 1 })}`)
    .join('; ');
  const holds = cells.every((c) => (direction === 'falls' ? c.last.mean < c.first.mean : c.last.mean > c.first.mean));
  return { claim, rule, measured, holds };
}

/** The claims of issue 13 on one comparison's groups. Configs missing from it give `holds: undefined`. */
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
    holds: undefined,
  });

  /** A claim on the gap in average pass@1 between co-rl-diff and another config, held when `test(gap)`. */
  const gapClaim = (
    claim: string,
    rule: string,
    other: ReportGroup | undefined,
    name: string,
    test: (gap: number) => boolean,
  ): Claim => {
    if (!diff || !other) return missing(claim, rule, ['co-rl-diff', name]);
    const d = final(diff);
    const o = final(other);
    const gap = d.mean - o.mean;
    return {
      claim,
      rule,
      measured: `co-rl-diff ${pct(d)} against ${name} ${pct(o)}: ${points(gap)}`,
      holds: test(gap),
    };
  };
  claims.push(
    gapClaim(
      'Co-RL cross-family beats TTRL by ≥ 2 points',
      'co-rl-diff − ttrl ≥ 2.0 points of average pass@1 after training',
      ttrl,
      'ttrl',
      (gap) => gap >= 0.02 - 1e-12,
    ),
  );
  claims.push(
    gapClaim(
      'Co-RL is within 2 points of ground truth',
      'gt − co-rl-diff ≤ 2.0 points of average pass@1 after training',
      gt,
      'gt',
      (gap) => -gap <= 0.02 + 1e-12,
    ),
  );
  claims.push(labelClaim('TTRL', ttrl, blind, 'falls'));
  claims.push(labelClaim('Co-RL', diff, blind, 'rises'));
  {
    const claim = 'Cross-family Co-RL beats same-family';
    const rule =
      'co-rl-diff above co-rl-same in average pass@1 after training and in its change from step 0 (the pairs start from different bases); "mixed" when only one';
    if (!diff || !same) claims.push(missing(claim, rule, ['co-rl-diff', 'co-rl-same']));
    else {
      const d = finalAndChange(diff);
      const s = finalAndChange(same);
      const above = [d.final.mean > s.final.mean, d.change.mean > s.change.mean];
      claims.push({
        claim,
        rule,
        measured: `co-rl-diff ${pct(d.final)} (change ${points(d.change.mean)} ± ${(100 * d.change.sd).toFixed(1)}) against co-rl-same ${pct(s.final)} (change ${points(s.change.mean)} ± ${(100 * s.change.sd).toFixed(1)})`,
        holds: above[0] && above[1] ? true : !above[0] && !above[1] ? false : 'mixed',
      });
    }
  }
  return claims;
}

/** The claims as the Markdown table docs/results.md quotes. */
export function claimsTable(claims: readonly Claim[]): string {
  const verdict = (c: Claim): string =>
    c.holds === true ? '**yes**' : c.holds === false ? '**no**' : c.holds === 'mixed' ? 'mixed' : '–';
  return [
    '| claim | rule | measured (mean ± sd over seeds) | holds |',
    '| --- | --- | --- | --- |',
    ...claims.map((c) => `| ${c.claim} | ${c.rule} | ${c.measured} | ${verdict(c)} |`),
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
