import { expect } from 'chai';
import { agreement, agreementCounts, agreementFromCounts } from '../../../core/metrics/agreement';

describe('core/metrics/agreement', () => {
  it('worked example: N = 10, a = 4, b = 2, c′ = 1, d = 3 (2 of them the same wrong answer)', () => {
    const A = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0].map(Boolean);
    const B = [1, 1, 1, 1, 0, 0, 1, 0, 0, 0].map(Boolean);
    const same = [0, 0, 0, 0, 0, 0, 0, 1, 1, 0].map(Boolean);
    const r = agreement(A, B, same);
    expect(r.counts).to.deep.equal({ a: 4, b: 2, c: 1, d: 3, dSame: 2 });
    // p_o = 0.7; p_A = 0.6; p_B = 0.5; p_e = 0.3 + 0.2 = 0.5; κ = 0.2 / 0.5 = 0.4
    expect(r.kappa).to.be.closeTo(0.4, 1e-12);
    expect(r.complementarity).to.be.closeTo(0.3, 1e-12);
    expect(r.sameWrong).to.be.closeTo(0.2, 1e-12);
    expect(r.coverage).to.be.closeTo(0.7, 1e-12);
    expect(r.accuracyA).to.equal(0.6);
    expect(r.accuracyB).to.equal(0.5);
  });

  it('identical models have κ = 1 and no complementarity; opposite ones κ = −1', () => {
    const A = [true, false, true, false];
    expect(agreement(A, A).kappa).to.equal(1);
    expect(agreement(A, A).complementarity).to.equal(0);
    expect(
      agreement(
        A,
        A.map((x) => !x),
      ).kappa,
    ).to.be.closeTo(-1, 1e-12);
    expect(
      agreement(
        A,
        A.map((x) => !x),
      ).coverage,
    ).to.equal(1);
  });

  it('independent models have κ ≈ 0', () => {
    // A right on the first half, B right on every other problem: the table is 25/25/25/25
    const A = Array.from({ length: 100 }, (_, i) => i < 50);
    const B = Array.from({ length: 100 }, (_, i) => i % 2 === 0);
    expect(agreement(A, B).kappa).to.be.closeTo(0, 1e-12);
  });

  it('p_e = 1 (both always right) gives κ = 1; an empty table gives zeros', () => {
    expect(agreementFromCounts({ a: 5, b: 0, c: 0, d: 0, dSame: 0 }).kappa).to.equal(1);
    expect(agreementFromCounts({ a: 0, b: 0, c: 0, d: 0, dSame: 0 }).n).to.equal(0);
  });

  it('rejects inputs of different lengths', () => {
    expect(() => agreementCounts([true], [true, false])).to.throw(RangeError);
  });
});
