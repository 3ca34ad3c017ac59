// Neural-network operators with hand-derived gradients: Softmax, LogSoftmax (one axis, opset-13
// semantics) and LayerNormalization (opset 17, last axis, with its Mean and InvStdDev outputs,
// which the gradient reuses instead of recomputing the statistics).
import { CorlError } from '../../errors';
import { formatShape } from '../dim';
import { HostTensor, strides } from '../host';
import type { Node } from '../graph';
import { unbroadcast } from './grad-util';
import { normAxis } from './kernels';
import type { EmitContext, OpDef } from './types';

/** Apply `f` to every 1-d lane of `x` along `axis`. */
function lanes(
  x: HostTensor,
  axis: number,
  f: (get: (k: number) => number, set: (k: number, v: number) => void, n: number) => void,
): HostTensor {
  const ax = normAxis(axis, x.shape.length);
  const st = strides(x.shape);
  const n = x.shape[ax]!;
  const step = st[ax]!;
  const out = new Float64Array(x.size);
  const src = x.data as Float64Array;
  const outer = x.shape.slice(0, ax).reduce((a, b) => a * b, 1);
  const inner = step;
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const base = o * n * inner + i;
      f(
        (k) => src[base + k * step]!,
        (k, v) => {
          out[base + k * step] = v;
        },
        n,
      );
    }
  }
  return new HostTensor('float32', x.shape, out);
}

function softmaxLane(log: boolean) {
  return (get: (k: number) => number, set: (k: number, v: number) => void, n: number) => {
    let m = -Infinity;
    for (let k = 0; k < n; k++) m = Math.max(m, get(k));
    let z = 0;
    for (let k = 0; k < n; k++) z += Math.exp(get(k) - m);
    for (let k = 0; k < n; k++) set(k, log ? get(k) - m - Math.log(z) : Math.exp(get(k) - m) / z);
  };
}

const emitAxis = (ctx: EmitContext, node: Node) =>
  ctx.node(node.op, [ctx.name(node.inputs[0]!)], [ctx.name(node.outputs[0]!)], {
    axis: { type: 'int', value: node.attrs.axis as number },
  });

