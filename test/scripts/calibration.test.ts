import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricsRecord } from '../../core/contracts/metrics-sink';
import { readComparison } from '../../core/report/compare';
import type { ReportGroup } from '../../core/report/html';
import { pairLines } from '../../core/report/markdown';
import type { RunSummary } from '../../core/report/runs';
import { runSummary } from '../fixtures/run-summary';
import {
  FACTS,
  calibrateFact,
  calibrateRegimes,
  calibrationTable,
  CANDIDATES,
  candidateName,
  kappaGap,
  factOutcomeOf,
  perSeed,
  screenCandidate,
  screenTable,
} from '../../scripts/calibration';

const ROOT = path.resolve(__dirname, '../../..');
const RESULTS = path.join(ROOT, 'docs', 'results');
const fact = (id: string) => FACTS.find((f) => f.id === id)!;

/** A run of alpha and beta in folder seed-<i>: pass@1 at step 0 and 20, maj@8 and the ensemble at step 20. */
function run(name: string, i: number, start: number, end: number, maj = end, ens = end): RunSummary {
  const records: MetricsRecord[] = [];
  for (const agent of [0, 1]) {
    records.push({ step: 0, agent, phase: 'eval', metrics: { 'eval/accuracy': start, 'eval/maj@8': start } });
    records.push({ step: 20, agent, phase: 'eval', metrics: { 'eval/accuracy': end, 'eval/maj@8': maj } });
  }
  records.push({ step: 20, agent: null, phase: 'eval', metrics: { 'ensemble/maj@8': ens } });
  return { ...runSummary(name, i * 1000, records), dir: `/nowhere/${name}/seed-${i}` };
}

