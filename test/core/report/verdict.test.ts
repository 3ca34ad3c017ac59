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

  it('prints a difference that rounds to zero as +0.0, never −0.0', () => {
    expect(
      verdictLine({ method: row('co-rl', 0.4999), baselines: [row('base', 0.5), row('ttrl', 0.4996)], problems: 8 }),
    ).to.equal('co-rl: +0.0 points over base, +0.0 over ttrl on 8 held-out problems; 1 seed');
    expect(verdictLine({ method: row('co-rl', 0.4994), baselines: [row('base', 0.5)], problems: 8 })).to.equal(
      'co-rl: −0.1 points over base on 8 held-out problems; 1 seed',
    );
  });
});
