import { expect } from 'chai';
import { batchAt } from '../../../core/trainer/run-context';

const train = Array.from({ length: 5 }, (_, i) => ({ id: `p${i}`, prompt: `q${i}` }));

describe('core/trainer/ctx batchAt', () => {
  it('is a pure function of the step: every agent and every resume sees the same problems', () => {
    expect(batchAt(train, 3, 2, 7)).to.deep.equal(batchAt(train, 3, 2, 7));
    expect(batchAt(train, 3, 2, 8)).to.not.deep.equal(batchAt(train, 3, 2, 7));
  });
  it('walks whole epochs: each epoch is a permutation of the train split', () => {
    const stream = [0, 1, 2, 3, 4].flatMap((s) => batchAt(train, s, 2, 1).map((p) => p.id)); // 10 = 2 epochs
    expect([...stream.slice(0, 5)].sort()).to.deep.equal(['p0', 'p1', 'p2', 'p3', 'p4']);
    expect([...stream.slice(5)].sort()).to.deep.equal(['p0', 'p1', 'p2', 'p3', 'p4']);
    expect(stream.slice(0, 5)).to.not.deep.equal(stream.slice(5)); // reshuffled per epoch
  });
  it('a batch larger than the split wraps into the next epoch', () => {
    expect(batchAt(train, 0, 7, 1).length).to.equal(7);
  });
});
