import { expect } from 'chai';
import {
  bindShape,
  broadcastShapes,
  dim,
  dimDiv,
  dimEq,
  dimMul,
  resolveDim,
  shapeSize,
} from '../../../core/tensor/dim';

describe('core/tensor/dim', () => {
  it('products are canonical, so equality is structural', () => {
    expect(dimMul('T', 'B')).to.equal('B*T');
    expect(dimMul(2, dimMul('B', 3))).to.equal('6*B');
    expect(dimEq('T*B', 'B*T')).to.equal(true);
    expect(dimEq('B', 'T')).to.equal(false);
    expect(shapeSize(['B', 'T', 4])).to.equal('4*B*T');
    expect(shapeSize([2, 3])).to.equal(6);
    expect(dim('T*B*2')).to.equal('2*B*T');
  });

  it('division is exact or undefined', () => {
    expect(dimDiv('4*B*T', 4)).to.equal('B*T');
    expect(dimDiv('4*B*T', 'T')).to.equal('4*B');
    expect(dimDiv('B*T', 'H')).to.equal(undefined);
    expect(dimDiv(6, 4)).to.equal(undefined);
  });

  it('binds symbols from concrete shapes and checks them', () => {
    const b = new Map<string, number>();
    bindShape(['B', 'T', 4], [2, 3, 4], b, 'x');
    expect(resolveDim('B*T', b)).to.equal(6);
    expect(() => bindShape(['B', 5], [3, 5], b, 'y')).to.throw(
      /CORL_ERR_TENSOR_SHAPE.*y dimension 0 \(B\) to be 2.*got 3/,
    );
    expect(() => bindShape(['B', 5], [2, 6], b, 'y')).to.throw(/CORL_ERR_TENSOR_SHAPE.*dimension 1 to be 5/);
    expect(() => bindShape(['B'], [2, 6], b, 'z')).to.throw(/rank 1/);
    expect(() => resolveDim('H', b)).to.throw(/symbol H/);
  });

  it('broadcasts only literal ones', () => {
    expect(broadcastShapes(['B', 1, 4], [3, 1], 'x')).to.deep.equal(['B', 3, 4]);
    expect(broadcastShapes(['B', 'T'], ['T'], 'x')).to.deep.equal(['B', 'T']);
    expect(() => broadcastShapes(['B', 4], ['T', 4], 'Add')).to.throw(/CORL_ERR_TENSOR_SHAPE.*Add.*B vs T/);
    expect(() => dim('B-1')).to.throw(/CORL_ERR_TENSOR_SHAPE/);
    expect(() => dim(-2)).to.throw(/non-negative/);
  });
});
