import { expect } from 'chai';
import { gradients } from '../../../core/tensor/autodiff';
import { Graph, type Tensor } from '../../../core/tensor/graph';
import { HostTensor } from '../../../core/tensor/host';
import { evaluate } from '../../../core/tensor/reference';
import { compile, GraphSession } from '../../../core/tensor/session';
import { checkGradients, checkOnnx, randn, type Case } from '../../fixtures/gradcheck';

/** One case per operator (and per broadcasting pattern), each checked by finite differences and against onnxruntime. */
function cases(): [string, () => Case][] {
  const unary =
    (op: (g: Graph, x: Tensor) => Tensor, shift = 0, scale = 1): (() => Case) =>
    () => {
      const g = new Graph('unary');
      const x = g.input('x', 'float32', ['B', 5]);
      return { graph: g, feeds: { x: randn([3, 5], 1, scale, shift) }, out: op(g, x) };
    };
  const binary =
    (
      op: (g: Graph, a: Tensor, b: Tensor) => Tensor,
      sa: (number | string)[],
      sb: (number | string)[],
      va: number[],
      vb: number[],
      shiftB = 0,
    ): (() => Case) =>
    () => {
      const g = new Graph('binary');
      const a = g.input('a', 'float32', sa);
      const b = g.input('b', 'float32', sb);
      return { graph: g, feeds: { a: randn(va, 2), b: randn(vb, 3, 1, shiftB) }, out: op(g, a, b) };
    };
  return [
    ['Add (same shape)', binary((g, a, b) => g.add(a, b), ['B', 4], ['B', 4], [3, 4], [3, 4])],
    ['Add (row vector broadcast)', binary((g, a, b) => g.add(a, b), ['B', 'T', 4], [4], [2, 3, 4], [4])],
    ['Sub (column broadcast)', binary((g, a, b) => g.sub(a, b), ['B', 4], ['B', 1], [3, 4], [3, 1])],
    ['Mul (both broadcast)', binary((g, a, b) => g.mul(a, b), ['B', 1, 4], [3, 1], [2, 1, 4], [3, 1])],
    ['Div', binary((g, a, b) => g.div(a, b), ['B', 4], [4], [3, 4], [4], 3)],
    ['Min (ties impossible)', binary((g, a, b) => g.min(a, b), ['B', 4], ['B', 4], [3, 4], [3, 4])],
    ['Max', binary((g, a, b) => g.max(a, b), ['B', 4], [1], [3, 4], [1])],
    [
      'Sum of three',
      () => {
        const g = new Graph('sum');
        const a = g.input('a', 'float32', [2, 3]);
        const b = g.input('b', 'float32', [3]);
        const c = g.input('c', 'float32', [2, 1]);
        return {
          graph: g,
          feeds: { a: randn([2, 3], 1), b: randn([3], 2), c: randn([2, 1], 3) },
          out: g.sum([a, b, c]),
        };
      },
    ],
    [
      'Where',
      () => {
        const g = new Graph('where');
        const a = g.input('a', 'float32', [2, 3]);
        const b = g.input('b', 'float32', [3]);
        const m = g.input('m', 'bool', [2, 3]);
        return {
          graph: g,
          feeds: {
            a: randn([2, 3], 1),
            b: randn([3], 2),
            m: new HostTensor('bool', [2, 3], Uint8Array.from([1, 0, 1, 0, 0, 1])),
          },
          out: g.where(m, a, b),
        };
      },
    ],
    [
      'Clip',
      () => {
        const g = new Graph('clip');
        const x = g.input('x', 'float32', [12]);
        const vals = [-2, -1.5, -0.7, -0.3, 0.1, 0.4, 0.6, 0.9, 1.3, 1.7, 2.2, 3];
        return { graph: g, feeds: { x: HostTensor.float([12], vals) }, out: g.clip(x, g.scalar(-0.5), g.scalar(1.5)) };
      },
    ],
    ['Neg', unary((g, x) => g.neg(x))],
    ['Exp', unary((g, x) => g.exp(x))],
    ['Log', unary((g, x) => g.log(x), 2, 0.5)],
    ['Sqrt', unary((g, x) => g.sqrt(g.add(g.mul(x, x), g.scalar(0.5))))],
    ['Reciprocal', unary((g, x) => g.reciprocal(g.shift(g.mul(x, x), 0.5)))],
    ['Tanh', unary((g, x) => g.tanh(x))],
    ['Sigmoid', unary((g, x) => g.sigmoid(x))],
    ['Relu', unary((g, x) => g.relu(x))],
    ['Erf', unary((g, x) => g.erf(x))],
    ['Gelu (tanh approximation)', unary((g, x) => g.gelu(x), 0, 2)],
    ['MatMul 2-d', binary((g, a, b) => g.matmul(a, b), ['M', 4], [4, 3], [5, 4], [4, 3])],
    ['MatMul batched × weight', binary((g, a, b) => g.matmul(a, b), ['B', 'T', 4], [4, 3], [2, 3, 4], [4, 3])],
    [
      'MatMul batched × batched',
      binary((g, a, b) => g.matmul(a, b), ['B', 2, 3, 4], ['B', 2, 4, 5], [2, 2, 3, 4], [2, 2, 4, 5]),
    ],
    ['MatMul broadcast batch', binary((g, a, b) => g.matmul(a, b), ['B', 2, 3, 4], [2, 4, 5], [2, 2, 3, 4], [2, 4, 5])],
    [
      'MatMul transB',
      binary((g, a, b) => g.matmul(a, b, { transB: true }), ['B', 3, 4], ['B', 5, 4], [2, 3, 4], [2, 5, 4]),
    ],
    [
      'MatMul alpha',
      binary(
        (g, a, b) => g.matmul(a, b, { transB: true, alpha: 0.25 }),
        ['B', 3, 4],
        ['B', 5, 4],
        [2, 3, 4],
        [2, 5, 4],
      ),
    ],
    ['MatMul transA', binary((g, a, b) => g.matmul(a, b, { transA: true }), [4, 3], [4, 5], [4, 3], [4, 5])],
    [
      'MatMul transA transB',
      binary((g, a, b) => g.matmul(a, b, { transA: true, transB: true }), [2, 4, 3], [2, 5, 4], [2, 4, 3], [2, 5, 4]),
    ],
    [
      'MatMul batched × transposed weight',
      binary((g, a, b) => g.matmul(a, b, { transB: true }), ['B', 'T', 4], [3, 4], [2, 3, 4], [3, 4]),
    ],
    ['Reshape and Transpose', unary((g, x) => g.transpose(g.reshape(x, [0, 1, 5]), [2, 0, 1]))],
    [
      'Reshape -1 flatten',
      () => {
        const g = new Graph('flatten');
        const x = g.input('x', 'float32', ['B', 'T', 4]);
        const w = g.input('w', 'float32', [4, 2]);
        const y = g.matmul(g.reshape(x, [-1, 4]), w);
        return {
          graph: g,
          feeds: { x: randn([2, 3, 4], 1), w: randn([4, 2], 2) },
          out: g.reshapeLike(g.mul(y, y), g.reshape(x, [0, 0, 2, 2]).graph.reshape(y, [-1, 2])),
        };
      },
    ],
    ['Unsqueeze / Squeeze', unary((g, x) => g.squeeze(g.mul(g.unsqueeze(x, [0, 2]), g.unsqueeze(x, [0, 2])), [0]))],
    ['ExpandLike', binary((g, a, b) => g.mul(g.expandLike(b, a), a), ['B', 4], [4], [3, 4], [4])],
    [
      'Concat / Split',
      () => {
        const g = new Graph('concat');
        const a = g.input('a', 'float32', ['B', 2]);
        const b = g.input('b', 'float32', ['B', 3]);
        const c = g.concat([a, b, a], 1);
        const [p, q] = g.split(c, 1, [4, 3]);
        return {
          graph: g,
          feeds: { a: randn([2, 2], 1), b: randn([2, 3], 2) },
          out: g.mul(g.slice(p!, [1], [1], [4]), q!),
        };
      },
    ],
    ['Slice', unary((g, x) => g.slice(x, [1], [1], [4]))],
    [
      'Gather (embedding)',
      () => {
        const g = new Graph('gather');
        const e = g.input('e', 'float32', [5, 3]);
        const ids = g.input('ids', 'int32', ['B', 'T']);
        return {
          graph: g,
          feeds: { e: randn([5, 3], 1), ids: HostTensor.int([2, 3], [0, 4, 4, 2, 0, 1]) },
          out: g.gather(e, ids),
        };
      },
    ],
    [
      'GatherElements (token log-probabilities)',
      () => {
        const g = new Graph('gatherElements');
        const x = g.input('x', 'float32', ['B', 'T', 4]);
        const ids = g.input('ids', 'int32', ['B', 'T', 1]);
        return {
          graph: g,
          feeds: { x: randn([2, 3, 4], 1), ids: HostTensor.int([2, 3, 1], [0, 3, 2, 1, 1, 0]) },
          out: g.gatherElements(g.logSoftmax(x), ids, 2),
        };
      },
    ],
    ['ReduceSum (keepdims)', unary((g, x) => g.mul(g.reduceSum(x, [1], true), x))],
    ['ReduceSum (all)', unary((g, x) => g.mul(g.sumAll(g.mul(x, x)), x))],
    ['ReduceMean', unary((g, x) => g.mul(g.reduceMean(x, [1], true), x))],
    ['Softmax', unary((g, x) => g.softmax(x))],
    ['Softmax (axis 0)', unary((g, x) => g.softmax(x, 0))],
    ['LogSoftmax', unary((g, x) => g.logSoftmax(x))],
    [
      'LayerNormalization',
      () => {
        const g = new Graph('layerNorm');
        const x = g.input('x', 'float32', ['B', 'T', 6]);
        const s = g.input('s', 'float32', [6]);
        const b = g.input('b', 'float32', [6]);
        return {
          graph: g,
          feeds: { x: randn([2, 3, 6], 1), s: randn([6], 2, 0.3, 1), b: randn([6], 3) },
          out: g.layerNorm(x, s, b)[0]!,
        };
      },
    ],
    [
      'a value used many times (accumulated gradients)',
      unary((g, x) => g.mul(g.tanh(g.mul(x, x)), g.add(x, g.exp(x)))),
    ],
  ];
}

