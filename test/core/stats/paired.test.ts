import { expect } from 'chai';
import { outcomeOf, sample, tInterval, tost } from '../../../core/stats/paired';
import { scipy } from '../../support/scipy';

describe('stats/paired: t interval, TOST and the four outcomes', () => {
  it('a hand-worked example: the differences −3.2, +2.0, +2.7', () => {
    // mean 0.5; deviations −3.7, 1.5, 2.2; Σ² = 20.78; sd = √10.39; se = sd/√3; t(0.975, 2) = 0.95·√(2/0.0975)
    const s = sample([-3.2, 2.0, 2.7]);
    expect(s.n).to.equal(3);
    expect(s.mean).to.be.closeTo(0.5, 1e-14);
    expect(s.sd).to.be.closeTo(Math.sqrt(10.39), 1e-13);
    const half = 0.95 * Math.sqrt(2 / 0.0975) * (Math.sqrt(10.39) / Math.sqrt(3));
    const ci = tInterval(s, 0.05)!;
    expect(ci.lo).to.be.closeTo(0.5 - half, 1e-12);
    expect(ci.hi).to.be.closeTo(0.5 + half, 1e-12);
    expect(outcomeOf(s, 0.05)).to.equal('inconclusive');
    expect(outcomeOf(s, 0.05, 2)).to.equal('inconclusive');
  });

  it('agrees with scipy: the t interval and both one-sided tests of TOST', () => {
    const cases = [
      { d: [1.2, 0.4, 2.2, 1.9, 0.7, 1.1], alpha: 0.05, margin: 3 },
      { d: [0.3, -0.4, 0.1, 0.2, -0.1, 0.05, 0.0, 0.25], alpha: 0.05, margin: 0.5 },
      { d: [-2.1, -3.3, -1.7, -2.6], alpha: 0.0147, margin: 2 },
      { d: [5, -4, 3, -2, 6, -1, 0.5], alpha: 0.1, margin: 1 },
      { d: Array.from({ length: 32 }, (_, i) => Math.sin(i * 1.7) * 3 + 0.4), alpha: 0.0221, margin: 2 },
    ];
    const want = scipy<{ lo: number; hi: number; pLow: number; pHigh: number }[]>(
      `out = []
for c in data:
    d = np.array(c['d']); n = len(d); se = d.std(ddof=1) / np.sqrt(n)
    lo, hi = st.t.interval(1 - c['alpha'], n - 1, loc=d.mean(), scale=se)
    pl = st.ttest_1samp(d, -c['margin'], alternative='greater').pvalue
    ph = st.ttest_1samp(d, c['margin'], alternative='less').pvalue
    out.append({'lo': float(lo), 'hi': float(hi), 'pLow': float(pl), 'pHigh': float(ph)})`,
      cases,
    );
    cases.forEach((c, i) => {
      const s = sample(c.d);
      const ci = tInterval(s, c.alpha)!;
      expect(ci.lo).to.be.closeTo(want[i]!.lo, 1e-9);
      expect(ci.hi).to.be.closeTo(want[i]!.hi, 1e-9);
      const equivalent = want[i]!.pLow < c.alpha && want[i]!.pHigh < c.alpha;
      expect(tost(s, c.margin, c.alpha)!.equivalent, `case ${i}`).to.equal(equivalent);
    });
    // the cases cover ahead, equivalent, behind and inconclusive
    expect(cases.map((c) => outcomeOf(sample(c.d), c.alpha, c.margin))).to.deep.equal([
      'ahead',
      'equivalent',
      'behind',
      'inconclusive',
      'equivalent',
    ]);
  });

  it('ahead or behind comes before equivalent; no margin, no equivalence', () => {
    // tight and positive, inside ±1: ahead (the sign is resolved) although also within the margin
    const tight = sample([0.3, 0.31, 0.29, 0.3, 0.32]);
    expect(outcomeOf(tight, 0.05, 1)).to.equal('ahead');
    const flat = sample([0.1, -0.1, 0.05, -0.05, 0, 0.02]);
    expect(outcomeOf(flat, 0.05, 1)).to.equal('equivalent');
    expect(outcomeOf(flat, 0.05)).to.equal('inconclusive');
  });

  it('one seed or none: no interval, inconclusive; identical seeds: the point', () => {
    expect(tInterval(sample([2]), 0.05)).to.equal(undefined);
    expect(outcomeOf(sample([2]), 0.05, 1)).to.equal('inconclusive');
    expect(sample([]).mean).to.be.NaN;
    expect(tInterval(sample([1, 1, 1]), 0.05)).to.deep.equal({ lo: 1, hi: 1 });
    expect(outcomeOf(sample([1, 1, 1]), 0.05)).to.equal('ahead');
  });
});
