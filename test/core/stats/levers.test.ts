// The variance levers of a pair on hand-computed numbers (numpy gave every expected value).
import { expect } from 'chai';
import {
  fitComponents,
  pairLevers,
  regression,
  subsampleScore,
  variance,
  varianceAt,
} from '../../../core/stats/levers';

describe('stats/levers: common random numbers, the step-0 covariate, held-out size × samples', () => {
  // five seeds of two configs; both configs' step-0 scores are the same at each seed (shared rows)
  const start = [40, 42, 39, 44, 41];
  const a = [50, 52, 47, 55, 49].map((final, i) => ({ final, start: start[i]! }));
  const b = [48, 51, 47, 50, 46].map((final, i) => ({ final, start: start[i]! }));

  it('paired by seed, final equals change when the step-0 rows are shared; ANCOVA keeps the residual sd', () => {
    const l = pairLevers(a, b);
    expect(l.seeds).to.equal(5);
    expect(l.paired.final.sd).to.be.closeTo(1.9235384, 1e-6);
    expect(l.paired.change.sd).to.be.closeTo(1.9235384, 1e-6);
    expect(l.paired.ancova.slope).to.be.closeTo(0.7972973, 1e-6);
    expect(l.paired.ancova.sd).to.be.closeTo(1.3406332, 1e-6);
    expect(l.paired.ancova.df).to.equal(3);
    expect(l.correlation).to.be.closeTo(0.7827616, 1e-6);
  });

  it('independent runs: √(s²_a + s²_b) of final and of change, and the two-sample ANCOVA', () => {
    const l = pairLevers(a, b);
    expect(l.independent.final.sd).to.be.closeTo(3.6878178, 1e-6);
    expect(l.independent.change.sd).to.be.closeTo(2.1213203, 1e-6);
    expect(l.independent.ancova.slope).to.be.closeTo(1.1148649, 1e-6);
    expect(l.independent.ancova.sd).to.be.closeTo(2.2430502, 1e-6);
    expect(l.independent.ancova.df).to.equal(7);
    // positively correlated configs: pairing by seed halves the sd here
    expect(l.paired.final.sd).to.be.below(l.independent.final.sd);
  });

  it('a covariate that never varies leaves the variance and its n − 1 degrees of freedom', () => {
    expect(regression([1, 2, 3, 4], [5, 5, 5, 5])).to.deep.equal({ slope: 0, residual: variance([1, 2, 3, 4]), df: 3 });
    expect(variance([1, 2, 3, 4])).to.be.closeTo(5 / 3, 1e-12);
    expect(variance([1])).to.be.NaN;
  });

  it('fewer than three seeds, or unequal seeds, are refused', () => {
    expect(() => pairLevers(a.slice(0, 2), b.slice(0, 2))).to.throw(RangeError, /at least 3, got 2 and 2/);
    expect(() => pairLevers(a, b.slice(1))).to.throw(RangeError, /got 5 and 4/);
  });

  it('recovers the components of an exact grid and predicts beyond it', () => {
    const truth = { A: 2, B: 100, C: 600 };
    const points = [25, 50, 100, 200].flatMap((n) =>
      [1, 2, 4, 8].map((K) => ({ n, K, variance: truth.A + truth.B / n + truth.C / (n * K) })),
    );
    const c = fitComponents(points);
    expect(c.A).to.be.closeTo(2, 1e-9);
    expect(c.B).to.be.closeTo(100, 1e-7);
    expect(c.C).to.be.closeTo(600, 1e-7);
    expect(varianceAt(c, 400, 4)).to.be.closeTo(2 + 0.25 + 0.375, 1e-9);
    // a fit below zero is read as zero variance, never negative
    expect(varianceAt({ A: -5, B: 0, C: 0 }, 10, 1)).to.equal(0);
    expect(() => fitComponents(points.filter((p) => p.n === 25 && p.K === 1))).to.throw(RangeError);
  });

  it('a subsample scores the chosen problems with their first K samples, in points', () => {
    // rows[problem][agent]
    const rows = [
      [
        [true, false, true, true],
        [false, false, false, true],
      ],
      [
        [true, true, true, true],
        [true, false, true, false],
      ],
    ];
    expect(subsampleScore(rows, [0, 1], 4)).to.be.closeTo((100 * (3 / 4 + 1 / 4 + 1 + 2 / 4)) / 4, 1e-12);
    expect(subsampleScore(rows, [0], 2)).to.be.closeTo((100 * (1 / 2 + 0)) / 2, 1e-12);
    expect(subsampleScore(rows, [1], 1)).to.equal(100);
  });
});
