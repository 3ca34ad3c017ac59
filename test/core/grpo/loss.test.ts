import { expect } from 'chai';
import type { LossType } from '../../../core/contracts/policy';
import {
  aggregationWeights,
  clippedRatio,
  clippedSurrogate,
  grpoLoss,
  isClipped,
  klPenalty,
  ratio,
} from '../../../core/grpo/loss';

const clip = { clipLow: 0.2, clipHigh: 0.2, beta: 0 };

describe('core/grpo/loss', () => {
  it('ratio, clip and k3 KL by hand', () => {
    expect(ratio(-1, -1.1)).to.be.closeTo(Math.exp(0.1), 1e-15);
    expect(clippedRatio(1.3, 0.2, 0.2)).to.equal(1.2);
    expect(clippedRatio(0.5, 0.2, 0.28)).to.equal(0.8);
    expect(clippedRatio(1.25, 0.2, 0.28)).to.equal(1.25); // clip-higher leaves it
    // logp −1, ref −1.5: d = −0.5 → e^−0.5 + 0.5 − 1 = 0.1065306597
    expect(klPenalty(-1, -1.5)).to.be.closeTo(0.10653065971263342, 1e-15);
    expect(klPenalty(-2, -2)).to.equal(0);
  });

  it('the surrogate takes the pessimistic branch', () => {
    const l13 = Math.log(1.3);
    // A > 0, ρ = 1.3: −min(1.3, 1.2) = −1.2, clipped
    expect(clippedSurrogate(l13, 0, 1, clip)).to.be.closeTo(-1.2, 1e-12);
    expect(isClipped(l13, 0, 1, clip)).to.equal(true);
    // A < 0, ρ = 1.3: −min(−1.3, −1.2) = 1.3, not clipped (gradient flows)
    expect(clippedSurrogate(l13, 0, -1, clip)).to.be.closeTo(1.3, 1e-12);
    expect(isClipped(l13, 0, -1, clip)).to.equal(false);
    // A < 0, ρ = 0.5: −min(−0.5, −0.8) = 0.8, clipped
    expect(clippedSurrogate(Math.log(0.5), 0, -1, clip)).to.be.closeTo(0.8, 1e-12);
  });

  it('a two-token sequence under grpo aggregation', () => {
    // ρ = e^{0.1}, e^{−0.1}, both inside the clip; loss = −(e^{0.1} + e^{−0.1}) / 2
    const r = grpoLoss(
      { logprobs: [[-1, -2]], oldLogprobs: [[-1.1, -1.9]], advantages: [1] },
      { ...clip, type: 'grpo', maxCompletionLength: 8 },
    );
    expect(r.loss).to.be.closeTo(-(Math.exp(0.1) + Math.exp(-0.1)) / 2, 1e-12);
    expect(r.clipFraction).to.equal(0);
    expect(r.tokens).to.equal(2);
  });

  describe('aggregations of token losses [−1] and [0.5, 0.5, 0.5]', () => {
    // ρ = 1 everywhere, so ℓ_t = −Â: sequence 1 Â = 1 (L = 1), sequence 2 Â = −0.5 (L = 3)
    const inputs = { logprobs: [[-1], [-1, -2, -3]], oldLogprobs: [[-1], [-1, -2, -3]], advantages: [1, -0.5] };
    const cases: [LossType, number, number | undefined][] = [
      ['grpo', (-1 / 1 + 1.5 / 3) / 2, undefined], // mean of sequence means = −0.25
      ['bnpo', (-1 + 1.5) / 4, undefined], // token mean = 0.125
      ['dr_grpo', (-1 + 1.5) / (2 * 4), undefined], // sum / (B · Lmax) with Lmax = 4
      ['dapo', (-1 + 1.5) / 10, 10], // sum / global tokens
    ];
    for (const [type, expected, globalTokens] of cases) {
      it(`${type} = ${expected}`, () => {
        const r = grpoLoss(inputs, { ...clip, type, maxCompletionLength: 4, globalTokens });
        expect(r.loss).to.be.closeTo(expected, 1e-12);
      });
    }
    it('weights match the definitions', () => {
      expect(aggregationWeights([1, 3], 'grpo', 4)).to.deep.equal([0.5, 1 / 6]);
      expect(aggregationWeights([1, 3], 'bnpo', 4)).to.deep.equal([0.25, 0.25]);
      expect(aggregationWeights([1, 3], 'dr_grpo', 4)).to.deep.equal([0.125, 0.125]);
      expect(aggregationWeights([0, 0], 'grpo', 4)).to.deep.equal([0.5, 0.5]);
    });
  });

  describe('bnpo with micro-batches (TRL: each micro-batch over its own tokens, then averaged)', () => {
    // Four sequences of lengths 1, 3, 2, 2 with ρ = 1, so ℓ_t = −Â: Â = 1, −0.5, 2, 0.
    const inputs = {
      logprobs: [[-1], [-1, -1, -1], [-1, -1], [-1, -1]],
      oldLogprobs: [[-1], [-1, -1, -1], [-1, -1], [-1, -1]],
      advantages: [1, -0.5, 2, 0],
    };
    it('two micro-batches of two: ((−1 + 1.5)/4 + (−4 + 0)/4) / 2 = −0.4375', () => {
      const r = grpoLoss(inputs, { ...clip, type: 'bnpo', maxCompletionLength: 4, microBatch: 2 });
      expect(r.loss).to.be.closeTo(((-1 + 1.5) / 4 + (-4 + 0) / 4) / 2, 1e-12);
      expect(aggregationWeights([1, 3, 2, 2], 'bnpo', 4, undefined, 2)).to.deep.equal([1 / 8, 1 / 8, 1 / 8, 1 / 8]);
    });
    it('micro-batches of unequal token counts weigh their tokens differently; a short last micro-batch still counts as one', () => {
      // [1, 3] | [2]: M = 2; weights 1/(2·4) and 1/(2·2).
      expect(aggregationWeights([1, 3, 2], 'bnpo', 4, undefined, 2)).to.deep.equal([1 / 8, 1 / 8, 1 / 4]);
      // m = 1: each sequence over its own length, averaged = grpo's mean of sequence means.
      expect(aggregationWeights([1, 3, 2], 'bnpo', 4, undefined, 1)).to.deep.equal(
        aggregationWeights([1, 3, 2], 'grpo', 4),
      );
    });
    it("without micro-batches (0, or at least the batch) it is the whole batch's token mean, dapo's value on one micro-batch", () => {
      const whole = grpoLoss(inputs, { ...clip, type: 'bnpo', maxCompletionLength: 4 }).loss;
      expect(whole).to.be.closeTo((-1 + 1.5 - 4 + 0) / 8, 1e-12);
      expect(grpoLoss(inputs, { ...clip, type: 'bnpo', maxCompletionLength: 4, microBatch: 0 }).loss).to.equal(whole);
      expect(grpoLoss(inputs, { ...clip, type: 'bnpo', maxCompletionLength: 4, microBatch: 4 }).loss).to.equal(whole);
      expect(grpoLoss(inputs, { ...clip, type: 'dapo', maxCompletionLength: 4 }).loss).to.equal(whole);
    });
    it('the gradient is the per-token weight times −Â', () => {
      const r = grpoLoss(inputs, { ...clip, type: 'bnpo', maxCompletionLength: 4, microBatch: 2 });
      expect(r.gradLogprobs).to.deep.equal([[-1 / 8], [0.5 / 8, 0.5 / 8, 0.5 / 8], [-2 / 8, -2 / 8], [-0, -0]]);
    });
  });

  it('adds β·KL per token with a reference', () => {
    const r = grpoLoss(
      { logprobs: [[-1]], oldLogprobs: [[-1]], refLogprobs: [[-1.5]], advantages: [0] },
      { ...clip, beta: 0.1, type: 'bnpo', maxCompletionLength: 1 },
    );
    expect(r.loss).to.be.closeTo(0.1 * 0.10653065971263342, 1e-15);
    expect(r.kl).to.be.closeTo(0.10653065971263342, 1e-15);
    expect(r.policyLoss).to.equal(-0);
  });

  for (const type of ['grpo', 'bnpo', 'dr_grpo', 'dapo'] as LossType[]) {
    it(`∂loss/∂logπθ agrees with central finite differences (${type}, clip-higher, β > 0)`, () => {
      const old = [
        [-1.2, -0.7, -2.0],
        [-0.3, -1.5],
      ];
      const ref = [
        [-1.0, -0.9, -2.2],
        [-0.5, -1.1],
      ];
      // ratios chosen on both sides of the clip and inside it, for both signs of Â
      const lp = [
        [-1.2 + Math.log(1.5), -0.7 + Math.log(0.95), -2.0 + Math.log(0.6)],
        [-0.3 + Math.log(1.1), -1.5 + Math.log(0.7)],
      ];
      const adv = [0.8, -1.3];
      const o = {
        clipLow: 0.2,
        clipHigh: 0.28,
        beta: 0.05,
        type,
        maxCompletionLength: 5,
        globalTokens: type === 'dapo' ? 9 : undefined,
      };
      const f = (x: number[][]): number =>
        grpoLoss({ logprobs: x, oldLogprobs: old, refLogprobs: ref, advantages: adv }, o).loss;
      const { gradLogprobs } = grpoLoss({ logprobs: lp, oldLogprobs: old, refLogprobs: ref, advantages: adv }, o);
      const h = 1e-6;
      for (let i = 0; i < lp.length; i++) {
        for (let t = 0; t < lp[i]!.length; t++) {
          const plus = lp.map((s) => s.slice());
          const minus = lp.map((s) => s.slice());
          plus[i]![t]! += h;
          minus[i]![t]! -= h;
          const fd = (f(plus) - f(minus)) / (2 * h);
          expect(gradLogprobs[i]![t]).to.be.closeTo(fd, 1e-7);
        }
      }
    });
  }

  it('refuses NaN/∞ log-probabilities and advantages, and misaligned inputs, with codes', () => {
    const o = { ...clip, type: 'bnpo' as const, maxCompletionLength: 2 };
    expect(() => grpoLoss({ logprobs: [[NaN]], oldLogprobs: [[-1]], advantages: [1] }, o)).to.throw(
      /CORL_ERR_GRPO_NONFINITE.*sequence 0, token 0/,
    );
    expect(() => grpoLoss({ logprobs: [[-1]], oldLogprobs: [[-Infinity]], advantages: [1] }, o)).to.throw(
      /CORL_ERR_GRPO_NONFINITE.*old log-probability/,
    );
    expect(() => grpoLoss({ logprobs: [[-1]], oldLogprobs: [[-1]], advantages: [Infinity] }, o)).to.throw(
      /CORL_ERR_GRPO_NONFINITE.*advantage/,
    );
    expect(() => grpoLoss({ logprobs: [[-1, -1]], oldLogprobs: [[-1]], advantages: [1] }, o)).to.throw(
      /CORL_ERR_GRPO_SHAPE/,
    );
    expect(() => grpoLoss({ logprobs: [[-1]], oldLogprobs: [[-1]], advantages: [1, 2] }, o)).to.throw(
      /CORL_ERR_GRPO_SHAPE/,
    );
    expect(() => grpoLoss({ logprobs: [[-1]], oldLogprobs: [[-1]], advantages: [1] }, { ...o, beta: 0.1 })).to.throw(
      /CORL_ERR_GRPO_SHAPE.*reference/,
    );
  });
});
