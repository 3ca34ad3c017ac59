import { expect } from 'chai';
import { affineIndex, broadcastIndex } from '../../../../core/tensor/ops/kernels';

describe('tensor/ops/kernels: index maps', () => {
  it('affineIndex: base + Σ c_d·w_d over the output in row-major order, by hand', () => {
    // a 2×3 output read row-major from a 2×3 source: the identity
    expect([...affineIndex([2, 3], [3, 1])]).to.deep.equal([0, 1, 2, 3, 4, 5]);
    // its transpose: element (i, j) is source element j·2 + i of a 3×2 source
    expect([...affineIndex([2, 3], [1, 2])]).to.deep.equal([0, 2, 4, 1, 3, 5]);
    // the 2×2 block at (1, 1) of a 3×4 source (strides 4, 1): base 1·4 + 1·1 = 5
    expect([...affineIndex([2, 2], [4, 1], 5)]).to.deep.equal([5, 6, 9, 10]);
    expect([...affineIndex([], [])]).to.deep.equal([0]); // a scalar: one element
    expect([...affineIndex([0, 3], [3, 1])]).to.deep.equal([]);
  });

  it('broadcastIndex: size-1 and missing dimensions repeat the source, by hand', () => {
    expect([...broadcastIndex([3], [2, 3])]).to.deep.equal([0, 1, 2, 0, 1, 2]);
    expect([...broadcastIndex([2, 1], [2, 3])]).to.deep.equal([0, 0, 0, 1, 1, 1]);
    expect([...broadcastIndex([1], [2, 2])]).to.deep.equal([0, 0, 0, 0]);
    expect([...broadcastIndex([2, 1, 2], [2, 3, 2])]).to.deep.equal([0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3]);
    expect([...broadcastIndex([2, 3], [2, 3])]).to.deep.equal([0, 1, 2, 3, 4, 5]);
  });
});
