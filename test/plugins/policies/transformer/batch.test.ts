import { expect } from 'chai';
import {
  makeBatch,
  microBatches,
  trainedLogprobs,
  type Sequence,
} from '../../../../plugins/policies/transformer/batch';

const seqs: Sequence[] = [
  { ids: [0, 5, 6, 7, 8], promptLength: 3, weight: 0.5, old: [-1, -2], advantage: 1 },
  { ids: [0, 5, 9], promptLength: 2, weight: 0.25, old: [-3], advantage: -1 },
];

describe('plugins/policies/transformer/batch', () => {
  it('pads rows, shifts targets and weights only the completion targets', () => {
    const { batch } = makeBatch(seqs, [0, 1], true);
    expect(batch.T).to.equal(4);
    expect(Array.from(batch.ids)).to.deep.equal([0, 5, 6, 7, 0, 5, 0, 0]);
    expect(Array.from(batch.targets)).to.deep.equal([5, 6, 7, 8, 5, 9, 0, 0]);
    expect(Array.from(batch.weights)).to.deep.equal([0, 0, 0.5, 0.5, 0, 0.25, 0, 0]);
    expect(Array.from(batch.old!)).to.deep.equal([0, 0, -1, -2, 0, -3, 0, 0]);
    expect(Array.from(batch.advantages!)).to.deep.equal([1, -1]);
  });

  it('groups by length within a token budget and reads log-probabilities back per sequence', () => {
    const many: Sequence[] = [5, 2, 5, 3].map((n, i) => ({
      ids: Array.from({ length: n }, (_, k) => k),
      promptLength: 1,
      weight: 1,
      old: new Array(n - 1).fill(0),
      advantage: i,
    }));
    const mbs = microBatches(many, 8, true);
    expect(mbs.map((m) => m.members)).to.deep.equal([
      [1, 3],
      [0, 2],
    ]);
    const values = mbs.map((m) => Float32Array.from({ length: m.batch.rows * m.batch.T }, (_, i) => i));
    const lp = trainedLogprobs(many, mbs, values);
    expect(lp[1]).to.deep.equal([0]);
    expect(lp[3]).to.deep.equal([2, 3]);
    expect(lp[2]).to.deep.equal([4, 5, 6, 7]);
    expect(microBatches(many, 1, true).length).to.equal(4);
  });
});