describe('core/tensor/autodiff (every operator against finite differences and onnxruntime)', () => {
  for (const [name, make] of cases()) {
    it(name, async () => {
      checkGradients(make());
      await checkOnnx(make());
    });
  }

  it('emits a portable model (no contrib operators) with the same numbers', async () => {
    for (const name of ['MatMul transA transB', 'MatMul alpha', 'Gelu (tanh approximation)']) {
      const c = cases().find(([n]) => n === name)![1];
      await checkOnnx(c(), { contrib: false });
    }
  });

  it('RangeLike gives positions 0..n−1 of a dynamic axis', async () => {
    const g = new Graph('range');
    const ids = g.input('ids', 'int32', ['B', 'T']);
    const pos = g.rangeLike(ids, 1);
    expect(pos.shape).to.deep.equal(['T']);
    const feeds = { ids: HostTensor.int([2, 3], [5, 5, 5, 5, 5, 5]) };
    expect(evaluate(g, feeds, [pos])[0]!.toArray()).to.deep.equal([0, 1, 2]);
    for (const contrib of [true, false]) {
      const s = await GraphSession.create(compile(g, { outputs: [['pos', pos]], contrib }));
      expect((await s.run(feeds)).pos!.toArray()).to.deep.equal([0, 1, 2]);
      await s.close();
    }
  });

  it('gives zero gradients to inputs the loss does not depend on', () => {
    const g = new Graph('unused');
    const x = g.input('x', 'float32', [3]);
    const y = g.input('y', 'float32', [2]);
    const loss = g.sumAll(g.mul(x, x));
    const [gx, gy] = gradients(loss, [x, y]);
    const [vx, vy] = evaluate(g, { x: HostTensor.float([3], [1, 2, 3]), y: HostTensor.float([2], [5, 6]) }, [gx!, gy!]);
    expect(vx!.toArray()).to.deep.equal([2, 4, 6]);
    expect(vy!.toArray()).to.deep.equal([0, 0]);
  });

  it('the gradient of min goes to its first operand on ties (as core/grpo does)', () => {
    const g = new Graph('tie');
    const a = g.input('a', 'float32', [2]);
    const b = g.input('b', 'float32', [2]);
    const [ga, gb] = gradients(g.sumAll(g.min(a, b)), [a, b]);
    const [va, vb] = evaluate(g, { a: HostTensor.float([2], [1, 2]), b: HostTensor.float([2], [1, 3]) }, [ga!, gb!]);
    expect(va!.toArray()).to.deep.equal([1, 1]);
    expect(vb!.toArray()).to.deep.equal([0, 0]);
  });

  it('refuses a non-scalar loss and a path through an operator without a gradient', () => {
    const g = new Graph('bad');
    const x = g.input('x', 'float32', [3]);
    expect(() => gradients(x, [x])).to.throw(/CORL_ERR_TENSOR_SHAPE.*scalar loss/);
    const loss = g.sumAll(g.mul(g.reduceMax(x, [0], true), x));
    expect(() => gradients(loss, [x])).to.throw(/CORL_ERR_TENSOR_GRAPH.*ReduceMax/);
  });
});
