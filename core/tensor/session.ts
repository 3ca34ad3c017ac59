// The session layer over onnxruntime-node: a compiled graph (ONNX bytes plus the symbolic shapes of
// its inputs) and an inference session built from it once, then run many times with host tensors.
// onnxruntime-node copies outputs into JavaScript memory and reads inputs in place, so callers keep
// weights in their own Float32Arrays and pass them on every call.
import * as ort from 'onnxruntime-node';
import { CorlError } from '../errors';
import { bindShape, type Shape } from './dim';
import type { Graph, Tensor } from './graph';
import { HostTensor, type DType, type TensorArray } from './host';
import { emitOnnx, type EmitOptions } from './onnx/emit';

/** A graph emitted for onnxruntime, with what is needed to check feeds. */
export interface CompiledGraph {
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly inputs: readonly { readonly name: string; readonly dtype: DType; readonly shape: Shape }[];
  readonly outputs: readonly string[];
  readonly nodeCount: number;
}

/** Emit a graph for a session (contrib operators allowed unless said otherwise). */
export function compile(graph: Graph, o: EmitOptions): CompiledGraph {
  const m = emitOnnx(graph, { contrib: true, ...o });
  const byName = new Map(graph.inputs.map((t) => [t.name!, t] as const));
  return {
    name: graph.name,
    bytes: m.bytes,
    inputs: m.inputNames.map((n) => {
      const t = byName.get(n) as Tensor;
      return { name: n, dtype: t.dtype, shape: t.shape };
    }),
    outputs: m.outputNames,
    nodeCount: m.nodeCount,
  };
}

/** How to build a session. */
export interface SessionOptions {
  /** Intra-op threads (default 1). */
  readonly threads?: number;
  /** Let idle pool threads spin (default false: with few cores spinning steals time from the other agents). */
  readonly spin?: boolean;
  /** onnxruntime graph optimization level (default 'all'). */
  readonly optimization?: 'disabled' | 'basic' | 'extended' | 'all';
}

/** A feed: a host tensor, or a raw array with its dimensions. */
export type Feed = HostTensor | { readonly data: TensorArray; readonly dims: readonly number[] };

function toOrt(name: string, dtype: DType, f: Feed): ort.Tensor {
  const data = f.data;
  const dims = f instanceof HostTensor ? f.shape : f.dims;
  switch (dtype) {
    case 'float32':
      return new ort.Tensor(
        'float32',
        data instanceof Float32Array ? data : Float32Array.from(data as ArrayLike<number>),
        dims,
      );
    case 'int32':
      return new ort.Tensor(
        'int32',
        data instanceof Int32Array ? data : Int32Array.from(data as ArrayLike<number>),
        dims,
      );
    case 'int64':
      return new ort.Tensor(
        'int64',
        data instanceof BigInt64Array
          ? data
          : BigInt64Array.from(Array.from(data as ArrayLike<number>, (v) => BigInt(v))),
        dims,
      );
    case 'bool':
      return new ort.Tensor(
        'bool',
        data instanceof Uint8Array ? data : Uint8Array.from(data as ArrayLike<number>),
        dims,
      );
    default:
      throw new CorlError(
        'CORL_ERR_TENSOR_SHAPE',
        `expected a supported dtype for input "${name}", got ${dtype as string}`,
      );
  }
}

const ORT_DTYPE: Record<string, DType> = { float32: 'float32', int32: 'int32', int64: 'int64', bool: 'bool' };

/** Time spent in the sessions of one graph (by graph name) in this thread, for benchmarks. */
export interface SessionTiming {
  /** Calls of `run`. */
  calls: number;
  /** Milliseconds inside onnxruntime's `run` (kernels plus its own input/output handling). */
  ortMs: number;
  /** Milliseconds in `run` overall (feed checks and conversions, onnxruntime, output wrapping). */
  totalMs: number;
}

const timings = new Map<string, SessionTiming>();

/** The timings of every graph run in this thread since the last reset (copies); `reset` clears them. */
export function sessionTimings(reset = false): Record<string, SessionTiming> {
  const out = Object.fromEntries([...timings].map(([k, v]) => [k, { ...v }]));
  if (reset) timings.clear();
  return out;
}

/** A compiled graph loaded into onnxruntime. */
export class GraphSession {
  private closed = false;

  private constructor(
    readonly graph: CompiledGraph,
    private readonly session: ort.InferenceSession,
  ) {}

  /** Load a compiled graph. */
  static async create(graph: CompiledGraph, o: SessionOptions = {}): Promise<GraphSession> {
    const threads = Math.max(1, Math.floor(o.threads ?? 1));
    try {
      const session = await ort.InferenceSession.create(graph.bytes, {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: o.optimization ?? 'all',
        extra: { session: { intra_op: { allow_spinning: o.spin ? '1' : '0' } } },
      });
      return new GraphSession(graph, session);
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_TENSOR_RUNTIME',
        `expected onnxruntime to load model "${graph.name}" (${graph.nodeCount} nodes), got ${(e as Error).message}`,
        { cause: e },
      );
    }
  }

  /** Run with feeds by input name; returns the requested outputs (default all) as float32/int host tensors. */
  async run(feeds: Readonly<Record<string, Feed>>, fetch?: readonly string[]): Promise<Record<string, HostTensor>> {
    if (this.closed)
      throw new CorlError(
        'CORL_ERR_TENSOR_RUNTIME',
        `expected an open session for "${this.graph.name}", got a closed one`,
      );
    const t0 = performance.now();
    const ortFeeds: Record<string, ort.Tensor> = {};
    const bindings = new Map<string, number>();
    for (const input of this.graph.inputs) {
      const f = feeds[input.name];
      if (!f)
        throw new CorlError('CORL_ERR_TENSOR_GRAPH', `expected a feed for input "${input.name}", got none`, {
          where: this.graph.name,
        });
      bindShape(input.shape, f instanceof HostTensor ? f.shape : f.dims, bindings, `input "${input.name}"`);
      ortFeeds[input.name] = toOrt(input.name, input.dtype, f);
    }
    let result: ort.InferenceSession.OnnxValueMapType;
    const t1 = performance.now();
    try {
      result = fetch ? await this.session.run(ortFeeds, [...fetch]) : await this.session.run(ortFeeds);
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_TENSOR_RUNTIME',
        `expected model "${this.graph.name}" to run, got ${(e as Error).message}`,
        { cause: e },
      );
    }
    const t2 = performance.now();
    const out: Record<string, HostTensor> = {};
    for (const [name, v] of Object.entries(result)) {
      const t = v as ort.Tensor;
      out[name] = new HostTensor(ORT_DTYPE[t.type] ?? 'float32', t.dims, t.data as TensorArray);
    }
    let tm = timings.get(this.graph.name);
    if (!tm) timings.set(this.graph.name, (tm = { calls: 0, ortMs: 0, totalMs: 0 }));
    tm.calls++;
    tm.ortMs += t2 - t1;
    tm.totalMs += performance.now() - t0;
    return out;
  }

  /** Release the native session. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.session.release();
  }
}
