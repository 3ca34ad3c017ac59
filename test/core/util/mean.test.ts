import { expect } from 'chai';
import { finiteMean, mean } from '../../../core/util/mean';

describe('core/util/mean (the one mean rule: the empty mean is the caller’s choice)', () => {
  it('sums in order and divides by the count', () => {
    expect(mean([1, 2, 6], 0)).to.equal(3);
    expect(mean([0.1, 0.2, 0.3], 0)).to.equal((0.1 + 0.2 + 0.3) / 3);
  });

  it('an empty list gives exactly the value the call site chose', () => {
    expect(mean([], 0)).to.equal(0);
    expect(mean([], NaN)).to.be.NaN;
    expect(finiteMean([], 0)).to.equal(0);
    expect(finiteMean([NaN, Infinity], NaN)).to.be.NaN;
  });

  it('mean keeps a non-finite value; finiteMean skips it', () => {
    expect(mean([1, NaN], 0)).to.be.NaN;
    expect(finiteMean([1, NaN, 3, -Infinity], 0)).to.equal(2);
  });
});
