// Elementwise operators with numpy broadcasting: arithmetic, comparisons, Where, Clip, Cast and the
// unary functions. Semantics follow the ONNX operators of the same name (opset 17).
import { CorlError } from '../../errors';
import { broadcastShapes } from '../dim';
import type { Tensor } from '../graph';
import { HostTensor, type DType } from '../host';
import { ONNX_DTYPE } from '../onnx/model';
import { unbroadcast } from './grad-util';
import { alloc, broadcastMap, num } from './kernels';
import type { EmitContext, GradContext, OpDef, TensorType } from './types';
import type { Node } from '../graph';

const plainEmit = (ctx: EmitContext, node: Node): void => {
  ctx.node(
    node.op,
    node.inputs.map((t) => ctx.name(t)),
    node.outputs.map((t) => ctx.name(t)),
  );
};

function sameDtype(op: string, inputs: readonly TensorType[], allowed: readonly DType[]): DType {
  const d = inputs[0]!.dtype;
  for (const t of inputs) {
    if (t.dtype !== d)
      throw new CorlError(
        'CORL_ERR_TENSOR_SHAPE',
        `expected operands of ${op} to share a dtype, got ${inputs.map((x) => x.dtype).join(' and ')}`,
      );
  }
  if (!allowed.includes(d))
    throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected ${allowed.join(' or ')} operands of ${op}, got ${d}`);
  return d;
}

function broadcastAll(op: string, inputs: readonly TensorType[]) {
  return inputs.reduce<TensorType['shape']>((s, t) => broadcastShapes(s, t.shape, op), []);
}

function binary(
  name: string,
  f: (a: number, b: number) => number,
  grad: OpDef['grad'],
  dtypes: readonly DType[] = ['float32', 'int32'],
): OpDef {
  return {
    name,
    infer: (inputs) => [{ dtype: sameDtype(name, inputs, dtypes), shape: broadcastAll(name, inputs) }],
    evaluate: ([a, b]) => [
      broadcastMap([a!, b!], a!.dtype, ([x, y]) => {
        const v = f(x!, y!);
        return a!.dtype === 'int32' ? Math.trunc(v) : v;
      }),
    ],
    grad,
    emit: plainEmit,
  };
}

function compare(name: string, f: (a: number, b: number) => boolean): OpDef {
  return {
    name,
    infer: (inputs) => {
      sameDtype(name, inputs, ['float32', 'int32', 'int64']);
      return [{ dtype: 'bool', shape: broadcastAll(name, inputs) }];
    },
    evaluate: ([a, b]) => [broadcastMap([a!, b!], 'bool', ([x, y]) => (f(x!, y!) ? 1 : 0))],
    emit: plainEmit,
  };
}

function unary(
  name: string,
  f: (x: number) => number,
  grad: OpDef['grad'],
  dtypes: readonly DType[] = ['float32'],
): OpDef {
  return {
    name,
    infer: ([x]) => {
      if (!dtypes.includes(x!.dtype))
        throw new CorlError(
          'CORL_ERR_TENSOR_SHAPE',
          `expected a ${dtypes.join(' or ')} operand of ${name}, got ${x!.dtype}`,
        );
      return [{ dtype: x!.dtype, shape: x!.shape }];
    },
    evaluate: ([x]) => {
      const out = alloc(x!.dtype, x!.size) as Float64Array | Int32Array;
      for (let i = 0; i < x!.size; i++) out[i] = f(num(x!, i));
      return [new HostTensor(x!.dtype, x!.shape, out)];
    },
    grad,
    emit: plainEmit,
  };
}

/** ∂/∂x of a unary op as g·h(x, y). */
function unaryGrad(h: (c: GradContext, x: Tensor, y: Tensor, g: Tensor) => Tensor): OpDef['grad'] {
  return (c) => {
    const g = c.grads[0];
    if (!g) return [undefined];
    return [h(c, c.node.inputs[0]!, c.node.outputs[0]!, g)];
  };
}

const erfFn = (x: number): number => {
  // Abramowitz–Stegun 7.1.26 is too coarse for gradient checks; use the series / continued fraction.
  const ax = Math.abs(x);
  if (ax < 2.5) {
    let sum = x;
    let term = x;
    for (let n = 1; n < 60; n++) {
      term *= (-x * x) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc continued fraction (Lentz), accurate for |x| ≥ 2.5
  let f = ax;
  let C = ax;
  let D = 0;
  for (let n = 1; n < 200; n++) {
    const a = n / 2;
    D = ax + a * D;
    D = D === 0 ? 1e-300 : 1 / D;
    C = ax + a / C;
    const delta = C * D;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f;
  return Math.sign(x) * (1 - erfc);
};

export const ELEMENTWISE_OPS: OpDef[] = [
  binary(
    'Add',
    (a, b) => a + b,
    ({ g, node, grads, needs }) => {
      const d = grads[0];
      const [a, b] = node.inputs;
      return d
        ? [needs[0] ? unbroadcast(g, d, a!) : undefined, needs[1] ? unbroadcast(g, d, b!) : undefined]
        : [undefined, undefined];
    },
  ),
  binary(
    'Sub',
    (a, b) => a - b,
    ({ g, node, grads, needs }) => {
      const d = grads[0];
      const [a, b] = node.inputs;
      return d
        ? [needs[0] ? unbroadcast(g, d, a!) : undefined, needs[1] ? unbroadcast(g, g.neg(d), b!) : undefined]
        : [undefined, undefined];
    },
  ),
  binary(
    'Mul',
    (a, b) => a * b,
    ({ g, node, grads, needs }) => {
      const d = grads[0];
      const [a, b] = node.inputs;
      if (!d) return [undefined, undefined];
      return [
        needs[0] ? unbroadcast(g, g.mul(d, b!), a!) : undefined,
        needs[1] ? unbroadcast(g, g.mul(d, a!), b!) : undefined,
      ];
    },
  ),
  binary(
    'Div',
    (a, b) => a / b,
    ({ g, node, grads, needs }) => {
      const d = grads[0];
      const [a, b] = node.inputs;
      const y = node.outputs[0]!;
      if (!d) return [undefined, undefined];
      return [
        needs[0] ? unbroadcast(g, g.div(d, b!), a!) : undefined,
        needs[1] ? unbroadcast(g, g.neg(g.div(g.mul(d, y), b!)), b!) : undefined,
      ];
    },
  ),
  binary(
    'Min',
    (a, b) => Math.min(a, b),
    ({ g, node, grads, needs }) => {
      const d = grads[0];
      const [a, b] = node.inputs;
      if (!d) return [undefined, undefined];
      const first = g.lessOrEqual(a!, b!);
      const zero = g.scalar(0);
      return [
        needs[0] ? unbroadcast(g, g.where(first, d, zero), a!) : undefined,
        needs[1] ? unbroadcast(g, g.where(first, zero, d), b!) : undefined,
      ];
    },
    ['float32'],
  ),
  binary(
    'Max',
    (a, b) => Math.max(a, b),
    ({ g, node, grads, needs }) => {
      const d = grads[0];
      const [a, b] = node.inputs;
      if (!d) return [undefined, undefined];
      const first = g.greaterOrEqual(a!, b!);
      const zero = g.scalar(0);
      return [
        needs[0] ? unbroadcast(g, g.where(first, d, zero), a!) : undefined,
        needs[1] ? unbroadcast(g, g.where(first, zero, d), b!) : undefined,
      ];
    },
    ['float32'],
  ),
  {
    name: 'Sum',
    infer: (inputs) => {
      if (inputs.length === 0)
        throw new CorlError('CORL_ERR_TENSOR_SHAPE', 'expected at least one operand of Sum, got none');
      return [{ dtype: sameDtype('Sum', inputs, ['float32']), shape: broadcastAll('Sum', inputs) }];
    },
    evaluate: (inputs) => [broadcastMap(inputs, 'float32', (xs) => xs.reduce((a, b) => a + b, 0))],
    grad: ({ g, node, grads, needs }) =>
      node.inputs.map((x, i) => (grads[0] && needs[i] ? unbroadcast(g, grads[0], x) : undefined)),
    emit: plainEmit,
  },
  compare('Equal', (a, b) => a === b),
  compare('Less', (a, b) => a < b),
  compare('LessOrEqual', (a, b) => a <= b),
  compare('Greater', (a, b) => a > b),
  compare('GreaterOrEqual', (a, b) => a >= b),
  {
    name: 'And',
    infer: (inputs) => {
      sameDtype('And', inputs, ['bool']);
      return [{ dtype: 'bool', shape: broadcastAll('And', inputs) }];
    },
    evaluate: ([a, b]) => [broadcastMap([a!, b!], 'bool', ([x, y]) => (x && y ? 1 : 0))],
    emit: plainEmit,
  },
  {
    name: 'Where',
    infer: ([c, x, y]) => {
      if (c!.dtype !== 'bool')
        throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected a bool condition in Where, got ${c!.dtype}`);
      return [
        { dtype: sameDtype('Where', [x!, y!], ['float32', 'int32']), shape: broadcastAll('Where', [c!, x!, y!]) },
      ];
    },
    evaluate: ([c, x, y]) => [broadcastMap([c!, x!, y!], x!.dtype, ([k, a, b]) => (k ? a! : b!))],
    grad: ({ g, node, grads, needs }) => {
      const d = grads[0];
      const [c, x, y] = node.inputs;
      if (!d) return [undefined, undefined, undefined];
      const zero = g.scalar(0);
      return [
        undefined,
        needs[1] ? unbroadcast(g, g.where(c!, d, zero), x!) : undefined,
        needs[2] ? unbroadcast(g, g.where(c!, zero, d), y!) : undefined,
      ];
    },
    emit: plainEmit,
  },
  {
    name: 'Clip',
    infer: ([x, lo, hi]) => {
      sameDtype('Clip', [x!, lo!, hi!], ['float32']);
      if (lo!.shape.length !== 0 || hi!.shape.length !== 0)
        throw new CorlError(
          'CORL_ERR_TENSOR_SHAPE',
          `expected scalar bounds of Clip, got ${lo!.shape.length}-d and ${hi!.shape.length}-d`,
        );
      return [{ dtype: 'float32', shape: x!.shape }];
    },
    evaluate: ([x, lo, hi]) => [broadcastMap([x!, lo!, hi!], 'float32', ([v, l, h]) => Math.min(Math.max(v!, l!), h!))],
    grad: ({ g, node, grads }) => {
      const d = grads[0];
      const [x, lo, hi] = node.inputs;
      if (!d) return [undefined, undefined, undefined];
      const inside = g.and(g.greaterOrEqual(x!, lo!), g.lessOrEqual(x!, hi!));
      return [g.where(inside, d, g.scalar(0)), undefined, undefined];
    },
    emit: plainEmit,
  },
  {
    name: 'Cast',
    infer: ([x], attrs) => [{ dtype: attrs.to as DType, shape: x!.shape }],
    evaluate: ([x], attrs) => {
      const to = attrs.to as DType;
      const out = alloc(to, x!.size);
      for (let i = 0; i < x!.size; i++) {
        const v = num(x!, i);
        if (out instanceof BigInt64Array) out[i] = BigInt(Math.trunc(v));
        else if (to === 'bool') out[i] = v !== 0 ? 1 : 0;
        else if (to === 'int32') out[i] = Math.trunc(v);
        else out[i] = v;
      }
      return [new HostTensor(to, x!.shape, out)];
    },
    grad: ({ node, grads }) => [
      node.inputs[0]!.dtype === 'float32' && node.outputs[0]!.dtype === 'float32' ? grads[0] : undefined,
    ],
    emit: (ctx, node) =>
      ctx.node('Cast', [ctx.name(node.inputs[0]!)], [ctx.name(node.outputs[0]!)], {
        to: { type: 'int', value: ONNX_DTYPE[node.attrs.to as DType] },
      }),
  },
  unary(
    'Neg',
    (x) => -x,
    unaryGrad(({ g }, _x, _y, d) => g.neg(d)),
    ['float32', 'int32'],
  ),
  unary(
    'Identity',
    (x) => x,
    unaryGrad((_c, _x, _y, d) => d),
    ['float32', 'int32', 'bool', 'int64'],
  ),
  unary(
    'Exp',
    Math.exp,
    unaryGrad(({ g }, _x, y, d) => g.mul(d, y)),
  ),
  unary(
    'Log',
    Math.log,
    unaryGrad(({ g }, x, _y, d) => g.div(d, x)),
  ),
  unary(
    'Sqrt',
    Math.sqrt,
    unaryGrad(({ g }, _x, y, d) => g.div(g.scale(d, 0.5), y)),
  ),
  unary(
    'Reciprocal',
    (x) => 1 / x,
    unaryGrad(({ g }, _x, y, d) => g.neg(g.mul(d, g.mul(y, y)))),
  ),
  unary(
    'Tanh',
    Math.tanh,
    unaryGrad(({ g }, _x, y, d) => g.mul(d, g.sub(g.scalar(1), g.mul(y, y)))),
  ),
  unary(
    'Sigmoid',
    (x) => 1 / (1 + Math.exp(-x)),
    unaryGrad(({ g }, _x, y, d) => g.mul(d, g.mul(y, g.sub(g.scalar(1), y)))),
  ),
  unary(
    'Relu',
    (x) => Math.max(x, 0),
    unaryGrad(({ g }, x, _y, d) => g.where(g.greater(x, g.scalar(0)), d, g.scalar(0))),
  ),
  unary(
    'Erf',
    erfFn,
    unaryGrad(({ g }, x, _y, d) => g.mul(d, g.scale(g.exp(g.neg(g.mul(x, x))), 2 / Math.sqrt(Math.PI)))),
  ),
];
