// Data-movement operators: constants, reshapes, transposes, concatenation, splitting, slicing and
// gathers (embedding lookup, token log-probabilities). ONNX semantics; symbolic dimensions kept.
import { CorlError } from '../../errors';
import { broadcastShapes, dimDiv, dimEq, formatShape, shapeEq, shapeSize, type Dim } from '../dim';
import type { ConstantAttrs, Tensor } from '../graph';
import { HostTensor, strides, type DType } from '../host';
import { sameShape, unbroadcast } from './grad-util';
import { affineIndex, alloc, broadcastIndex, normAxis, num } from './kernels';
import type { EmitContext, OpDef } from './types';

const shapeErr = (msg: string) => new CorlError('CORL_ERR_TENSOR_SHAPE', msg);

function copyAs(x: HostTensor, shape: readonly number[]): HostTensor {
  return new HostTensor(x.dtype, shape, x.data);
}

/** Output shape of an ONNX Reshape (0 copies, one -1 inferred). */
export function reshapeShape(input: readonly Dim[], spec: readonly number[]): Dim[] {
  const out: (Dim | undefined)[] = spec.map((s, i) => {
    if (s === 0) {
      if (i >= input.length)
        throw shapeErr(
          `expected reshape 0 at index ${i} to copy an input dimension, got an input of rank ${input.length}`,
        );
      return input[i]!;
    }
    if (s === -1) return undefined;
    if (!Number.isInteger(s) || s < -1) throw shapeErr(`expected reshape sizes ≥ -1, got ${s}`);
    return s;
  });
  const unknown = out.filter((d) => d === undefined).length;
  if (unknown > 1) throw shapeErr(`expected at most one -1 in reshape [${spec.join(', ')}], got ${unknown}`);
  const total = shapeSize(input);
  const known = shapeSize(out.filter((d): d is Dim => d !== undefined));
  if (unknown === 1) {
    const q = dimDiv(total, known);
    if (q === undefined)
      throw shapeErr(`expected ${formatShape(input)} to divide into [${spec.join(', ')}], got ${total} / ${known}`);
    return out.map((d) => (d === undefined ? q : d));
  }
  if (!dimEq(total, known))
    throw shapeErr(
      `expected reshape of ${formatShape(input)} (${total} elements) to keep the element count, got ${formatShape(out as Dim[])} (${known})`,
    );
  return out as Dim[];
}

function transposeHost(x: HostTensor, perm: readonly number[]): HostTensor {
  const r = x.shape.length;
  const outShape = perm.map((p) => x.shape[p]!);
  const xst = strides(x.shape);
  const ost = strides(outShape);
  const out = alloc(x.dtype, x.size);
  for (let i = 0; i < x.size; i++) {
    let rem = i;
    let j = 0;
    for (let d = 0; d < r; d++) {
      const c = Math.floor(rem / ost[d]!);
      rem -= c * ost[d]!;
      j += c * xst[perm[d]!]!;
    }
    (out as Float64Array)[i] = (x.data as Float64Array)[j]!;
  }
  return new HostTensor(x.dtype, outShape, out);
}

const names = (ctx: EmitContext, ts: readonly Tensor[]) => ts.map((t) => ctx.name(t));

/** Numbers → int64 constant, via the emitter. */
const ints = (values: readonly number[]) => ({ type: 'ints' as const, value: values });

function sliceHost(
  x: HostTensor,
  axes: readonly number[],
  starts: readonly number[],
  ends: readonly number[],
): HostTensor {
  const r = x.shape.length;
  const lo = x.shape.map(() => 0);
  const hi = [...x.shape];
  axes.forEach((a, k) => {
    const ax = normAxis(a, r);
    const d = x.shape[ax]!;
    const clamp = (v: number) => Math.min(Math.max(v < 0 ? v + d : v, 0), d);
    lo[ax] = clamp(starts[k]!);
    hi[ax] = Math.max(clamp(ends[k]!), lo[ax]!);
  });
  const outShape = hi.map((h, i) => h - lo[i]!);
  const n = outShape.reduce((a, b) => a * b, 1);
  const out = alloc(x.dtype, n);
  const xst = strides(x.shape);
  // element c of the slice is element c + lo of x
  const idx = affineIndex(
    outShape,
    xst,
    lo.reduce((sum, l, d) => sum + l * xst[d]!, 0),
  );
  for (let i = 0; i < n; i++) (out as Float64Array)[i] = (x.data as Float64Array)[idx[i]!]!;
  return new HostTensor(x.dtype, outShape, out);
}

