import { expect } from 'chai';
import { gradients } from '../../../core/tensor/autodiff';
import { Graph } from '../../../core/tensor/graph';

describe('core/tensor/graph (builder and shape inference)', () => {
  it('concatenates along a symbolic axis only when the result size is named (a KV cache), and refuses to differentiate it', () => {
    const g = new Graph('cache');
    const past = g.input('past', 'float32', ['B', 2, 'P', 4]);
    const now = g.input('now', 'float32', ['B', 2, 'T', 4]);
    expect(() => g.concat([past, now], 2)).to.throw(/fixed sizes along the Concat axis \(or a named result size\)/);
    const all = g.concat([past, now], 2, 'S');
    expect(all.shape).to.deep.equal(['B', 2, 'S', 4]);
    expect(
      g.concat([g.input('a', 'float32', [2, 3]), g.input('b', 'float32', [2, 5])], 1, 'ignored').shape,
    ).to.deep.equal([2, 8]);
    expect(() => gradients(g.sumAll(all), [past])).to.throw(/fixed sizes along the Concat axis to differentiate/);
  });

  it('infers shapes through a small attention block', () => {
    const g = new Graph('attn');
    const x = g.input('x', 'float32', ['B', 'T', 8]);
    const w = g.input('w', 'float32', [8, 24]);
    const [q, k, v] = g.split(g.matmul(x, w), 2, [8, 8, 8]);
    const heads = (t: typeof x) => g.transpose(g.reshape(t, [0, 0, 2, 4]), [0, 2, 1, 3]);
    const s = g.matmul(heads(q!), heads(k!), { transB: true });
    expect(s.shape).to.deep.equal(['B', 2, 'T', 'T']);
    const o = g.reshape(g.transpose(g.matmul(g.softmax(s), heads(v!)), [0, 2, 1, 3]), [0, 0, 8]);
    expect(o.shape).to.deep.equal(['B', 'T', 8]);
    expect(g.reshape(o, [-1, 8]).shape).to.deep.equal(['B*T', 8]);
    expect(g.reduceSum(o, [1]).shape).to.deep.equal(['B', 8]);
    expect(g.reduceSum(o, [-1], true).shape).to.deep.equal(['B', 'T', 1]);
    expect(g.gather(g.input('e', 'float32', [10, 8]), g.input('ids', 'int32', ['B', 'T'])).shape).to.deep.equal([
      'B',
      'T',
      8,
    ]);
    const [y, mean, inv] = g.layerNorm(o, g.input('s', 'float32', [8]), g.input('b', 'float32', [8]));
    expect([y!.shape, mean!.shape, inv!.shape]).to.deep.equal([
      ['B', 'T', 8],
      ['B', 'T', 1],
      ['B', 'T', 1],
    ]);
  });

  it('names the operator and both shapes on a mismatch', () => {
    const g = new Graph('bad');
    const a = g.input('a', 'float32', ['B', 8]);
    const b = g.input('b', 'float32', [7, 3]);
    expect(() => g.matmul(a, b)).to.throw(
      /CORL_ERR_TENSOR_SHAPE: bad: MatMul\(float32\[B, 8\], float32\[7, 3\]\).*inner dimensions.*8 vs 7/,
    );
    expect(() => g.add(a, g.input('c', 'float32', ['T', 8]))).to.throw(/Add.*B vs T/);
    expect(() => g.reshape(a, [3, 5])).to.throw(/element count/);
    expect(() => g.reshape(a, [-1, 3])).to.throw(/divide/);
    expect(() => g.reshape(a, [-1, -1])).to.throw(/at most one -1/);
    expect(() => g.transpose(a, [0, 0])).to.throw(/permutation/);
    expect(() => g.squeeze(a, [1])).to.throw(/to be 1/);
    expect(() => g.concat([a, g.input('d', 'float32', ['B', 'T'])], 1)).to.throw(/fixed sizes along the Concat axis/);
    expect(() => g.split(a, 1, [3, 4])).to.throw(/add up/);
    expect(() => g.gather(a, a)).to.throw(/integer indices/);
    expect(() => g.add(a, g.input('i', 'int32', ['B', 8]))).to.throw(/share a dtype/);
    expect(() => g.softmax(a, 2)).to.throw(/axis in \[-2, 1\]/);
    expect(() => g.layerNorm(a, g.input('s', 'float32', [4]), g.input('sb', 'float32', [8]))).to.throw(
      /scale of shape \[8\]/,
    );
  });

  it('refuses duplicate inputs, foreign tensors and unknown operators', () => {
    const g = new Graph('one');
    const a = g.input('a', 'float32', [2]);
    expect(() => g.input('a', 'float32', [2])).to.throw(/CORL_ERR_TENSOR_GRAPH.*"a" twice/);
    const h = new Graph('two');
    expect(() => h.neg(a)).to.throw(/CORL_ERR_TENSOR_GRAPH.*from graph "two", got one from "one"/);
    expect(() => g.op('Frobnicate', [a])).to.throw(/CORL_ERR_TENSOR_GRAPH.*Frobnicate/);
  });

  it('shares scalar constants', () => {
    const g = new Graph('s');
    expect(g.scalar(0.5)).to.equal(g.scalar(0.5));
    expect(g.scalar(0.5)).to.not.equal(g.scalar(0.25));
  });
});
