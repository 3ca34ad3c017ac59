import { expect } from 'chai';
import { pretrainBatch } from '../../../core/trainer/pretrain';

describe('core/trainer/pretrain', () => {
  it('batches walk seeded epochs over the texts', () => {
    const a = [0, 1, 2].map((s) => pretrainBatch(5, s, 4, 9));
    expect(a.flat().slice(0, 5).sort()).to.deep.equal([0, 1, 2, 3, 4]);
    expect(pretrainBatch(5, 1, 4, 9)).to.deep.equal(a[1]);
    expect(pretrainBatch(5, 0, 4, 10)).to.not.deep.equal(a[0]);
  });
});
