import { expect } from 'chai';
import { verdictLine } from '../../../core/report/verdict';
import type { ResultRow } from '../../../core/report/html';

const row = (name: string, mean: number, seeds = 1, sd = 0): ResultRow => ({
  name,
  supervised: false,
  seeds,
  steps: 80,
  perAgent: [],
  average: { mean, sd },
  base: { mean: 0.4, sd: 0 },
  labelAccuracy: { mean: NaN, sd: NaN },
});

describe('report/verdict: one plain line that says whether the method helped', () => {
  it('gives the differences in points, the problems and the seeds', () => {
    expect(
      verdictLine({
        method: row('co-rl', 0.5),
        baselines: [row('base', 0.42), row('ttrl', 0.531)],
        problems: 200,
        seeAlso: 'docs/results.md',
      }),
    ).to.equal(
      'co-rl: +8.0 points over base, −3.1 over ttrl on 200 held-out problems; 1 seed, see docs/results.md for 3',
    );
  });

  it('warns when a difference is within one sd of the seeds', () => {
    expect(
      verdictLine({
        method: row('co-rl', 0.5, 3, 0.02),
        baselines: [row('base', 0.49, 3, 0.01)],
        problems: 100,
        split: 'validation',
      }),
    ).to.equal(
      'co-rl: +1.0 points over base on 100 validation problems; 3 seeds, some differences within one sd of the seeds',
    );
    expect(
      verdictLine({ method: row('co-rl', 0.6, 3, 0.02), baselines: [row('base', 0.49, 3, 0.01)], problems: 100 }),
    ).to.equal('co-rl: +11.0 points over base on 100 held-out problems; 3 seeds');
  });

  it('a difference that rounds to 0.0 reads ±0.0, whichever its sign', () => {
    // 0.4540 − 0.4543 = −0.03 points: "±0.0", not "−0.0"; 0.4540 − 0.4530 = +0.1 points
    expect(
      verdictLine({
        method: row('co-rl', 0.454, 1, 0),
        baselines: [row('base', 0.4543, 1, 0), row('ttrl', 0.453, 1, 0)],
        problems: 200,
      }),
    ).to.equal('co-rl: ±0.0 points over base, +0.1 over ttrl on 200 held-out problems; 1 seed');
  });

  it("adds each agent's change over the same agent of the first baseline, when their agents match", () => {
    const agents = (name: string, mean: number, a: number, b: number): ResultRow => ({
      ...row(name, mean),
      perAgent: [
        { name: 'alpha', mean: a, sd: 0 },
        { name: 'beta', mean: b, sd: 0 },
      ],
    });
    // alpha 0.499 − 0.436 = +6.3, beta 0.580 − 0.474 = +10.6; average 0.5395 − 0.455 = +8.45 → +8.4 (binary 0.08449…)
    expect(
      verdictLine({
        method: agents('co-rl', 0.5395, 0.499, 0.58),
        baselines: [agents('base', 0.455, 0.436, 0.474), agents('ttrl', 0.5525, 0.491, 0.614)],
        problems: 200,
        seeAlso: 'docs/results.md',
      }),
    ).to.equal(
      'co-rl: +8.4 points over base (alpha +6.3, beta +10.6), −1.3 over ttrl on 200 held-out problems; 1 seed, see docs/results.md for 3',
    );
    // other agents (a same-family base), or none listed: the average alone
    const other = {
      ...agents('base', 0.455, 0.436, 0.474),
      perAgent: [
        { name: 'alpha', mean: 0.436, sd: 0 },
        { name: 'alpha-s1', mean: 0.44, sd: 0 },
      ],
    };
    expect(verdictLine({ method: agents('co-rl', 0.5395, 0.499, 0.58), baselines: [other], problems: 200 })).to.equal(
      'co-rl: +8.4 points over base on 200 held-out problems; 1 seed',
    );
  });
});
