import { expect } from 'chai';
import { boundary, spent } from '../../../core/stats/sequential';
import { scipy } from '../../support/scipy';

describe('stats/sequential: Lan–DeMets α-spending boundaries', () => {
  it('spend α(t) = α·ln(1 + (e − 1)t) (Pocock type) and 2 − 2Φ(z/√t) (O’Brien–Fleming type)', () => {
    expect(spent('lan-demets-pocock', 0.05, 1)).to.be.closeTo(0.05, 1e-15);
    expect(spent('lan-demets-pocock', 0.05, 0.5)).to.be.closeTo(0.05 * Math.log(1 + (Math.E - 1) / 2), 1e-15);
    expect(spent('lan-demets-obrien-fleming', 0.05, 1)).to.be.closeTo(0.05, 1e-12);
    expect(spent('lan-demets-obrien-fleming', 0.05, 0)).to.equal(0);
  });

  it('one look at t = 1 is the fixed test: c = 1.96', () => {
    const b = boundary('lan-demets-pocock', 0.05, [1]);
    expect(b.critical[0]).to.be.closeTo(1.959963984540054, 1e-12);
    expect(b.nominal[0]).to.be.closeTo(0.05, 1e-14);
  });

  it('matches the published Pocock-type boundary for five equally spaced looks at two-sided 5%', () => {
    // gsDesign's sfLDPocock, two-sided 5%: 2.438, 2.427, 2.410, 2.397, 2.386
    const t = [0.2, 0.4, 0.6, 0.8, 1];
    const p = boundary('lan-demets-pocock', 0.05, t).critical;
    [2.438, 2.427, 2.41, 2.397, 2.386].forEach((c, k) => expect(p[k]).to.be.closeTo(c, 1.5e-3));
  });

  it("spends exactly α(t_k) by each look: the crossing probability from scipy's multivariate normal CDF", () => {
    const designs = [
      { family: 'lan-demets-pocock' as const, alpha: 0.05, t: [0.5, 0.75, 1] },
      { family: 'lan-demets-pocock' as const, alpha: 0.05, t: [1 / 3, 2 / 3, 1] },
      { family: 'lan-demets-obrien-fleming' as const, alpha: 0.05, t: [0.25, 0.5, 0.75, 1] },
      { family: 'lan-demets-pocock' as const, alpha: 0.1, t: [0.3, 0.45, 0.9, 1] },
    ];
    const input = designs.map((d) => ({ t: d.t, c: boundary(d.family, d.alpha, d.t).critical }));
    // P(some |Z_j| ≥ c_j, j ≤ k) with corr(Z_i, Z_j) = √(t_i/t_j), by Genz's algorithm in scipy
    const want = scipy<number[][]>(
      `out = []
for d in data:
    t = np.array(d['t']); c = np.array(d['c']); row = []
    for k in range(1, len(t) + 1):
        tt = t[:k]; cov = np.sqrt(np.minimum.outer(tt, tt) / np.maximum.outer(tt, tt))
        inside = st.multivariate_normal.cdf(c[:k], mean=np.zeros(k), cov=cov, maxpts=500000 * k, abseps=1e-8, releps=0, lower_limit=-c[:k])
        row.append(float(1 - inside))
    out.append(row)`,
      input,
    );
    designs.forEach((d, i) =>
      d.t.forEach((t, k) =>
        expect(want[i]![k]!, `${d.family} look ${k + 1}`).to.be.closeTo(spent(d.family, d.alpha, t), 2e-6),
      ),
    );
  });

  it('the headline plans: looks at 16, 24, 32 seeds (t = ½, ¾, 1) and their nominal levels', () => {
    const b = boundary('lan-demets-pocock', 0.05, [0.5, 0.75, 1]);
    // each nominal level is below 0.05 and the first look spends α(½) = 0.05·ln((1 + e)/2) = 0.0310057
    expect(b.spent[0]).to.be.closeTo(0.0310057, 1e-7);
    expect(b.nominal[0]).to.be.closeTo(b.spent[0]!, 1e-12);
    for (const n of b.nominal) expect(n).to.be.within(0.015, 0.032);
  });

  it('refuses fractions that do not increase inside (0, 1]; a look that spends nothing has no boundary', () => {
    expect(() => boundary('lan-demets-pocock', 0.05, [0.5, 0.5])).to.throw(RangeError, /increasing/);
    expect(() => boundary('lan-demets-pocock', 0.05, [0, 1])).to.throw(RangeError);
    expect(() => boundary('lan-demets-pocock', 0.05, [1.2])).to.throw(RangeError);
    const b = boundary('lan-demets-obrien-fleming', 1e-300, [0.01, 1]);
    expect(b.critical[0]).to.equal(Infinity);
    expect(b.nominal[0]).to.equal(0);
  });
});
