import { expect } from 'chai';
import { Rng } from '../../../../core/util/rng';
import { chooseToken } from '../../../../plugins/policies/decoding/sampling';

const logits = Float32Array.from([1, 2, 0.5, -1]);
const lse = (xs: number[]) => Math.log(xs.reduce((s, x) => s + Math.exp(x), 0));

describe('plugins/policies/decoding/sampling', () => {
  it('greedy picks the argmax and reports its log-probability at T = 1', () => {
    const c = chooseToken(logits, 0, 4, { temperature: 0, topP: 1, rng: new Rng(1), stats: true }, new Float64Array(8));
    expect(c.token).to.equal(1);
    expect(c.logprob).to.be.closeTo(2 - lse([1, 2, 0.5, -1]), 1e-6);
  });

  it('log-probabilities, entropy and mean log-probability of the tempered distribution', () => {
    const T = 0.5;
    const scaled = Array.from(logits, (x) => x / T);
    const lz = lse(scaled);
    const c = chooseToken(logits, 0, 4, { temperature: T, topP: 1, rng: new Rng(3), stats: true }, new Float64Array(8));
    expect(c.logprob).to.be.closeTo(scaled[c.token]! - lz, 1e-6);
    const lp = scaled.map((x) => x - lz);
    expect(c.entropy).to.be.closeTo(-lp.reduce((s, l) => s + Math.exp(l) * l, 0), 1e-6);
    expect(c.meanLogprob).to.be.closeTo(lp.reduce((a, b) => a + b, 0) / 4, 1e-6);
  });

  it('samples in proportion to the tempered probabilities', () => {
    const rng = new Rng(11);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 20000; i++)
      counts[chooseToken(logits, 0, 4, { temperature: 1, topP: 1, rng, stats: false }, new Float64Array(8)).token]!++;
    const z = Math.exp(lse([1, 2, 0.5, -1]));
    [1, 2, 0.5, -1].forEach((l, v) => expect(counts[v]! / 20000).to.be.closeTo(Math.exp(l) / z, 0.015));
  });

  it("top-p keeps the smallest set reaching the mass; its log-probability stays the full distribution's", () => {
    // p ≈ [0.23, 0.63, 0.14, 0.03]: top-p 0.7 keeps tokens 1 and 0
    const rng = new Rng(5);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const c = chooseToken(logits, 0, 4, { temperature: 1, topP: 0.7, rng, stats: false }, new Float64Array(8));
      seen.add(c.token);
      expect(c.logprob).to.be.closeTo(logits[c.token]! - lse([1, 2, 0.5, -1]), 1e-6);
    }
    expect([...seen].sort()).to.deep.equal([0, 1]);
  });

  it('a banned token is never chosen', () => {
    const rng = new Rng(2);
    for (let i = 0; i < 500; i++)
      expect(
        chooseToken(logits, 0, 4, { temperature: 2, topP: 1, rng, stats: false }, new Float64Array(8), 1).token,
      ).to.not.equal(1);
    expect(
      chooseToken(logits, 0, 4, { temperature: 0, topP: 1, rng, stats: false }, new Float64Array(8), 1).token,
    ).to.equal(0);
  });

  it('reads the row at an offset and is deterministic per seed', () => {
    const rows = Float32Array.from([9, 9, 9, 9, ...logits]);
    const a = Array.from(
      { length: 20 },
      (_, i) =>
        chooseToken(rows, 4, 4, { temperature: 1, topP: 1, rng: new Rng(i), stats: false }, new Float64Array(8)).token,
    );
    const b = Array.from(
      { length: 20 },
      (_, i) =>
        chooseToken(rows, 4, 4, { temperature: 1, topP: 1, rng: new Rng(i), stats: false }, new Float64Array(8)).token,
    );
    expect(a).to.deep.equal(b);
  });
});
