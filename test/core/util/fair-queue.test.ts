import { expect } from 'chai';
import { FairQueue } from '../../../core/util/fair-queue';

describe('util/fair-queue', () => {
  it('serves lanes in turn, first come first served within a lane; a new lane waits behind those waiting', () => {
    const q = new FairQueue<string>();
    for (let i = 1; i <= 4; i++) q.push('a', `a${i}`);
    q.push('b', 'b1');
    q.push('b', 'b2');
    expect(q.shift()).to.equal('a1');
    q.push('c', 'c1');
    expect(q.size).to.equal(6);
    expect(q.drain()).to.deep.equal(['b1', 'a2', 'c1', 'b2', 'a3', 'a4']);
    expect(q.shift()).to.equal(undefined);
    expect(q.size).to.equal(0);
  });
  it('takes out a cancelled item, and an emptied lane loses its turn', () => {
    const q = new FairQueue<number>();
    const x = { n: 1 };
    const items = [1, 2, 3];
    q.push('a', items[0]!);
    q.push('b', items[1]!);
    q.push('a', items[2]!);
    expect(q.remove('b', 2)).to.equal(true);
    expect(q.remove('b', 2)).to.equal(false);
    expect(q.remove('z', x.n)).to.equal(false);
    expect(q.size).to.equal(2);
    expect(q.drain()).to.deep.equal([1, 3]);
  });
});
