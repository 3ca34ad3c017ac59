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
});
