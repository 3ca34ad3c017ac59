// Reductions over axes (ReduceSum, ReduceMean, ReduceMax) with ONNX keepdims semantics.
import { CorlError } from '../../errors';
import { formatShape } from '../dim';
import type { Node, Tensor } from '../graph';
import { normAxis, reduce } from './kernels';
import type { EmitContext, OpDef, TensorType } from './types';

function inferReduce(op: string, x: TensorType, attrs: Record<string, unknown>): TensorType[] {
  if (x.dtype !== 'float32')
    throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected a float32 operand of ${op}, got ${x.dtype}`);
  const r = x.shape.length;
  const axes = new Set((attrs.axes as number[]).map((a) => normAxis(a, r)));
  if (axes.size === 0)
    throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected at least one axis to reduce in ${op}, got none`);
  const shape = attrs.keepdims ? x.shape.map((d, i) => (axes.has(i) ? 1 : d)) : x.shape.filter((_, i) => !axes.has(i));
  return [{ dtype: 'float32', shape }];
}

/** Broadcast a reduction's output gradient back over the reduced axes. */
function spread(node: Node, d: Tensor): Tensor {
  const x = node.inputs[0]!;
  const g = x.graph;
  const axes = [...new Set((node.attrs.axes as number[]).map((a) => normAxis(a, x.rank)))].sort((a, b) => a - b);
  const kept = node.attrs.keepdims ? d : g.unsqueeze(d, axes);
  return g.expandLike(kept, x);
}

const emitAxesInput = (ctx: EmitContext, node: Node) =>
  ctx.node(
    node.op,
    [ctx.name(node.inputs[0]!), ctx.int64s(node.attrs.axes as number[])],
    [ctx.name(node.outputs[0]!)],
    { keepdims: { type: 'int', value: node.attrs.keepdims ? 1 : 0 } },
  );
// Opset 17: ReduceMean and ReduceMax still take their axes as an attribute (an input from opset 18).
const emitAxesAttr = (ctx: EmitContext, node: Node) =>
  ctx.node(node.op, [ctx.name(node.inputs[0]!)], [ctx.name(node.outputs[0]!)], {
    axes: { type: 'ints', value: node.attrs.axes as number[] },
    keepdims: { type: 'int', value: node.attrs.keepdims ? 1 : 0 },
  });

export const REDUCE_OPS: OpDef[] = [
  {
    name: 'ReduceSum',
    infer: ([x], attrs) => inferReduce('ReduceSum', x!, attrs),
    evaluate: ([x], attrs) => [reduce(x!, attrs.axes as number[], !!attrs.keepdims, 0, (a, v) => a + v)],
    grad: ({ node, grads }) => [grads[0] ? spread(node, grads[0]) : undefined],
    emit: emitAxesInput,
  },
  {
    name: 'ReduceMean',
    infer: ([x], attrs) => inferReduce('ReduceMean', x!, attrs),
    evaluate: ([x], attrs) => [
      reduce(
        x!,
        attrs.axes as number[],
        !!attrs.keepdims,
        0,
        (a, v) => a + v,
        (a, n) => a / n,
      ),
    ],
    grad: ({ node, grads }) => {
      const d = grads[0];
      if (!d) return [undefined];
      const x = node.inputs[0]!;
      let count = 1;
      for (const a of new Set((node.attrs.axes as number[]).map((ax) => normAxis(ax, x.rank)))) {
        const s = x.shape[a]!;
        if (typeof s !== 'number')
          throw new CorlError(
            'CORL_ERR_TENSOR_SHAPE',
            `expected fixed-size axes for the gradient of ReduceMean, got ${formatShape(x.shape)}`,
          );
        count *= s;
      }
      return [x.graph.scale(spread(node, d), 1 / count)];
    },
    emit: emitAxesAttr,
  },
  {
    name: 'ReduceMax',
    infer: ([x], attrs) => inferReduce('ReduceMax', x!, attrs),
    evaluate: ([x], attrs) => [
      reduce(x!, attrs.axes as number[], !!attrs.keepdims, -Infinity, (a, v) => Math.max(a, v)),
    ],
    emit: emitAxesAttr,
  },
];