function floatOnly(op: string, dtype: string): void {
  if (dtype !== 'float32')
    throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected a float32 operand of ${op}, got ${dtype}`);
}

const GELU_C = Math.sqrt(2 / Math.PI);
const GELU_A = 0.044715;

export const NN_OPS: OpDef[] = [
  {
    name: 'Gelu',
    infer: ([x]) => {
      floatOnly('Gelu', x!.dtype);
      return [{ dtype: 'float32', shape: x!.shape }];
    },
    evaluate: ([x]) => {
      const src = x!.data as Float64Array;
      const out = new Float64Array(x!.size);
      for (let i = 0; i < out.length; i++) {
        const v = src[i]!;
        out[i] = 0.5 * v * (1 + Math.tanh(GELU_C * (v + GELU_A * v * v * v)));
      }
      return [new HostTensor('float32', x!.shape, out)];
    },
    grad: ({ g, node, grads }) => {
      const d = grads[0];
      if (!d) return [undefined];
      const x = node.inputs[0]!;
      // gelu'(x) = ½(1 + t) + ½x(1 − t²)·c(1 + 3a·x²), t = tanh(c(x + a·x³))
      const x2a = g.scale(g.mul(x, x), GELU_C * GELU_A);
      const t = g.tanh(g.mul(x, g.shift(x2a, GELU_C)));
      const half = g.shift(g.scale(t, 0.5), 0.5);
      const sech2 = g.sub(g.scalar(1), g.mul(t, t));
      const inner = g.shift(g.scale(x2a, 1.5), 0.5 * GELU_C);
      return [g.mul(d, g.add(half, g.mul(g.mul(x, sech2), inner)))];
    },
    emit: (ctx, node) => {
      const x = ctx.name(node.inputs[0]!);
      const y = ctx.name(node.outputs[0]!);
      if (ctx.contrib) return ctx.node('FastGelu', [x], [y], {}, 'com.microsoft');
      const x2 = ctx.fresh('gelu');
      const x3 = ctx.fresh('gelu');
      const inner = ctx.fresh('gelu');
      const arg = ctx.fresh('gelu');
      const t = ctx.fresh('gelu');
      const t1 = ctx.fresh('gelu');
      const hx = ctx.fresh('gelu');
      ctx.node('Mul', [x, x], [x2]);
      ctx.node('Mul', [x2, x], [x3]);
      ctx.node('Mul', [x3, ctx.float32(GELU_A)], [inner]);
      const sum = ctx.fresh('gelu');
      ctx.node('Add', [x, inner], [sum]);
      ctx.node('Mul', [sum, ctx.float32(GELU_C)], [arg]);
      ctx.node('Tanh', [arg], [t]);
      ctx.node('Add', [t, ctx.float32(1)], [t1]);
      ctx.node('Mul', [x, ctx.float32(0.5)], [hx]);
      ctx.node('Mul', [hx, t1], [y]);
    },
  },
  {
    name: 'Softmax',
    infer: ([x], attrs) => {
      floatOnly('Softmax', x!.dtype);
      normAxis(attrs.axis as number, x!.shape.length);
      return [{ dtype: 'float32', shape: x!.shape }];
    },
    evaluate: ([x], attrs) => [lanes(x!, attrs.axis as number, softmaxLane(false))],
    grad: ({ g, node, grads }) => {
      const d = grads[0];
      if (!d) return [undefined];
      const y = node.outputs[0]!;
      const axis = node.attrs.axis as number;
      // ∂x = y ⊙ (∂y − Σ ∂y ⊙ y)
      return [g.mul(y, g.sub(d, g.reduceSum(g.mul(d, y), [axis], true)))];
    },
    emit: emitAxis,
  },
  {
    name: 'LogSoftmax',
    infer: ([x], attrs) => {
      floatOnly('LogSoftmax', x!.dtype);
      normAxis(attrs.axis as number, x!.shape.length);
      return [{ dtype: 'float32', shape: x!.shape }];
    },
    evaluate: ([x], attrs) => [lanes(x!, attrs.axis as number, softmaxLane(true))],
    grad: ({ g, node, grads }) => {
      const d = grads[0];
      if (!d) return [undefined];
      const y = node.outputs[0]!;
      const axis = node.attrs.axis as number;
      // ∂x = ∂y − softmax(x) · Σ ∂y
      return [g.sub(d, g.mul(g.exp(y), g.reduceSum(d, [axis], true)))];
    },
    emit: emitAxis,
  },
  {
    name: 'LayerNormalization',
    infer: ([x, scale, bias], attrs) => {
      floatOnly('LayerNormalization', x!.dtype);
      const r = x!.shape.length;
      if (normAxis(attrs.axis as number, r) !== r - 1)
        throw new CorlError(
          'CORL_ERR_TENSOR_SHAPE',
          `expected LayerNormalization over the last axis, got axis ${attrs.axis}`,
        );
      const D = x!.shape[r - 1]!;
      for (const [what, t] of [
        ['scale', scale],
        ['bias', bias],
      ] as const) {
        if (t!.shape.length !== 1 || t!.shape[0] !== D)
          throw new CorlError(
            'CORL_ERR_TENSOR_SHAPE',
            `expected LayerNormalization ${what} of shape [${D}], got ${formatShape(t!.shape)}`,
          );
      }
      if (typeof D !== 'number')
        throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected a fixed normalized dimension, got ${D}`);
      const stat = [...x!.shape.slice(0, r - 1), 1];
      return [
        { dtype: 'float32', shape: x!.shape },
        { dtype: 'float32', shape: stat },
        { dtype: 'float32', shape: stat },
      ];
    },
    evaluate: ([x, scale, bias], attrs) => {
      const eps = attrs.epsilon as number;
      const r = x!.shape.length;
      const D = x!.shape[r - 1]!;
      const rows = x!.size / D;
      const src = x!.data as Float64Array;
      const y = new Float64Array(x!.size);
      const mean = new Float64Array(rows);
      const inv = new Float64Array(rows);
      for (let i = 0; i < rows; i++) {
        let m = 0;
        for (let k = 0; k < D; k++) m += src[i * D + k]!;
        m /= D;
        let v = 0;
        for (let k = 0; k < D; k++) v += (src[i * D + k]! - m) ** 2;
        v /= D;
        const s = 1 / Math.sqrt(v + eps);
        mean[i] = m;
        inv[i] = s;
        for (let k = 0; k < D; k++) y[i * D + k] = (src[i * D + k]! - m) * s * scale!.at(k) + bias!.at(k);
      }
      const stat = [...x!.shape.slice(0, r - 1), 1];
      return [
        new HostTensor('float32', x!.shape, y),
        new HostTensor('float32', stat, mean),
        new HostTensor('float32', stat, inv),
      ];
    },
    grad: ({ g, node, grads, needs }) => {
      const d = grads[0];
      if (grads[1] || grads[2])
        throw new CorlError(
          'CORL_ERR_TENSOR_SHAPE',
          'expected no gradient through the Mean and InvStdDev outputs of LayerNormalization, got one',
        );
      if (!d) return [undefined, undefined, undefined];
      const [x, scale, bias] = node.inputs;
      const [, mean, inv] = node.outputs;
      const xhat = g.mul(g.sub(x!, mean!), inv!);
      const dscale = needs[1] ? unbroadcast(g, g.mul(d, xhat), scale!) : undefined;
      const dbias = needs[2] ? unbroadcast(g, d, bias!) : undefined;
      let dx;
      if (needs[0]) {
        // ∂x = σ⁻¹ (∂x̂ − mean(∂x̂) − x̂ · mean(∂x̂ ⊙ x̂)), ∂x̂ = ∂y ⊙ γ
        const dxhat = g.mul(d, scale!);
        const a = g.reduceMean(dxhat, [-1], true);
        const b = g.reduceMean(g.mul(dxhat, xhat), [-1], true);
        dx = g.mul(inv!, g.sub(g.sub(dxhat, a), g.mul(xhat, b)));
      }
      return [dx, dscale, dbias];
    },
    emit: (ctx, node) => {
      const used = node.outputs.map((t) => ctx.name(t));
      ctx.node(
        'LayerNormalization',
        node.inputs.map((t) => ctx.name(t)),
        used,
        { axis: { type: 'int', value: -1 }, epsilon: { type: 'float', value: node.attrs.epsilon as number } },
      );
    },
  },
];
