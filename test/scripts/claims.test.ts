import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricsRecord } from '../../core/contracts/metrics-sink';
import { readComparison } from '../../core/report/compare';
import type { ReportGroup } from '../../core/report/html';
import type { RunSummary } from '../../core/report/runs';
import { runSummary } from '../fixtures/run-summary';
import { claimsTable, evaluateClaims, parseBlindSpots } from '../../scripts/claims';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * A run of two agents (alpha, beta): held-out pass@1 at step 0 and step 10, and the pseudo-label
 * accuracy on carry problems over 20 training steps (first 10 at `early`, last 10 at `late`).
 */
function run(
  name: string,
  seed: number,
  start: [number, number],
  end: [number, number],
  labels?: { carry: [number, number]; borrow: [number, number] },
): RunSummary {
  const records: MetricsRecord[] = [];
  for (const agent of [0, 1]) {
    records.push({ step: 0, agent, phase: 'eval', metrics: { 'eval/accuracy': start[agent]! } });
    records.push({ step: 20, agent, phase: 'eval', metrics: { 'eval/accuracy': end[agent]! } });
    if (labels)
      for (let step = 1; step <= 20; step++) {
        const [early, late] = agent === 0 ? labels.carry : labels.borrow;
        const cat = agent === 0 ? 'carry' : 'borrow';
        records.push({
          step,
          agent,
          phase: 'train',
          metrics: { [`label/accuracy/${cat}`]: step <= 10 ? early : late, [`label/count/${cat}`]: 4 },
        });
      }
  }
  return runSummary(name, seed, records);
}

