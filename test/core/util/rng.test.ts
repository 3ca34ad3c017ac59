import { expect } from 'chai';
import { mixSeed, Rng } from '../../../core/util/rng';

describe('core/util/rng', () => {
  it('is deterministic per seed and differs between seeds', () => {
    const a = new Rng(42),
      b = new Rng(42),
      c = new Rng(43);
    const xs = Array.from({ length: 5 }, () => a.nextU32());
    expect(Array.from({ length: 5 }, () => b.nextU32())).to.deep.equal(xs);
    expect(Array.from({ length: 5 }, () => c.nextU32())).to.not.deep.equal(xs);
  });

  it('saves and restores its whole state', () => {
    const a = new Rng(7);
    a.next();
    a.next();
    const s = a.getState();
    const tail = [a.next(), a.next(), a.normal()];
    const b = new Rng(0);
    b.setState(s);
    expect([b.next(), b.next(), b.normal()]).to.deep.equal(tail);
    expect(() => b.setState([1, 2])).to.throw(TypeError);
  });

  it('draws uniforms in [0, 1) with the right mean, and fair integers', () => {
    const r = new Rng(1);
    let sum = 0;
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 40000; i++) {
      const u = r.next();
      expect(u).to.be.at.least(0).and.below(1);
      sum += u;
      counts[r.int(4)]!++;
    }
    expect(sum / 40000).to.be.closeTo(0.5, 0.01);
    for (const c of counts) expect(c / 40000).to.be.closeTo(0.25, 0.01);
  });

  it('normal samples have mean 0 and variance 1', () => {
    const r = new Rng(3);
    const xs = Array.from({ length: 40000 }, () => r.normal());
    const m = xs.reduce((s, x) => s + x, 0) / xs.length;
    const v = xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length;
    expect(m).to.be.closeTo(0, 0.02);
    expect(v).to.be.closeTo(1, 0.03);
  });

  it('shuffles into a permutation without touching the input', () => {
    const items = [1, 2, 3, 4, 5, 6];
    const s = new Rng(9).shuffle(items);
    expect(items).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect([...s].sort()).to.deep.equal(items);
    expect(new Rng(9).shuffle(items)).to.deep.equal(s);
  });

  it('mixSeed depends on every part and its order, including large integers and strings', () => {
    expect(mixSeed(1, 2)).to.not.equal(mixSeed(2, 1));
    expect(mixSeed(1, 'train', 3)).to.not.equal(mixSeed(1, 'eval', 3));
    expect(mixSeed(2 ** 40 + 1)).to.not.equal(mixSeed(1));
    expect(mixSeed(5, 'x')).to.equal(mixSeed(5, 'x'));
    expect(mixSeed(5))
      .to.be.a('number')
      .and.at.least(0)
      .and.below(2 ** 32);
  });
});
