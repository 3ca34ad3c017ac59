import { expect } from 'chai';
import {
  logGamma,
  normalCdf,
  normalQuantile,
  regularizedBeta,
  studentTCdf,
  studentTQuantile,
} from '../../../core/stats/distributions';
import { scipy } from '../../support/scipy';

/** |a − b| within rel·|b| + abs. */
function close(a: number, b: number, rel: number, abs = 0, what = ''): void {
  expect(Math.abs(a - b), `${what}: ${a} against ${b}`).to.be.at.most(rel * Math.abs(b) + abs);
}

describe('stats/distributions: normal and Student t in double precision', () => {
  it('hand-checked values: Φ(1.96), z(0.975), and the closed forms of t with 1 and 2 degrees of freedom', () => {
    close(normalCdf(1.96), 0.9750021048517795, 1e-14);
    close(normalCdf(0), 0.5, 0);
    close(normalQuantile(0.975), 1.959963984540054, 1e-14);
    // df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/π
    close(studentTQuantile(0.975, 1), Math.tan(Math.PI * 0.475), 1e-12);
    close(studentTCdf(3, 1), 0.5 + Math.atan(3) / Math.PI, 1e-14);
    // df = 2 has a closed form: F(t) = 1/2 + t / (2√(2 + t²)), so t(p) = (2p − 1)·√(2 / (1 − (2p − 1)²))
    close(studentTCdf(1.5, 2), 0.5 + 1.5 / (2 * Math.sqrt(2 + 2.25)), 1e-14);
    close(studentTQuantile(0.975, 2), 0.95 * Math.sqrt(2 / (1 - 0.95 ** 2)), 1e-13);
    close(logGamma(5), Math.log(24), 1e-15);
    close(logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-14);
  });

  it('agree with scipy over a grid of arguments', () => {
    const xs = [-38, -12, -8, -5, -3, -1.96, -1, -0.3, 0, 0.2, 0.7, 1.64, 2.5, 4, 7.5, 9];
    const ps = [1e-12, 1e-6, 0.001, 0.0125, 0.025, 0.1, 0.3, 0.5, 0.6, 0.9, 0.975, 0.99, 0.999999];
    const dfs = [1, 2, 3, 4.5, 7, 15, 31, 100, 1000];
    const ts = [-40, -6, -2.5, -1, -0.1, 0, 0.05, 0.8, 2.1, 3.3, 12, 200];
    const betas: [number, number, number][] = [
      [0.1, 0.5, 3],
      [0.5, 2.5, 0.5],
      [0.9, 8, 0.5],
      [0.999, 0.5, 50],
      [0.3, 40, 60],
    ];
    const want = scipy<{ cdf: number[]; ppf: number[]; tcdf: number[][]; tppf: number[][]; lg: number[]; b: number[] }>(
      `out = {
  'cdf': [float(st.norm.cdf(x)) for x in data['xs']],
  'ppf': [float(st.norm.ppf(p)) for p in data['ps']],
  'tcdf': [[float(st.t.cdf(t, d)) for t in data['ts']] for d in data['dfs']],
  'tppf': [[float(st.t.ppf(p, d)) for p in data['ps']] for d in data['dfs']],
  'lg': [float(scipy.special.gammaln(x)) for x in data['lg']],
  'b': [float(scipy.special.betainc(a, b, x)) for (x, a, b) in data['betas']],
}`,
      { xs, ps, dfs, ts, lg: [0.1, 0.7, 1, 1.5, 3.3, 10, 57.5, 300], betas },
    );
    xs.forEach((x, i) => close(normalCdf(x), want.cdf[i]!, 1e-12, 1e-300, `Φ(${x})`));
    // scipy's own t quantile is good to about 1e-9 (at df = 2, p = 0.0125 it is 1.1e-9 off the closed form)
    ps.forEach((p, i) => close(normalQuantile(p), want.ppf[i]!, 1e-12, 1e-14, `z(${p})`));
    dfs.forEach((d, j) => {
      ts.forEach((t, i) => close(studentTCdf(t, d), want.tcdf[j]![i]!, 1e-10, 1e-300, `T_${d}(${t})`));
      ps.forEach((p, i) => close(studentTQuantile(p, d), want.tppf[j]![i]!, 1e-8, 1e-12, `t_${d}(${p})`));
    });
    [0.1, 0.7, 1, 1.5, 3.3, 10, 57.5, 300].forEach((x, i) =>
      close(logGamma(x), want.lg[i]!, 1e-13, 1e-14, `lnΓ(${x})`),
    );
    betas.forEach(([x, a, b], i) => close(regularizedBeta(x, a, b), want.b[i]!, 1e-11, 1e-300, `I_${x}(${a}, ${b})`));
  });

  it('edges: 0 and 1 give infinite quantiles, NaN in gives NaN out', () => {
    expect(normalQuantile(0)).to.equal(-Infinity);
    expect(normalQuantile(1)).to.equal(Infinity);
    expect(studentTQuantile(1, 5)).to.equal(Infinity);
    expect(studentTQuantile(0.5, 5)).to.equal(0);
    expect(normalQuantile(1.5)).to.be.NaN;
    expect(studentTCdf(NaN, 3)).to.be.NaN;
    expect(studentTCdf(Infinity, 3)).to.equal(1);
  });
});