describe("scripts/claims (the paper's claims on a comparison)", () => {
  // Worked example, two seeds each. Average pass@1 after training (mean over agents, then seeds):
  //   gt         (0.60+0.70)/2 = 0.65, (0.62+0.72)/2 = 0.67 → 0.66
  //   ttrl       0.50, 0.52 → 0.51
  //   co-rl-diff 0.54, 0.55 → 0.545  (start 0.40 both seeds: change +0.145)
  //   co-rl-same 0.56, 0.58 → 0.57   (start 0.45: change +0.12)
  const groups: ReportGroup[] = [
    { name: 'gt', runs: [run('gt', 0, [0.4, 0.4], [0.6, 0.7]), run('gt', 1000, [0.4, 0.4], [0.62, 0.72])] },
    {
      name: 'ttrl',
      runs: [
        run('ttrl', 0, [0.4, 0.4], [0.45, 0.55], { carry: [0.4, 0.3], borrow: [0.3, 0.1] }),
        run('ttrl', 1000, [0.4, 0.4], [0.47, 0.57], { carry: [0.4, 0.3], borrow: [0.3, 0.1] }),
      ],
    },
    {
      name: 'co-rl-diff',
      runs: [
        run('co-rl-diff', 0, [0.4, 0.4], [0.5, 0.58], { carry: [0.6, 0.65], borrow: [0.7, 0.6] }),
        run('co-rl-diff', 1000, [0.4, 0.4], [0.51, 0.59], { carry: [0.6, 0.65], borrow: [0.7, 0.6] }),
      ],
    },
    {
      name: 'co-rl-same',
      runs: [run('co-rl-same', 0, [0.45, 0.45], [0.52, 0.6]), run('co-rl-same', 1000, [0.45, 0.45], [0.54, 0.62])],
    },
  ];

  it('gives each claim its numbers, its 95% interval over seeds and one of three outcomes, on a worked example', () => {
    // Paired by seed, in points, t(0.975, 1) = 12.706 and se = sd/√2 for two seeds:
    //   co-rl-diff − ttrl: +4, +3 → +3.5 ± 12.706·0.5 = [−2.9, +9.9]: straddles 2 → inconclusive
    //   gt − co-rl-diff: +11, +12 → [+5.1, +17.9]: above 2 → does not hold
    //   ttrl's labels: alpha −10, −10 and beta −20, −20 (sd 0): both below 0 → holds
    //   co-rl-diff's labels: alpha +5, +5 above 0 but beta −10, −10 below → does not hold
    //   change co-rl-diff − co-rl-same: (14 − 11), (15 − 13) = +3, +2 → [−3.9, +8.9] → inconclusive
    const claims = evaluateClaims(groups);
    expect(claims.map((c) => c.outcome)).to.deep.equal([
      'inconclusive',
      'does not hold',
      'holds',
      'does not hold',
      'inconclusive',
    ]);
    expect(claims[0]!.measured).to.equal(
      'co-rl-diff 54.5 ± 0.7 against ttrl 51.0 ± 1.4: +3.5, 95% CI [−2.9, +9.9] over 2 seeds',
    );
    expect(claims[1]!.measured).to.equal(
      'co-rl-diff 54.5 ± 0.7 against gt 66.0 ± 1.4: gt − co-rl-diff +11.5, 95% CI [+5.1, +17.9] over 2 seeds',
    );
    expect(claims[2]!.measured).to.equal(
      'alpha on carry 40.0 → 30.0 (−10.0, 95% CI [−10.0, −10.0] over 2 seeds); beta on borrow 30.0 → 10.0 (−20.0, 95% CI [−20.0, −20.0] over 2 seeds)',
    );
    expect(claims[4]!.measured).to.equal(
      'co-rl-diff 54.5 ± 0.7 (change +14.5 ± 0.7) against co-rl-same 57.0 ± 1.4 (change +12.0 ± 1.4): change +2.5, 95% CI [−3.9, +8.9] over 2 seeds',
    );
    expect(
      claimsTable(claims)
        .split('\n')
        .map((l) => l.split(' | ').pop()),
    ).to.deep.equal([
      'outcome |',
      '--- |',
      'inconclusive |',
      '**does not hold** |',
      '**holds** |',
      '**does not hold** |',
      'inconclusive |',
    ]);
  });

  it('takes a gap of exactly 2 points as within and as beating; one seed decides nothing', () => {
    const at = (name: string, final: number): ReportGroup => ({
      name,
      runs: [run(name, 0, [0.4, 0.4], [final, final]), run(name, 1000, [0.4, 0.4], [final, final])],
    });
    const claims = evaluateClaims([at('ttrl', 0.5), at('co-rl-diff', 0.52), at('gt', 0.54)]);
    expect(claims[0]!.outcome).to.equal('holds');
    expect(claims[1]!.outcome).to.equal('holds');
    const one = evaluateClaims(
      [at('ttrl', 0.5), at('co-rl-diff', 0.6)].map((g) => ({ ...g, runs: g.runs.slice(0, 1) })),
    );
    expect(one[0]!.outcome).to.equal('inconclusive');
    expect(one[0]!.measured).to.contain('no interval over 1 seed');
  });

  it('says what it cannot measure instead of guessing', () => {
    const claims = evaluateClaims(groups.filter((g) => g.name === 'gt' || g.name === 'co-rl-same'));
    expect(claims.map((c) => c.outcome)).to.deep.equal([undefined, undefined, undefined, undefined, undefined]);
    expect(claims[0]!.measured).to.equal('no co-rl-diff or ttrl in this comparison');
    expect(claims[0]!.rule).to.match(/^co-rl-diff − ttrl in average pass@1/);
    expect(claims[2]!.measured).to.equal('not recorded by these runs');
  });

  it('parses the blind spots, and refuses what is not agent=category', () => {
    expect(parseBlindSpots('alpha=carry, beta=borrow')).to.deep.equal({ alpha: 'carry', beta: 'borrow' });
    expect(() => parseBlindSpots('alpha:carry')).to.throw(/expected --blind agent=category/);
  });

  it('docs/results.md quotes exactly what the committed raw outputs give, for every claims block', () => {
    const page = fs.readFileSync(path.join(ROOT, 'docs', 'results.md'), 'utf8');
    const blocks = [
      ...page.matchAll(
        /<!-- claims:([a-z-]+) \(generated by node dist\/scripts\/claims\.js docs\/results\/\1\) -->\n([\s\S]*?)\n<!-- \/claims:\1 -->/g,
      ),
    ];
    expect(blocks.map((b) => b[1])).to.deep.equal(['slips', 'systematic']);
    for (const [, regime, quoted] of blocks) {
      const table = claimsTable(evaluateClaims(readComparison(path.join(ROOT, 'docs', 'results', regime!)).groups));
      expect(quoted!.trim(), regime).to.equal(table);
    }
  });
});