function concatHost(xs: readonly HostTensor[], axis: number): HostTensor {
  const r = xs[0]!.shape.length;
  const ax = normAxis(axis, r);
  const outShape = [...xs[0]!.shape];
  outShape[ax] = xs.reduce((s, t) => s + t.shape[ax]!, 0);
  const outer = outShape.slice(0, ax).reduce((a, b) => a * b, 1);
  const inner = outShape.slice(ax + 1).reduce((a, b) => a * b, 1);
  const out = alloc(
    xs[0]!.dtype,
    outShape.reduce((a, b) => a * b, 1),
  ) as Float64Array;
  let pos = 0;
  for (let o = 0; o < outer; o++) {
    for (const t of xs) {
      const len = t.shape[ax]! * inner;
      const src = t.data as Float64Array;
      for (let k = 0; k < len; k++) out[pos++] = src[o * len + k]!;
    }
  }
  return new HostTensor(xs[0]!.dtype, outShape, out);
}

export const SHAPE_OPS: OpDef[] = [
  {
    name: 'RangeLike',
    infer: ([x], attrs) => [{ dtype: 'int32', shape: [x!.shape[normAxis(attrs.axis as number, x!.shape.length)]!] }],
    evaluate: ([x], attrs) => {
      const n = x!.shape[normAxis(attrs.axis as number, x!.shape.length)]!;
      return [
        HostTensor.int(
          [n],
          Array.from({ length: n }, (_, i) => i),
        ),
      ];
    },
    emit: (ctx, node) => {
      const x = node.inputs[0]!;
      const ax = normAxis(node.attrs.axis as number, x.rank);
      const shape = ctx.fresh('range');
      const n = ctx.fresh('range');
      const r = ctx.fresh('range');
      ctx.node('Shape', [ctx.name(x)], [shape], {
        start: { type: 'int', value: ax },
        end: { type: 'int', value: ax + 1 },
      });
      ctx.node('Squeeze', [shape, ctx.int64s([0])], [n]);
      ctx.node('Range', [ctx.int64s([0], true), n, ctx.int64s([1], true)], [r]);
      ctx.node('Cast', [r], [ctx.name(node.outputs[0]!)], { to: { type: 'int', value: 6 } });
    },
  },
  {
    name: 'Constant',
    infer: (_inputs, attrs) => {
      const a = attrs as unknown as ConstantAttrs;
      return [{ dtype: a.dtype, shape: a.shape }];
    },
    evaluate: (_inputs, attrs) => {
      const a = attrs as unknown as ConstantAttrs;
      const out = alloc(a.dtype, a.data.length);
      for (let i = 0; i < a.data.length; i++) (out as Float64Array)[i] = (a.data as Float64Array)[i]!;
      return [new HostTensor(a.dtype, a.shape, out)];
    },
    emit: () => {
      /* constants become initializers in the emitter */
    },
  },
  {
    name: 'Reshape',
    infer: ([x], attrs) => [{ dtype: x!.dtype, shape: reshapeShape(x!.shape, attrs.shape as number[]) }],
    evaluate: ([x], attrs) => {
      const shape = reshapeShape(x!.shape, attrs.shape as number[]);
      return [copyAs(x!, shape as number[])];
    },
    grad: ({ g, node, grads }) => [grads[0] ? g.reshapeLike(grads[0], node.inputs[0]!) : undefined],
    emit: (ctx, node) =>
      ctx.node(
        'Reshape',
        [ctx.name(node.inputs[0]!), ctx.int64s(node.attrs.shape as number[])],
        names(ctx, node.outputs),
      ),
  },
  {
    name: 'ReshapeLike',
    infer: ([x, like]) => {
      if (!dimEq(shapeSize(x!.shape), shapeSize(like!.shape)))
        throw shapeErr(`expected the same element count, got ${formatShape(x!.shape)} and ${formatShape(like!.shape)}`);
      return [{ dtype: x!.dtype, shape: like!.shape }];
    },
    evaluate: ([x, like]) => [copyAs(x!, like!.shape)],
    grad: ({ g, node, grads }) => [grads[0] ? g.reshapeLike(grads[0], node.inputs[0]!) : undefined, undefined],
    emit: (ctx, node) => {
      const [x, like] = node.inputs;
      const s = ctx.fresh('shape');
      ctx.node('Shape', [ctx.name(like!)], [s]);
      ctx.node('Reshape', [ctx.name(x!), s], names(ctx, node.outputs));
    },
  },
  {
    name: 'ExpandLike',
    infer: ([x, like]) => {
      const b = broadcastShapes(x!.shape, like!.shape, 'ExpandLike');
      if (!shapeEq(b, like!.shape))
        throw shapeErr(
          `expected ${formatShape(x!.shape)} to broadcast to ${formatShape(like!.shape)}, got ${formatShape(b)}`,
        );
      return [{ dtype: x!.dtype, shape: like!.shape }];
    },
    evaluate: ([x, like]) => {
      const idx = broadcastIndex(x!.shape, like!.shape);
      const out = alloc(x!.dtype, idx.length) as Float64Array;
      for (let i = 0; i < idx.length; i++) out[i] = (x!.data as Float64Array)[idx[i]!]!;
      return [new HostTensor(x!.dtype, like!.shape, out)];
    },
    grad: ({ g, node, grads }) => [grads[0] ? unbroadcast(g, grads[0], node.inputs[0]!) : undefined, undefined],
    emit: (ctx, node) => {
      const [x, like] = node.inputs;
      const s = ctx.fresh('shape');
      ctx.node('Shape', [ctx.name(like!)], [s]);
      ctx.node('Expand', [ctx.name(x!), s], names(ctx, node.outputs));
    },
  },
  {
    name: 'Transpose',
    infer: ([x], attrs) => {
      const perm = attrs.perm as number[];
      const r = x!.shape.length;
      if (perm.length !== r || [...perm].sort((a, b) => a - b).some((p, i) => p !== i))
        throw shapeErr(`expected a permutation of 0..${r - 1}, got [${perm.join(', ')}]`);
      return [{ dtype: x!.dtype, shape: perm.map((p) => x!.shape[p]!) }];
    },
    evaluate: ([x], attrs) => [transposeHost(x!, attrs.perm as number[])],
    grad: ({ g, node, grads }) => {
      if (!grads[0]) return [undefined];
      const perm = node.attrs.perm as number[];
      const inv = perm.map((_, i) => perm.indexOf(i));
      return [g.transpose(grads[0], inv)];
    },
    emit: (ctx, node) =>
      ctx.node('Transpose', names(ctx, node.inputs), names(ctx, node.outputs), {
        perm: ints(node.attrs.perm as number[]),
      }),
  },
  {
    name: 'Unsqueeze',
    infer: ([x], attrs) => {
      const r = x!.shape.length + (attrs.axes as number[]).length;
      const axes = new Set((attrs.axes as number[]).map((a) => normAxis(a, r)));
      const out: Dim[] = [];
      let k = 0;
      for (let i = 0; i < r; i++) out.push(axes.has(i) ? 1 : x!.shape[k++]!);
      return [{ dtype: x!.dtype, shape: out }];
    },
    evaluate: ([x], attrs) => {
      const r = x!.shape.length + (attrs.axes as number[]).length;
      const axes = new Set((attrs.axes as number[]).map((a) => normAxis(a, r)));
      const out: number[] = [];
      let k = 0;
      for (let i = 0; i < r; i++) out.push(axes.has(i) ? 1 : x!.shape[k++]!);
      return [copyAs(x!, out)];
    },
    grad: ({ g, node, grads }) => [grads[0] ? g.reshapeLike(grads[0], node.inputs[0]!) : undefined],
    emit: (ctx, node) =>
      ctx.node(
        'Unsqueeze',
        [ctx.name(node.inputs[0]!), ctx.int64s(node.attrs.axes as number[])],
        names(ctx, node.outputs),
      ),
  },
  {
    name: 'Squeeze',
    infer: ([x], attrs) => {
      const r = x!.shape.length;
      const axes = new Set((attrs.axes as number[]).map((a) => normAxis(a, r)));
      for (const a of axes)
        if (x!.shape[a] !== 1)
          throw shapeErr(
            `expected dimension ${a} of ${formatShape(x!.shape)} to be 1 to squeeze it, got ${x!.shape[a]}`,
          );
      return [{ dtype: x!.dtype, shape: x!.shape.filter((_, i) => !axes.has(i)) }];
    },
    evaluate: ([x], attrs) => {
      const axes = new Set((attrs.axes as number[]).map((a) => normAxis(a, x!.shape.length)));
      return [
        copyAs(
          x!,
          x!.shape.filter((_, i) => !axes.has(i)),
        ),
      ];
    },
    grad: ({ g, node, grads }) => [grads[0] ? g.reshapeLike(grads[0], node.inputs[0]!) : undefined],
    emit: (ctx, node) =>
      ctx.node(
        'Squeeze',
        [ctx.name(node.inputs[0]!), ctx.int64s(node.attrs.axes as number[])],
        names(ctx, node.outputs),
      ),
  },
  {
    name: 'Concat',
    infer: (inputs, attrs) => {
      const first = inputs[0]!;
      const r = first.shape.length;
      const ax = normAxis(attrs.axis as number, r);
      let total = 0;
      for (const t of inputs) {
        if (t.dtype !== first.dtype || t.shape.length !== r)
          throw shapeErr(
            `expected Concat operands of the same dtype and rank, got ${inputs.map((x) => `${x.dtype}${formatShape(x.shape)}`).join(', ')}`,
          );
        t.shape.forEach((d, i) => {
          if (i !== ax && !dimEq(d, first.shape[i]!))
            throw shapeErr(
              `expected Concat operands to agree off axis ${ax}, got ${inputs.map((x) => formatShape(x.shape)).join(', ')}`,
            );
        });
        const d = t.shape[ax]!;
        if (typeof d !== 'number') {
          if (attrs.size === undefined)
            throw shapeErr(`expected fixed sizes along the Concat axis (or a named result size), got ${d}`);
        } else total += d;
      }
      const shape = [...first.shape];
      // Symbolic dimensions have no sums: a concatenation along a symbolic axis (a KV cache: past +
      // new tokens) needs the caller to name the result's size, a symbol some input binds.
      const symbolic = inputs.some((t) => typeof t.shape[ax] !== 'number');
      shape[ax] = symbolic ? (attrs.size as Dim) : total;
      return [{ dtype: first.dtype, shape }];
    },
    evaluate: (inputs, attrs) => [concatHost(inputs, attrs.axis as number)],
    grad: ({ g, node, grads, needs }) => {
      if (!grads[0]) return node.inputs.map(() => undefined);
      const ax = normAxis(node.attrs.axis as number, node.inputs[0]!.rank);
      if (node.inputs.some((t) => typeof t.shape[ax] !== 'number'))
        throw shapeErr('expected fixed sizes along the Concat axis to differentiate it, got symbolic ones');
      const parts = g.split(
        grads[0],
        ax,
        node.inputs.map((t) => t.shape[ax] as number),
      );
      return parts.map((p, i) => (needs[i] ? p : undefined));
    },
    emit: (ctx, node) =>
      ctx.node('Concat', names(ctx, node.inputs), names(ctx, node.outputs), {
        axis: { type: 'int', value: node.attrs.axis as number },
      }),
  },
  {
    name: 'Split',
    infer: ([x], attrs) => {
      const ax = normAxis(attrs.axis as number, x!.shape.length);
      const sizes = attrs.sizes as number[];
      const d = x!.shape[ax]!;
      const total = sizes.reduce((a, b) => a + b, 0);
      if (d !== total)
        throw shapeErr(`expected split sizes [${sizes.join(', ')}] to add up to dimension ${ax} = ${d}, got ${total}`);
      return sizes.map((s) => {
        const shape = [...x!.shape];
        shape[ax] = s;
        return { dtype: x!.dtype, shape };
      });
    },
    evaluate: ([x], attrs) => {
      const ax = normAxis(attrs.axis as number, x!.shape.length);
      let start = 0;
      return (attrs.sizes as number[]).map((s) => {
        const r = sliceHost(x!, [ax], [start], [start + s]);
        start += s;
        return r;
      });
    },
    grad: ({ g, node, grads }) => {
      if (grads.every((d) => !d)) return [undefined];
      const parts = node.outputs.map((o, i) => grads[i] ?? g.expandLike(g.scalar(0), o));
      return [g.concat(parts, node.attrs.axis as number)];
    },
    emit: (ctx, node) =>
      ctx.node(
        'Split',
        [ctx.name(node.inputs[0]!), ctx.int64s(node.attrs.sizes as number[])],
        names(ctx, node.outputs),
        { axis: { type: 'int', value: node.attrs.axis as number } },
      ),
  },
  {
    name: 'Slice',
    infer: ([x], attrs) => {
      const r = x!.shape.length;
      const shape = [...x!.shape];
      (attrs.axes as number[]).forEach((a, k) => {
        const ax = normAxis(a, r);
        const d = x!.shape[ax]!;
        if (typeof d !== 'number') throw shapeErr(`expected a fixed-size axis to slice, got ${d} at axis ${ax}`);
        const clamp = (v: number) => Math.min(Math.max(v < 0 ? v + d : v, 0), d);
        const lo = clamp((attrs.starts as number[])[k]!);
        shape[ax] = Math.max(clamp((attrs.ends as number[])[k]!) - lo, 0);
      });
      return [{ dtype: x!.dtype, shape }];
    },
    evaluate: ([x], attrs) => [sliceHost(x!, attrs.axes as number[], attrs.starts as number[], attrs.ends as number[])],
    grad: ({ g, node, grads }) => {
      const d = grads[0];
      if (!d) return [undefined];
      // Pad with zeros on both sides of every sliced axis, by concatenation.
      const x = node.inputs[0]!;
      let cur = d;
      (node.attrs.axes as number[]).forEach((a, k) => {
        const ax = normAxis(a, x.rank);
        const dimSize = x.shape[ax] as number;
        const clamp = (v: number) => Math.min(Math.max(v < 0 ? v + dimSize : v, 0), dimSize);
        const lo = clamp((node.attrs.starts as number[])[k]!);
        const hi = Math.max(clamp((node.attrs.ends as number[])[k]!), lo);
        const pieces: Tensor[] = [];
        const zeros = (n: number) => {
          const like = g.slice(x, [ax], [0], [n]);
          return g.expandLike(g.scalar(0), like);
        };
        if (lo > 0) pieces.push(zeros(lo));
        pieces.push(cur);
        if (hi < dimSize) pieces.push(zeros(dimSize - hi));
        cur = pieces.length > 1 ? g.concat(pieces, ax) : cur;
      });
      return [cur];
    },
    emit: (ctx, node) =>
      ctx.node(
        'Slice',
        [
          ctx.name(node.inputs[0]!),
          ctx.int64s(node.attrs.starts as number[]),
          ctx.int64s(node.attrs.ends as number[]),
          ctx.int64s(node.attrs.axes as number[]),
        ],
        names(ctx, node.outputs),
      ),
  },
  {
    name: 'Gather',
    infer: ([data, idx], attrs) => {
      if (idx!.dtype !== 'int32' && idx!.dtype !== 'int64')
        throw shapeErr(`expected integer indices in Gather, got ${idx!.dtype}`);
      const ax = normAxis(attrs.axis as number, data!.shape.length);
      return [
        { dtype: data!.dtype, shape: [...data!.shape.slice(0, ax), ...idx!.shape, ...data!.shape.slice(ax + 1)] },
      ];
    },
    evaluate: ([data, idx], attrs) => {
      const ax = normAxis(attrs.axis as number, data!.shape.length);
      const outer = data!.shape.slice(0, ax).reduce((a, b) => a * b, 1);
      const n = data!.shape[ax]!;
      const inner = data!.shape.slice(ax + 1).reduce((a, b) => a * b, 1);
      const outShape = [...data!.shape.slice(0, ax), ...idx!.shape, ...data!.shape.slice(ax + 1)];
      const out = alloc(
        data!.dtype,
        outShape.reduce((a, b) => a * b, 1),
      ) as Float64Array;
      let pos = 0;
      for (let o = 0; o < outer; o++) {
        for (let k = 0; k < idx!.size; k++) {
          let j = num(idx!, k);
          if (j < 0) j += n;
          if (j < 0 || j >= n) throw shapeErr(`expected Gather indices in [${-n}, ${n - 1}], got ${num(idx!, k)}`);
          for (let q = 0; q < inner; q++) out[pos++] = (data!.data as Float64Array)[(o * n + j) * inner + q]!;
        }
      }
      return [new HostTensor(data!.dtype, outShape, out)];
    },
    grad: ({ g, node, grads }) => {
      const d = grads[0];
      const [data, idx] = node.inputs;
      if (!d) return [undefined, undefined];
      if (
        (node.attrs.axis as number) !== 0 ||
        data!.rank !== 2 ||
        typeof data!.shape[0] !== 'number' ||
        typeof data!.shape[1] !== 'number'
      ) {
        throw shapeErr(
          `expected the gradient of Gather on axis 0 of a fixed-size matrix, got axis ${node.attrs.axis} of ${formatShape(data!.shape)}`,
        );
      }
      const V = data!.shape[0] as number;
      const D = data!.shape[1] as number;
      // ∂data = onehot(indices)ᵀ · ∂out: a matmul, since vocabularies and contexts are small.
      const flatIdx = g.reshape(idx!, [-1, 1]);
      const arange = g.constant(
        Array.from({ length: V }, (_, i) => i),
        [V],
        idx!.dtype as DType,
      );
      const onehot = g.cast(g.equal(flatIdx, arange), 'float32');
      return [g.matmul(g.transpose(onehot, [1, 0]), g.reshape(d, [-1, D])), undefined];
    },
    emit: (ctx, node) =>
      ctx.node('Gather', names(ctx, node.inputs), names(ctx, node.outputs), {
        axis: { type: 'int', value: node.attrs.axis as number },
      }),
  },
  {
    name: 'GatherElements',
    infer: ([data, idx], attrs) => {
      if (idx!.dtype !== 'int32' && idx!.dtype !== 'int64')
        throw shapeErr(`expected integer indices in GatherElements, got ${idx!.dtype}`);
      if (idx!.shape.length !== data!.shape.length)
        throw shapeErr(`expected indices of the data's rank ${data!.shape.length}, got ${idx!.shape.length}`);
      normAxis(attrs.axis as number, data!.shape.length);
      return [{ dtype: data!.dtype, shape: idx!.shape }];
    },
    evaluate: ([data, idx], attrs) => {
      const r = data!.shape.length;
      const ax = normAxis(attrs.axis as number, r);
      const dst = strides(data!.shape);
      const ist = strides(idx!.shape);
      const out = alloc(data!.dtype, idx!.size) as Float64Array;
      for (let i = 0; i < idx!.size; i++) {
        let rem = i;
        let j = 0;
        for (let d = 0; d < r; d++) {
          const c = Math.floor(rem / ist[d]!);
          rem -= c * ist[d]!;
          let cc = c;
          if (d === ax) {
            cc = num(idx!, i);
            if (cc < 0) cc += data!.shape[ax]!;
            if (cc < 0 || cc >= data!.shape[ax]!)
              throw shapeErr(`expected GatherElements indices in [0, ${data!.shape[ax]! - 1}], got ${num(idx!, i)}`);
          }
          j += cc * dst[d]!;
        }
        out[i] = (data!.data as Float64Array)[j]!;
      }
      return [new HostTensor(data!.dtype, idx!.shape, out)];
    },
    grad: ({ g, node, grads }) => {
      const d = grads[0];
      const [data, idx] = node.inputs;
      if (!d) return [undefined, undefined];
      const ax = normAxis(node.attrs.axis as number, data!.rank);
      const V = data!.shape[ax];
      const offAxisSame = data!.shape.every((s, i) => i === ax || dimEq(s, idx!.shape[i]!));
      if (idx!.shape[ax] !== 1 || typeof V !== 'number' || !offAxisSame) {
        throw shapeErr(
          `expected the gradient of GatherElements with one index per row along a fixed axis, got data ${formatShape(data!.shape)}, indices ${formatShape(idx!.shape)}`,
        );
      }
      const aShape = data!.shape.map((_, i) => (i === ax ? V : 1));
      const arange = g.constant(
        Array.from({ length: V }, (_, i) => i),
        aShape,
        idx!.dtype as DType,
      );
      const hit = g.equal(idx!, arange);
      const grad = g.where(hit, d, g.scalar(0));
      return [sameShape(grad, data!) ? grad : g.expandLike(grad, data!), undefined];
    },
    emit: (ctx, node) =>
      ctx.node('GatherElements', names(ctx, node.inputs), names(ctx, node.outputs), {
        axis: { type: 'int', value: node.attrs.axis as number },
      }),
  },
];
