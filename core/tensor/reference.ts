// The reference evaluator: runs a graph on the host in float64 with the operators' plain
// TypeScript kernels. Slow and simple on purpose; tests check gradients against central finite
// differences with it, and onnxruntime's results against it. It also checks at every node that the
// concrete shapes match the inferred symbolic ones.
import { CorlError } from '../errors';
import { bindShape, formatShape, resolveDim } from './dim';
import type { Graph, Tensor } from './graph';
import { HostTensor } from './host';
import { alloc } from './ops/kernels';
import { getOp } from './ops/registry';

/** Nodes needed to compute `outputs`, in graph order. */
export function neededNodes(graph: Graph, outputs: readonly Tensor[]) {
  const need = new Set(outputs.map((t) => t.id));
  const keep: boolean[] = new Array(graph.nodes.length).fill(false);
  for (let i = graph.nodes.length - 1; i >= 0; i--) {
    const n = graph.nodes[i]!;
    if (n.outputs.some((t) => need.has(t.id))) {
      keep[i] = true;
      for (const t of n.inputs) need.add(t.id);
    }
  }
  return { nodes: graph.nodes.filter((_, i) => keep[i]), tensors: need };
}

function toFloat64(t: HostTensor): HostTensor {
  if (t.dtype !== 'float32' || t.data instanceof Float64Array) return t;
  return new HostTensor('float32', t.shape, Float64Array.from(t.data as Float32Array));
}

/** Evaluate `outputs` of `graph` for the given feeds (by input name). */
export function evaluate(
  graph: Graph,
  feeds: Readonly<Record<string, HostTensor>>,
  outputs: readonly Tensor[],
): HostTensor[] {
  const { nodes, tensors } = neededNodes(graph, outputs);
  const values = new Map<number, HostTensor>();
  const bindings = new Map<string, number>();
  for (const input of graph.inputs) {
    if (!tensors.has(input.id)) continue;
    const v = feeds[input.name!];
    if (!v)
      throw new CorlError('CORL_ERR_TENSOR_GRAPH', `expected a feed for input "${input.name}" ${input}, got none`, {
        where: graph.name,
      });
    if (v.dtype !== input.dtype)
      throw new CorlError(
        'CORL_ERR_TENSOR_SHAPE',
        `expected input "${input.name}" of dtype ${input.dtype}, got ${v.dtype}`,
        { where: graph.name },
      );
    bindShape(input.shape, v.shape, bindings, `input "${input.name}"`);
    values.set(input.id, toFloat64(v));
  }
  for (const node of nodes) {
    const args = node.inputs.map((t) => values.get(t.id)!);
    const res = getOp(node.op).evaluate(args, node.attrs);
    node.outputs.forEach((t, i) => {
      const r = res[i]!;
      const want = t.shape.map((d) => resolveDim(d, bindings));
      if (want.length !== r.shape.length || want.some((d, k) => d !== r.shape[k])) {
        throw new CorlError(
          'CORL_ERR_TENSOR_SHAPE',
          `expected ${node.op} to produce ${formatShape(t.shape)} = [${want.join(', ')}], got [${r.shape.join(', ')}]`,
          { where: graph.name },
        );
      }
      values.set(t.id, r.dtype === t.dtype ? r : castHost(r, t.dtype));
    });
  }
  return outputs.map((t) => values.get(t.id)!);
}

function castHost(t: HostTensor, dtype: HostTensor['dtype']): HostTensor {
  const out = alloc(dtype, t.size);
  for (let i = 0; i < t.size; i++) (out as Float64Array)[i] = t.at(i);
  return new HostTensor(dtype, t.shape, out);
}
