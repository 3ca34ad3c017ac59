// Reverse-mode automatic differentiation on the graph IR: appends the gradient graph of a scalar
// loss with respect to chosen tensors to the same graph. Each operator's rule (ops/*.ts) builds its
// input gradients from IR operations, so the result is itself an ordinary graph that can be
// emitted to ONNX, evaluated on the host, or differentiated again.
import { CorlError } from '../errors';
import { formatShape } from './dim';
import type { Graph, Tensor } from './graph';
import { sameShape } from './ops/grad-util';
import { getOp } from './ops/registry';

/**
 * ∂loss/∂w for every w in `wrt` (same shapes as `wrt`). `loss` must be a float scalar unless a
 * `seed` (the gradient flowing into `loss`, same shape) is given. Tensors the loss does not depend
 * on get a zero gradient. Throws CORL_ERR_TENSOR_GRAPH for an operator without a gradient rule on
 * the path from `wrt` to `loss`.
 */
export function gradients(loss: Tensor, wrt: readonly Tensor[], seed?: Tensor): Tensor[] {
  const g: Graph = loss.graph;
  if (!seed && loss.rank !== 0)
    throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected a scalar loss to differentiate, got ${loss}`, {
      where: g.name,
    });
  if (loss.dtype !== 'float32')
    throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected a float32 loss, got ${loss.dtype}`, { where: g.name });
  const nodes = g.nodes.slice();

  // Tensors that depend on some w (forward), and tensors the loss depends on (backward).
  const fromWrt = new Set(wrt.map((t) => t.id));
  for (const n of nodes) {
    if (n.inputs.some((t) => fromWrt.has(t.id)))
      for (const o of n.outputs) if (o.dtype === 'float32') fromWrt.add(o.id);
  }
  const toLoss = new Set([loss.id]);
  for (let i = nodes.length - 1; i >= 0; i--) {
    const n = nodes[i]!;
    if (n.outputs.some((t) => toLoss.has(t.id))) for (const t of n.inputs) toLoss.add(t.id);
  }
  const active = (t: Tensor) => fromWrt.has(t.id) && toLoss.has(t.id) && t.dtype === 'float32';

  const contributions = new Map<number, Tensor[]>();
  const add = (t: Tensor, d: Tensor) => {
    if (!sameShape(t, d)) {
      throw new CorlError(
        'CORL_ERR_TENSOR_SHAPE',
        `expected a gradient of shape ${formatShape(t.shape)}, got ${formatShape(d.shape)}`,
        { where: `${g.name}: ${t.node?.op ?? 'input'} gradient` },
      );
    }
    const list = contributions.get(t.id);
    if (list) list.push(d);
    else contributions.set(t.id, [d]);
  };
  const total = (t: Tensor): Tensor | undefined => {
    const list = contributions.get(t.id);
    if (!list) return undefined;
    if (list.length > 1) {
      const s = g.sum(list);
      contributions.set(t.id, [s]);
      return s;
    }
    return list[0];
  };

  add(loss, seed ?? g.scalar(1));
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i]!;
    const outGrads = node.outputs.map(total);
    if (outGrads.every((d) => d === undefined)) continue;
    const needs = node.inputs.map(active);
    if (!needs.some(Boolean)) continue;
    const def = getOp(node.op);
    if (!def.grad)
      throw new CorlError(
        'CORL_ERR_TENSOR_GRAPH',
        `expected a differentiable path from the parameters to the loss, got operator ${node.op} (no gradient rule) on it`,
        { where: g.name },
      );
    const inGrads = def.grad({ g, node, grads: outGrads, needs });
    node.inputs.forEach((t, k) => {
      const d = inGrads[k];
      if (needs[k] && d) add(t, d);
    });
  }
  return wrt.map((w) => total(w) ?? g.expandLike(g.scalar(0), w));
}
