// Helpers shared by gradient rules.
import { dimEq } from '../dim';
import type { Graph, Tensor } from '../graph';

/**
 * Reduce a gradient of a broadcast result back to the shape of the operand `target`: sum over the
 * leading dimensions the operand lacks and over the dimensions where the operand has a literal 1.
 */
export function unbroadcast(g: Graph, grad: Tensor, target: Tensor): Tensor {
  const n = grad.rank;
  const m = target.rank;
  const lead = n - m;
  const axes: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i < lead) axes.push(i);
    else if (target.shape[i - lead] === 1 && grad.shape[i] !== 1) axes.push(i);
  }
  if (axes.length === 0) return grad;
  if (axes.every((a) => a < lead)) return g.reduceSum(grad, axes, false);
  const kept = g.reduceSum(grad, axes, true);
  return lead > 0
    ? g.squeeze(
        kept,
        axes.filter((a) => a < lead),
      )
    : kept;
}

/** Whether the two shapes are provably the same. */
export function sameShape(a: Tensor, b: Tensor): boolean {
  return a.rank === b.rank && a.shape.every((d, i) => dimEq(d, b.shape[i]!));
}
