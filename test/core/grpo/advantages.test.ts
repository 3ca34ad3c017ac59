import { expect } from 'chai';
import { drGrpoAdvantages, groupMean, groupStd, grpoAdvantages, rlooAdvantages } from '../../../core/grpo/advantages';
import { isCorlError } from '../../../core/errors';

describe('core/grpo/advantages', () => {
  const group = { scale: 'group' as const, epsilon: 1e-6, unbiased: true };

  it('computes mean and (un)biased std by hand', () => {
    expect(groupMean([1, 0, 0, 1])).to.equal(0.5);
    // squared deviations 0.25 × 4 = 1; unbiased 1/3, biased 1/4
    expect(groupStd([1, 0, 0, 1], true)).to.be.closeTo(Math.sqrt(1 / 3), 1e-15);
    expect(groupStd([1, 0, 0, 1], false)).to.equal(0.5);
    expect(groupStd([7], true)).to.equal(0);
  });

  it('GRPO with group std: (r − 0.5) / (sqrt(1/3) + 1e-6)', () => {
    const [a] = grpoAdvantages([[1, 0, 0, 1]], group);
    const expected = 0.5 / (0.5773502691896258 + 1e-6); // 0.8660239...
    expect(a![0]).to.be.closeTo(expected, 1e-12);
    expect(a![1]).to.be.closeTo(-expected, 1e-12);
    expect(a!.reduce((s, v) => s + v, 0)).to.be.closeTo(0, 1e-12);
  });

  it('gives exactly zero advantage to zero-std and one-sample groups', () => {
    const out = grpoAdvantages([[1, 1, 1], [0, 0], [0.1, 0.1, 0.1], [3]], group);
    expect(out).to.deep.equal([[0, 0, 0], [0, 0], [0, 0, 0], [0]]);
    expect(rlooAdvantages([[1, 1], [5]])).to.deep.equal([[0, 0], [0]]);
    expect(drGrpoAdvantages([[2, 2]])).to.deep.equal([[0, 0]]);
  });

  it('batch scaling divides every group by the std of the whole batch', () => {
    // batch [1,0,1,1]: mean 0.75, unbiased var = (0.0625+0.5625+0.0625+0.0625)/3 = 0.25 → std 0.5
    const out = grpoAdvantages(
      [
        [1, 0],
        [1, 1],
      ],
      { scale: 'batch', epsilon: 0, unbiased: true },
    );
    expect(out[0]![0]).to.be.closeTo(0.5 / 0.5, 1e-12);
    expect(out[0]![1]).to.be.closeTo(-0.5 / 0.5, 1e-12);
    expect(out[1]).to.deep.equal([0, 0]);
  });

  it('scale none (Dr. GRPO) only centres', () => {
    expect(grpoAdvantages([[1, 0, 0, 0]], { scale: 'none', epsilon: 1e-6, unbiased: true })[0]).to.deep.equal([
      0.75, -0.25, -0.25, -0.25,
    ]);
    expect(drGrpoAdvantages([[1, 0, 0, 0]])[0]).to.deep.equal([0.75, -0.25, -0.25, -0.25]);
  });

  it('RLOO: r − mean of the others = n/(n−1)(r − mean)', () => {
    const [a] = rlooAdvantages([[1, 0, 0, 1]]);
    // r=1: 1 − (0+0+1)/3 = 2/3; r=0: 0 − 2/3 = −2/3
    expect(a![0]).to.be.closeTo(2 / 3, 1e-15);
    expect(a![1]).to.be.closeTo(-2 / 3, 1e-15);
  });

  it('refuses NaN and infinite rewards with a coded error naming the place', () => {
    for (const bad of [NaN, Infinity, -Infinity]) {
      try {
        grpoAdvantages(
          [
            [0, 1],
            [1, bad],
          ],
          group,
        );
        expect.fail('should throw');
      } catch (e) {
        expect(isCorlError(e, 'CORL_ERR_GRPO_NONFINITE')).to.equal(true);
        expect((e as Error).message).to.contain('group 1, completion 1');
      }
    }
    expect(() => rlooAdvantages([[NaN, 1]])).to.throw(/CORL_ERR_GRPO_NONFINITE/);
  });
});