describe('scripts/calibration (the published baseline facts against the lab)', () => {
  // Two seeds per config; base pass@1 0.40 and maj@8 0.55 (seed 0) / 0.57 (seed 1).
  //   gt   0.40 → 0.50 / 0.52: change +10 / +12
  //   ttrl 0.40 → 0.49 / 0.50: change  +9 / +10, so GT − TTRL = +1 / +2
  //   rent 0.40 → 0.41 / 0.43: change  +1 / +3
  const groups: ReportGroup[] = [
    { name: 'base', runs: [run('base', 0, 0.4, 0.4, 0.55, 0.6), run('base', 1, 0.4, 0.4, 0.57, 0.62)] },
    { name: 'gt', runs: [run('gt', 0, 0.4, 0.5), run('gt', 1, 0.4, 0.52)] },
    { name: 'ttrl', runs: [run('ttrl', 0, 0.4, 0.49, 0.56, 0.58), run('ttrl', 1, 0.4, 0.5, 0.58, 0.6)] },
    { name: 'rent', runs: [run('rent', 0, 0.4, 0.41), run('rent', 1, 0.4, 0.43)] },
  ];
  const comparisons = [{ name: 'worked', groups }];

  it('measures each fact seed by seed and decides it by its 95% t interval, on a worked example', () => {
    // t(0.975, 1) = 12.706, se = |x1 − x2| / 2 for two seeds.
    //   GT − TTRL: +1, +2 → +1.5 ± 12.706·0.5 = [−4.85, +7.85]: reaches past ±1.5 on both sides → inconclusive
    //   RENT: +1, +3 → +2 ± 12.706 = [−10.7, +14.7] → inconclusive
    //   TTRL pass@1 − base maj@8: 49 − 55 = −6, 50 − 57 = −7 → −6.5 ± 6.35 = [−12.85, −0.15] → does not hold
    //   TTRL ensemble − base ensemble: 58 − 60 = −2, 60 − 62 = −2 (sd 0) → [−2, −2] → does not hold
    //   GT − base: +10, +12 → [−1.7, +23.7] → inconclusive
    const rows = ['gt-ttrl', 'rent-gain', 'ttrl-beyond-maj', 'ensemble', 'gt-gain'].map((id) =>
      calibrateFact(fact(id), comparisons),
    );
    expect(rows.map((r) => r.outcome)).to.deep.equal([
      'inconclusive',
      'inconclusive',
      'does not hold',
      'does not hold',
      'inconclusive',
    ]);
    expect(rows.map((r) => +r.mean.toFixed(6))).to.deep.equal([1.5, 2, -6.5, -2, 11]);
    expect(rows[2]!.interval!.lo).to.be.closeTo(-12.853, 1e-3);
    expect(rows[2]!.interval!.hi).to.be.closeTo(-0.147, 1e-3);
    const table = calibrationTable(rows).split('\n');
    expect(table[2]).to.contain(
      '+1.5, 95% CI [−4.9, +7.9] (GT − TTRL, change of avg pass@1 from step 0; worked, 2 seeds)',
    );
    expect(table[4]).to.match(/\| \*\*does not hold\*\* \|$/);
  });

  it('pairs configs by seed index and says when no comparison holds a fact’s configs', () => {
    const shuffled = groups.map((g) => (g.name === 'ttrl' ? { ...g, runs: [...g.runs].reverse() } : g));
    expect(perSeed(shuffled, fact('gt-ttrl').measure)).to.deep.equal(perSeed(groups, fact('gt-ttrl').measure));
    const partial = groups.map((g) => (g.name === 'gt' ? { ...g, runs: g.runs.slice(0, 1) } : g));
    expect(perSeed(partial, fact('gt-ttrl').measure)!.map((x) => +x.toFixed(6))).to.deep.equal([1]);
    const none = calibrateFact(fact('intuitor-gain'), comparisons);
    expect(none.from).to.equal(undefined);
    expect(calibrationTable([none])).to.contain('no committed comparison has these configs');
  });

  it('takes the comparison with the most seeds that holds every needed config', () => {
    const fewer = { name: 'fewer', groups: groups.map((g) => ({ ...g, runs: g.runs.slice(0, 1) })) };
    expect(calibrateFact(fact('gt-ttrl'), [fewer, ...comparisons]).from).to.equal('worked');
    expect(calibrateFact(fact('gt-ttrl'), [...comparisons, { ...fewer, name: 'same' }]).from).to.equal('worked');
  });

  it('decides at the edges of each tolerance as stated', () => {
    const within = fact('gt-ttrl').tolerance;
    expect(factOutcomeOf(within, { lo: -1.5, hi: 1.5 })).to.equal('holds');
    expect(factOutcomeOf(within, { lo: 1.6, hi: 3 })).to.equal('does not hold');
    expect(factOutcomeOf(within, { lo: -3, hi: -1.6 })).to.equal('does not hold');
    expect(factOutcomeOf(within, { lo: 1, hi: 2 })).to.equal('inconclusive');
    expect(factOutcomeOf(within, { lo: -3, hi: 3 })).to.equal('inconclusive');
    const kappa = fact('kappa-gap').tolerance;
    expect(factOutcomeOf(kappa, { lo: -0.2, hi: -0.1 })).to.equal('holds');
    expect(factOutcomeOf(kappa, { lo: -0.09, hi: -0.02 })).to.equal('does not hold');
    expect(factOutcomeOf(fact('rent-gain').tolerance, undefined)).to.equal('inconclusive');
  });

  it('reads no Co-RL result: trained runs are base, gt, ttrl, rent and intuitor; n3-ring only by its step-0 rows', () => {
    for (const f of FACTS) {
      expect(['base', 'gt', 'ttrl', 'rent', 'intuitor', 'n3-ring']).to.include.members([...f.measure.needs]);
      if (f.measure.needs.includes('n3-ring')) expect(f.id).to.equal('kappa-gap');
    }
  });

  it('computes κ across − κ within from the step-0 rows as the results table does (headline-slips, n3-ring)', () => {
    const g = readComparison(path.join(RESULTS, 'headline-slips')).groups.find((x) => x.name === 'n3-ring')!;
    const lines = pairLines([g]);
    const k = (pair: string) => lines.find((l) => l.pair === pair)!.kappa.start.mean;
    const gaps = g.runs.map((r) => kappaGap(r, 'alpha', 'beta', 'alpha-s1'));
    expect(gaps).to.have.length(16);
    expect(gaps.reduce((a, b) => a + b, 0) / gaps.length).to.be.closeTo(
      k('alpha × beta') - k('alpha × alpha-s1'),
      1e-12,
    );
  });

  it('screens a candidate by point estimate against the search’s five targets', () => {
    const one = groups.map((g) => ({ ...g, name: `cand-${g.name}`, runs: g.runs.slice(0, 1) }));
    const s = screenCandidate('cand', one);
    // GT − TTRL +1 (met), RENT +1 (met), Intuitor not run, TTRL − maj −6 (not met), κ: no eval rows
    expect(s.cells.map((c) => c.met)).to.deep.equal([true, true, undefined, false, undefined]);
    expect(s.passes).to.equal(false);
    expect(screenTable([s]).split('\n')[2]).to.equal(
      '| cand | +1.0 (met) | +1.0 (met) | not measured | −6.0 (**not met**) | not measured | no |',
    );
  });

  it('docs/results.md quotes exactly what the committed raw outputs give, for every regime', function () {
    this.timeout(120000);
    const page = fs.readFileSync(path.join(ROOT, 'docs', 'results.md'), 'utf8');
    const all = calibrateRegimes(RESULTS);
    expect(Object.keys(all)).to.deep.equal(['slips', 'systematic']);
    for (const [regime, rows] of Object.entries(all)) {
      const open = `<!-- calibration:${regime} (generated by node dist/scripts/calibration.js docs/results) -->`;
      const from = page.indexOf(open);
      const to = page.indexOf(`<!-- /calibration:${regime} -->`);
      expect(from, `docs/results.md has the block ${open}`).to.be.greaterThan(-1);
      expect(page.slice(from + open.length, to).trim()).to.equal(calibrationTable(rows));
      expect(
        rows.every((r) => r.from !== undefined),
        regime,
      ).to.equal(true);
    }
  });

  it('docs/results.md quotes the search screen of the committed candidates', () => {
    const page = fs.readFileSync(path.join(ROOT, 'docs', 'results.md'), 'utf8');
    const open = `<!-- calibration:search (generated by node dist/scripts/calibration.js --candidates ${CANDIDATES.map((c) => `docs/results/${c}`).join(' ')}) -->`;
    const from = page.indexOf(open);
    expect(from, 'the search block').to.be.greaterThan(-1);
    const quoted = page.slice(from + open.length, page.indexOf('<!-- /calibration:search -->')).trim();
    const screens = CANDIDATES.map((c) =>
      screenCandidate(candidateName(c), readComparison(path.join(RESULTS, c)).groups),
    );
    expect(quoted).to.equal(screenTable(screens));
    expect(screens.some((s) => s.passes)).to.equal(false);
  });
});
