import { expect } from 'chai';
import { bootstrapMeans, hierarchicalBootstrap, percentile } from '../../../core/stats/bootstrap';

describe('stats/bootstrap: the seed × problem bootstrap', () => {
  const values = [
    [1, 0, 0.5, 0.25, 1],
    [0.75, 0.5, 0.5],
    [-0.5, 0, 0.25, 0.125, 0, 1],
    [2, 1.5, 1.75, 1],
  ];

  it('is deterministic: the same seed gives the same interval, another seed nearly the same', () => {
    const a = hierarchicalBootstrap(values, { alpha: 0.05, seed: 7 })!;
    expect(hierarchicalBootstrap(values, { alpha: 0.05, seed: 7 })).to.deep.equal(a);
    const b = hierarchicalBootstrap(values, { alpha: 0.05, seed: 8 })!;
    expect(b).to.not.deep.equal(a);
    expect(Math.abs(b.lo - a.lo)).to.be.below(0.05);
    expect(Math.abs(b.hi - a.hi)).to.be.below(0.05);
  });

  it('its resamples have the exact mean and variance of the two-stage bootstrap distribution', () => {
    // Var = (1/n)·[(1/n)·Σ (m_s − m̄)² + (1/n)·Σ σ_s² / P_s], σ_s² the population variance of seed s
    const n = values.length;
    const m = values.map((v) => v.reduce((a, b) => a + b, 0) / v.length);
    const grand = m.reduce((a, b) => a + b, 0) / n;
    const within = values.map((v, s) => v.reduce((a, b) => a + (b - m[s]!) ** 2, 0) / v.length / v.length);
    const exact = (m.reduce((a, b) => a + (b - grand) ** 2, 0) / n + within.reduce((a, b) => a + b, 0) / n) / n;
    const B = 200000;
    const r = bootstrapMeans(values, B, 11);
    const mean = r.reduce((a, b) => a + b, 0) / B;
    const variance = r.reduce((a, b) => a + (b - mean) ** 2, 0) / (B - 1);
    expect(mean).to.be.closeTo(grand, 4 * Math.sqrt(exact / B));
    // the sd of a variance estimate over B draws is about variance·√(2/B) (kurtosis aside): 0.3% here
    expect(variance / exact).to.be.closeTo(1, 0.02);
  });

  it('with one problem per seed it is the plain seed bootstrap, whose distribution can be enumerated', () => {
    const seeds = [[-3.2], [2.0], [2.7], [0.4]];
    // all 4⁴ equally likely resamples of 4 seeds
    const exact: number[] = [];
    for (let a = 0; a < 4; a++)
      for (let b = 0; b < 4; b++)
        for (let c = 0; c < 4; c++)
          for (let d = 0; d < 4; d++) exact.push((seeds[a]![0]! + seeds[b]![0]! + seeds[c]![0]! + seeds[d]![0]!) / 4);
    exact.sort((x, y) => x - y);
    const cdf = (x: number): number => exact.filter((v) => v <= x + 1e-12).length / exact.length;
    const ci = hierarchicalBootstrap(seeds, { alpha: 0.1, seed: 3, resamples: 100000 })!;
    // the 5% and 95% points of the estimate fall where the exact distribution puts about 5% and 95%
    expect(cdf(ci.lo)).to.be.within(0.03, 0.09);
    expect(cdf(ci.hi)).to.be.within(0.93, 0.99);
    expect(ci.lo).to.be.within(exact[Math.floor(0.03 * 256)]!, exact[Math.ceil(0.08 * 256)]!);
  });

  it('needs two seeds and a problem in each; percentiles interpolate like numpy', () => {
    expect(hierarchicalBootstrap([[1, 2, 3]], { alpha: 0.05, seed: 1 })).to.equal(undefined);
    expect(hierarchicalBootstrap([[1], []], { alpha: 0.05, seed: 1 })).to.equal(undefined);
    // numpy.percentile([1, 2, 4, 8], 25) = 1.75, 90 → 6.8
    expect(percentile([1, 2, 4, 8], 0.25)).to.equal(1.75);
    expect(percentile([1, 2, 4, 8], 0.9)).to.be.closeTo(6.8, 1e-12);
  });
});
