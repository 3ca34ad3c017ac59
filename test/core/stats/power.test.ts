import { expect } from 'chai';
import { seedsFor, tostPower, tTestPower } from '../../../core/stats/power';
import { scipy } from '../../support/scipy';

describe('stats/power: seeds needed to resolve an effect', () => {
  it("the t test's power agrees with scipy's noncentral t", () => {
    const cases = [
      { n: 3, effect: 0.5, sd: 3.25, alpha: 0.05 },
      { n: 16, effect: 2.5, sd: 3.25, alpha: 0.05 },
      { n: 34, effect: 0.5, sd: 1, alpha: 0.05 },
      { n: 8, effect: 8.4, sd: 2.3, alpha: 0.0147 },
      { n: 200, effect: 0.2, sd: 1, alpha: 0.01 },
      { n: 2, effect: 10, sd: 1, alpha: 0.05 },
    ];
    const want = scipy<number[]>(
      `out = []
for c in data:
    df = c['n'] - 1; t = st.t.ppf(1 - c['alpha'] / 2, df); nc = c['effect'] * np.sqrt(c['n']) / c['sd']
    out.append(float(st.nct.sf(t, df, nc) + st.nct.cdf(-t, df, nc)))`,
      cases,
    );
    cases.forEach((c, i) =>
      expect(tTestPower(c.n, c.effect, c.sd, c.alpha), JSON.stringify(c)).to.be.closeTo(want[i]!, 1e-7),
    );
  });

  it('a textbook sample size: d = 0.5 at two-sided 5% and 80% power needs 34 (power 0.808; 33 gives 0.798)', () => {
    expect(seedsFor((n) => tTestPower(n, 0.5, 1, 0.05))).to.equal(34);
    expect(tTestPower(34, 0.5, 1, 0.05)).to.be.closeTo(0.8078, 1e-4);
    expect(tTestPower(33, 0.5, 1, 0.05)).to.be.below(0.8);
  });

  it("TOST's power agrees with scipy's quadrature of the same probability", () => {
    const cases = [
      { n: 32, margin: 2, sd: 3.25, alpha: 0.05, effect: 0 },
      { n: 16, margin: 2, sd: 3.25, alpha: 0.05, effect: 0.5 },
      { n: 10, margin: 1, sd: 0.8, alpha: 0.0147, effect: -0.2 },
      { n: 4, margin: 2, sd: 3.25, alpha: 0.05, effect: 0 },
    ];
    // P(both one-sided tests reject) = E_s[Φ((m − c·s/√n − θ)/(σ/√n)) − Φ((−m + c·s/√n − θ)/(σ/√n))]^+,
    // s = σ·χ_ν/√ν; integrated by scipy's adaptive quadrature against the chi density
    const want = scipy<number[]>(
      `out = []
for c in data:
    n = c['n']; nu = n - 1; se = c['sd'] / np.sqrt(n); crit = st.t.ppf(1 - c['alpha'], nu)
    def g(w):
        half = c['margin'] - crit * se * w / np.sqrt(nu)
        return max(0.0, st.norm.cdf((half - c['effect']) / se) - st.norm.cdf((-half - c['effect']) / se)) * st.chi.pdf(w, nu)
    top = c['margin'] * np.sqrt(nu) / (crit * se)
    out.append(float(scipy.integrate.quad(g, 0, top, epsabs=1e-12, limit=200)[0]))`,
      cases,
    );
    cases.forEach((c, i) =>
      expect(tostPower(c.n, c.margin, c.sd, c.alpha, c.effect), JSON.stringify(c)).to.be.closeTo(want[i]!, 1e-7),
    );
  });

  it('as n grows TOST approaches the normal limit; with sd 0 every test decides', () => {
    // n = 10⁴, σ = 1, margin 0.05: the interval's half-width is ~1.645·0.01, so power ≈ 2Φ((0.05 − 0.01645)/0.01) − 1
    const limit = 2 * 0.99961 - 1;
    expect(tostPower(10000, 0.05, 1, 0.05)).to.be.closeTo(limit, 2e-3);
    expect(tTestPower(5, 1, 0, 0.05)).to.equal(1);
    expect(tostPower(5, 1, 0, 0.05, 0.5)).to.equal(1);
    expect(seedsFor(() => 0)).to.equal(Infinity);
    expect(seedsFor((n) => (n >= 1234 ? 0.9 : 0.1))).to.equal(1234);
  });
});
