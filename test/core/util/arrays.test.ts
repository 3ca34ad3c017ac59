import { expect } from 'chai';
import { mapPacked } from '../../../core/util/arrays';

describe('core/util/arrays', () => {
  it('mapPacked maps like Array.prototype.map: values in order, with their index', () => {
    expect(mapPacked(['a', 'bb', 'ccc'], (s, i) => `${i}:${s.length}`)).to.deep.equal(['0:1', '1:2', '2:3']);
    expect(mapPacked([], () => 1)).to.deep.equal([]);
    const src = [1, 2, 3];
    const out = mapPacked(src, (x) => x * 10);
    expect(out).to.deep.equal([10, 20, 30]);
    expect(out).to.not.equal(src);
    expect(src).to.deep.equal([1, 2, 3]);
  });
});
