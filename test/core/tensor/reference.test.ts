import { expect } from 'chai';
import { Graph } from '../../../core/tensor/graph';
import { HostTensor } from '../../../core/tensor/host';
import { evaluate } from '../../../core/tensor/reference';

describe('core/tensor/reference (host evaluator)', () => {
  it('computes hand-checked values', () => {
    const g = new Graph('hand');
    const a = g.input('a', 'float32', [2, 2]);
    const b = g.input('b', 'float32', [2, 2]);
    const feeds = { a: HostTensor.float([2, 2], [1, 2, 3, 4]), b: HostTensor.float([2, 2], [5, 6, 7, 8]) };
    const [mm, mmT, bc, sm, ls, rs] = evaluate(g, feeds, [
      g.matmul(a, b),
      g.matmul(a, b, { transA: true }),
      g.add(a, g.constant([10, 20], [2])),
      g.softmax(g.constant([0, Math.log(3)], [2])),
      g.logSoftmax(g.constant([0, 0, 0, 0], [4])),
      g.reduceSum(a, [0]),
    ]);
    expect(mm!.toArray()).to.deep.equal([19, 22, 43, 50]);
    expect(mmT!.toArray()).to.deep.equal([26, 30, 38, 44]);
    expect(bc!.toArray()).to.deep.equal([11, 22, 13, 24]);
    expect(sm!.toArray()[0]).to.be.closeTo(0.25, 1e-7); // log 3 is a float32 constant
    expect(ls!.toArray()[2]).to.be.closeTo(-Math.log(4), 1e-15);
    expect(rs!.toArray()).to.deep.equal([4, 6]);
  });

  it('layer normalization: zero mean, unit variance, then scale and shift', () => {
    const g = new Graph('ln');
    const x = g.input('x', 'float32', [1, 4]);
    const [y, mean, inv] = evaluate(
      g,
      { x: HostTensor.float([1, 4], [1, 2, 3, 4]) },
      g.layerNorm(x, g.constant([1, 1, 2, 2], [4]), g.constant([0, 0, 0, 1], [4]), 0),
    );
    const s = 1 / Math.sqrt(1.25);
    expect(mean!.toArray()).to.deep.equal([2.5]);
    expect(inv!.at(0)).to.be.closeTo(s, 1e-15);
    const want = [-1.5 * s, -0.5 * s, 2 * 0.5 * s, 2 * 1.5 * s + 1];
    y!.toArray().forEach((v, i) => expect(v).to.be.closeTo(want[i]!, 1e-14));
  });

  it('gathers rows and elements', () => {
    const g = new Graph('gather');
    const e = g.input('e', 'float32', [3, 2]);
    const ids = g.input('ids', 'int32', [2]);
    const [rows] = evaluate(
      g,
      { e: HostTensor.float([3, 2], [0, 1, 10, 11, 20, 21]), ids: HostTensor.int([2], [2, 0]) },
      [g.gather(e, ids)],
    );
    expect(rows!.toArray()).to.deep.equal([20, 21, 0, 1]);
    const idx = g.input('idx', 'int32', [3, 1]);
    const [el] = evaluate(
      g,
      { e: HostTensor.float([3, 2], [0, 1, 10, 11, 20, 21]), idx: HostTensor.int([3, 1], [1, 0, 1]) },
      [g.gatherElements(e, idx, 1)],
    );
    expect(el!.toArray()).to.deep.equal([1, 10, 21]);
  });

  it('checks feeds: missing, wrong dtype, wrong shape, out-of-range indices', () => {
    const g = new Graph('feeds');
    const x = g.input('x', 'float32', ['B', 2]);
    const y = g.input('y', 'float32', ['B', 2]);
    const z = g.add(x, y);
    expect(() => evaluate(g, { x: HostTensor.float([1, 2], [1, 2]) }, [z])).to.throw(/CORL_ERR_TENSOR_GRAPH.*"y"/);
    expect(() => evaluate(g, { x: HostTensor.float([1, 2], [1, 2]), y: HostTensor.int([1, 2], [1, 2]) }, [z])).to.throw(
      /CORL_ERR_TENSOR_SHAPE.*dtype float32/,
    );
    expect(() =>
      evaluate(g, { x: HostTensor.float([1, 2], [1, 2]), y: HostTensor.float([2, 2], [1, 2, 3, 4]) }, [z]),
    ).to.throw(/CORL_ERR_TENSOR_SHAPE.*\(B\) to be 1/);
    const e = g.input('e', 'float32', [3, 2]);
    const ids = g.input('ids', 'int32', [1]);
    expect(() =>
      evaluate(g, { e: HostTensor.float([3, 2], 0), ids: HostTensor.int([1], [3]) }, [g.gather(e, ids)]),
    ).to.throw(/indices in \[-3, 2\]/);
  });
});
