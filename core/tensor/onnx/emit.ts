// Graph IR → ONNX model. Only the nodes the requested outputs need are written; constants become
// initializers, and graph inputs given values become initializers too (how a checkpoint's weights
// are stored). Opset 17 (plus com.microsoft for FusedMatMul when contrib operators are allowed).
import { CorlError } from '../../errors';
import type { ConstantAttrs, Graph, Tensor } from '../graph';
import type { TensorArray } from '../host';
import { getOp } from '../ops/registry';
import type { EmitContext } from '../ops/types';
import { neededNodes } from '../reference';
import { encodeModel, type OnnxAttribute, type OnnxNode, type OnnxTensor, type OnnxValueInfo } from './model';

/** The ONNX opset corl emits. */
export const OPSET = 17;

/** What to emit. */
export interface EmitOptions {
  /** Graph inputs, in order (default: every input the outputs need, in declaration order). */
  readonly inputs?: readonly Tensor[];
  /** Named outputs, in order. */
  readonly outputs: readonly (readonly [string, Tensor])[];
  /** Inputs stored as initializers instead (name → float32 data). */
  readonly initializers?: ReadonlyMap<Tensor, TensorArray>;
  /** Allow onnxruntime contrib operators (default false: a portable standard-ONNX model). */
  readonly contrib?: boolean;
  readonly docString?: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** An emitted model with the order of its inputs and outputs. */
export interface EmittedModel {
  readonly bytes: Uint8Array;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Number of nodes written. */
  readonly nodeCount: number;
}

function dims(t: Tensor): (number | string)[] {
  return t.shape.map((d) => d);
}

/** Emit a graph as an ONNX model. */
export function emitOnnx(graph: Graph, o: EmitOptions): EmittedModel {
  const outputs = o.outputs.map(([, t]) => t);
  const { nodes, tensors } = neededNodes(graph, outputs);
  const init = o.initializers ?? new Map<Tensor, TensorArray>();
  const inputs = (o.inputs ?? graph.inputs.filter((t) => tensors.has(t.id))).filter((t) => !init.has(t));
  for (const t of graph.inputs) {
    if (tensors.has(t.id) && !init.has(t) && !inputs.includes(t)) {
      throw new CorlError(
        'CORL_ERR_TENSOR_GRAPH',
        `expected input "${t.name}" to be listed or given a value, got neither`,
        { where: graph.name },
      );
    }
  }
  const names = new Map<number, string>();
  const used = new Set<string>();
  const claim = (n: string) => {
    if (used.has(n))
      throw new CorlError('CORL_ERR_TENSOR_GRAPH', `expected unique ONNX value names, got "${n}" twice`, {
        where: graph.name,
      });
    used.add(n);
    return n;
  };
  for (const t of graph.inputs) names.set(t.id, claim(t.name!));
  const onnxNodes: OnnxNode[] = [];
  const initializers: OnnxTensor[] = [];
  for (const [t, data] of init)
    initializers.push({ name: t.name!, dtype: t.dtype === 'bool' ? 'bool' : t.dtype, dims: t.shape as number[], data });
  // Output names: a node output takes the output's name directly unless it is an input or named twice.
  const aliases: [string, Tensor][] = [];
  for (const [name, t] of o.outputs) {
    if (names.has(t.id)) aliases.push([name, t]);
    else names.set(t.id, claim(name));
  }
  let counter = 0;
  const int64Cache = new Map<string, string>();
  const floatCache = new Map<number, string>();
  let usesContrib = false;
  const ctx: EmitContext = {
    contrib: !!o.contrib,
    name: (t) => {
      let n = names.get(t.id);
      if (!n) {
        n = claim(`__t${t.id}`);
        names.set(t.id, n);
      }
      return n;
    },
    fresh: (hint) => claim(`__${hint}_${counter++}`),
    node: (op, ins, outs, attributes, domain) => {
      if (domain) usesContrib = true;
      onnxNodes.push({
        op,
        inputs: ins,
        outputs: outs,
        attributes: attributes as Record<string, OnnxAttribute> | undefined,
        domain,
        name: `n${onnxNodes.length}_${op}`,
      });
    },
    int64s: (values, scalar) => {
      const key = `${scalar ? 's' : 'v'}:${values.join(',')}`;
      let n = int64Cache.get(key);
      if (!n) {
        n = claim(`__k${int64Cache.size}`);
        int64Cache.set(key, n);
        initializers.push({
          name: n,
          dtype: 'int64',
          dims: scalar ? [] : [values.length],
          data: BigInt64Array.from(values.map((v) => BigInt(v))),
        });
      }
      return n;
    },
    float32: (value) => {
      let n = floatCache.get(value);
      if (!n) {
        n = claim(`__f${floatCache.size}`);
        floatCache.set(value, n);
        initializers.push({ name: n, dtype: 'float32', dims: [], data: Float32Array.from([value]) });
      }
      return n;
    },
  };
  for (const node of nodes) {
    if (node.op === 'Constant') {
      const a = node.attrs as unknown as ConstantAttrs;
      const data =
        a.dtype === 'float32' && !(a.data instanceof Float32Array) ? Float32Array.from(a.data as Float64Array) : a.data;
      initializers.push({ name: ctx.name(node.outputs[0]!), dtype: a.dtype, dims: a.shape, data });
      continue;
    }
    getOp(node.op).emit(ctx, node);
  }
  for (const [name, t] of aliases)
    onnxNodes.push({ op: 'Identity', inputs: [ctx.name(t)], outputs: [claim(name)], name: `alias_${name}` });
  const valueInfo = (name: string, t: Tensor): OnnxValueInfo => ({ name, dtype: t.dtype, shape: dims(t) });
  const model: import('./model').OnnxModel = {
    name: graph.name,
    nodes: onnxNodes,
    inputs: inputs.map((t) => valueInfo(t.name!, t)),
    outputs: o.outputs.map(([name, t]) => valueInfo(name, t)),
    initializers,
    opsets: usesContrib ? { '': OPSET, 'com.microsoft': 1 } : ({ '': OPSET } as Record<string, number>),
    producer: 'corl',
    docString: o.docString,
    metadata: o.metadata,
  };
  return {
    bytes: encodeModel(model),
    inputNames: model.inputs.map((v) => v.name),
    outputNames: model.outputs.map((v) => v.name),
    nodeCount: onnxNodes.length,
  };
}
