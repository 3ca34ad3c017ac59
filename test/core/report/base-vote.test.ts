import { expect } from 'chai';
import type { MetricsRecord } from '../../../core/contracts/metrics-sink';
import { baseVoteLines, beatsText } from '../../../core/report/base-vote';
import { markdownTables } from '../../../core/report/markdown';
import { resultRow, type ReportGroup } from '../../../core/report/html';
import { runSummary } from '../../fixtures/run-summary';

/** Two agents: pass@1 and maj@8 at step 0 and step 20, the ensemble at both. */
function run(
  name: string,
  seed: number,
  o: { maj0: number; end: [number, number]; ens?: [number, number] },
  steps = 20,
) {
  const records: MetricsRecord[] = [];
  for (const agent of [0, 1]) {
    records.push({ step: 0, agent, phase: 'eval', metrics: { 'eval/accuracy': 0.4, 'eval/maj@8': o.maj0 } });
    if (steps > 0)
      records.push({ step: 20, agent, phase: 'eval', metrics: { 'eval/accuracy': o.end[agent]!, 'eval/maj@8': 0.9 } });
  }
  if (o.ens) {
    records.push({ step: 0, agent: null, phase: 'eval', metrics: { 'ensemble/maj@8': o.ens[0] } });
    if (steps > 0) records.push({ step: 20, agent: null, phase: 'eval', metrics: { 'ensemble/maj@8': o.ens[1] } });
  }
  return runSummary(name, seed, records, steps);
}

describe('core/report/base-vote (trained rows against the base models’ own vote)', () => {
  // base maj@8 0.60 / 0.62 (seeds 0, 1); ttrl avg pass@1 after training (0.60 + 0.70)/2 = 0.65, 0.66
  //   pass@1 − base maj: +5, +4 → +4.5 ± 12.706·0.5 = [−1.9, +10.9] → inconclusive
  //   ensemble: 0.70 → 0.74, 0.71 → 0.76: +4, +5 → [−1.9, +10.9]
  // gt: 0.80 / 0.82 after training against 0.60 / 0.62: +20, +20 (sd 0) → [+20, +20] → yes
  const groups: ReportGroup[] = [
    {
      name: 'base',
      runs: [run('base', 0, { maj0: 0.6, end: [0.4, 0.4] }, 0), run('base', 1000, { maj0: 0.62, end: [0.4, 0.4] }, 0)],
    },
    {
      name: 'ttrl',
      runs: [
        run('ttrl', 0, { maj0: 0.6, end: [0.6, 0.7], ens: [0.7, 0.74] }),
        run('ttrl', 1000, { maj0: 0.62, end: [0.61, 0.71], ens: [0.71, 0.76] }),
      ],
    },
    {
      name: 'gt',
      runs: [run('gt', 0, { maj0: 0.6, end: [0.8, 0.8] }), run('gt', 1000, { maj0: 0.62, end: [0.82, 0.82] })],
    },
  ];

  it('pairs each trained run with its own step-0 vote, seed by seed, with a 95% t interval', () => {
    const lines = baseVoteLines(groups);
    expect(lines.map((l) => l.config)).to.deep.equal(['ttrl', 'gt']);
    const [ttrl, gt] = lines;
    expect(ttrl!.metric).to.equal('maj@8');
    expect(ttrl!.baseMaj.mean).to.be.closeTo(61, 1e-9);
    expect(ttrl!.overMaj.mean).to.be.closeTo(4.5, 1e-9);
    expect(ttrl!.overMaj.interval!.lo).to.be.closeTo(4.5 - 12.7062 * 0.5, 1e-3);
    expect(ttrl!.overEnsemble!.mean).to.be.closeTo(4.5, 1e-9);
    expect(ttrl!.baseEnsemble!.mean).to.be.closeTo(70.5, 1e-9);
    expect(beatsText(ttrl!.overMaj)).to.equal('inconclusive');
    expect(gt!.overEnsemble).to.equal(undefined);
    expect(beatsText(gt!.overMaj)).to.equal('**yes**');
    expect(beatsText({ n: 2, mean: -3, interval: { lo: -4, hi: -2 } })).to.equal('**no**, below it');
    expect(beatsText({ n: 1, mean: 3 })).to.equal('one seed: no interval');
  });

  it('is a table of the results page, after the results table, only when some row trained', () => {
    const md = markdownTables(groups, groups.map(resultRow));
    expect(md).to.contain(
      '| ttrl | no | 2 | maj@8 61.0 ± 1.4 | +4.5 [−1.9, +10.9] | 70.5 ± 0.7 | +4.5 [−1.9, +10.9] | inconclusive |',
    );
    expect(md).to.contain('| gt | **yes** | 2 | maj@8 61.0 ± 1.4 | +20.0 [+20.0, +20.0] | – | – | **yes** |');
    expect(md.indexOf("against its base models' own vote")).to.be.greaterThan(md.indexOf('| base | no |'));
    expect(markdownTables(groups.slice(0, 1), [resultRow(groups[0]!)])).to.not.contain("base models' own vote");
  });
});
