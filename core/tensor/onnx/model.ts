// ONNX ModelProto encoding from a plain description. Field numbers follow onnx/onnx.proto
// (IR version 8, the one that goes with opset 17/18).
import { ProtoWriter } from './proto';

/** Element types corl emits, with their ONNX TensorProto.DataType numbers. */
export const ONNX_DTYPE = { float32: 1, uint8: 2, int32: 6, int64: 7, bool: 9, float64: 11 } as const;
/** An element type name. */
export type OnnxDtype = keyof typeof ONNX_DTYPE;

/** A dimension of a graph input or output: a size, or a symbolic name (dynamic). */
export type OnnxDim = number | string;

/** A named, typed graph input or output. */
export interface OnnxValueInfo {
  readonly name: string;
  readonly dtype: OnnxDtype;
  readonly shape: readonly OnnxDim[];
}

/** A constant tensor (initializer or attribute value). */
export interface OnnxTensor {
  readonly name: string;
  readonly dtype: OnnxDtype;
  readonly dims: readonly number[];
  readonly data: Float32Array | Int32Array | BigInt64Array | Uint8Array | Float64Array;
}

/** An attribute value: numbers, strings, lists of them, or a tensor. */
export type OnnxAttribute =
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'int'; readonly value: number }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'floats'; readonly value: readonly number[] }
  | { readonly type: 'ints'; readonly value: readonly number[] }
  | { readonly type: 'tensor'; readonly value: OnnxTensor };

/** One node. */
export interface OnnxNode {
  readonly op: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly name?: string;
  readonly domain?: string;
  readonly attributes?: Readonly<Record<string, OnnxAttribute>>;
}

/** A whole model. */
export interface OnnxModel {
  readonly name: string;
  readonly nodes: readonly OnnxNode[];
  readonly inputs: readonly OnnxValueInfo[];
  readonly outputs: readonly OnnxValueInfo[];
  readonly initializers?: readonly OnnxTensor[];
  /** Opset versions by domain ('' is the default ONNX domain). */
  readonly opsets: Readonly<Record<string, number>>;
  readonly producer?: string;
  readonly producerVersion?: string;
  readonly docString?: string;
  /** Free key/value metadata (ModelProto.metadata_props). */
  readonly metadata?: Readonly<Record<string, string>>;
}

const ATTR_TYPE = { float: 1, int: 2, string: 3, tensor: 4, floats: 6, ints: 7 } as const;

function writeTensor(w: ProtoWriter, t: OnnxTensor): void {
  if (t.dims.length) w.packedInts(1, t.dims);
  w.int(2, ONNX_DTYPE[t.dtype]);
  w.string(8, t.name);
  const d = t.data;
  w.bytes(9, new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
}

function writeValueInfo(w: ProtoWriter, v: OnnxValueInfo): void {
  w.string(1, v.name);
  w.message(2, (type) =>
    type.message(1, (tt) => {
      tt.int(1, ONNX_DTYPE[v.dtype]);
      tt.message(2, (shape) => {
        for (const d of v.shape) shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
      });
    }),
  );
}

function writeAttribute(w: ProtoWriter, name: string, a: OnnxAttribute): void {
  w.string(1, name);
  switch (a.type) {
    case 'float':
      w.float(2, a.value);
      break;
    case 'int':
      w.int(3, a.value);
      break;
    case 'string':
      w.string(4, a.value);
      break;
    case 'tensor':
      w.message(5, (t) => writeTensor(t, a.value));
      break;
    case 'floats':
      w.packedFloats(7, a.value);
      break;
    case 'ints':
      w.packedInts(8, a.value);
      break;
  }
  w.int(20, ATTR_TYPE[a.type]);
}

/** Serialize a model to ONNX protobuf bytes. */
export function encodeModel(m: OnnxModel): Uint8Array {
  const w = new ProtoWriter(1 << 16);
  w.int(1, 8);
  w.string(2, m.producer ?? 'corl');
  if (m.producerVersion) w.string(3, m.producerVersion);
  if (m.docString) w.string(6, m.docString);
  w.message(7, (g) => {
    m.nodes.forEach((n, i) =>
      g.message(1, (nw) => {
        for (const x of n.inputs) nw.string(1, x);
        for (const x of n.outputs) nw.string(2, x);
        nw.string(3, n.name ?? `${n.op}_${i}`);
        nw.string(4, n.op);
        for (const [k, a] of Object.entries(n.attributes ?? {})) nw.message(5, (aw) => writeAttribute(aw, k, a));
        if (n.domain) nw.string(7, n.domain);
      }),
    );
    g.string(2, m.name);
    for (const t of m.initializers ?? []) g.message(5, (tw) => writeTensor(tw, t));
    for (const v of m.inputs) g.message(11, (vw) => writeValueInfo(vw, v));
    for (const v of m.outputs) g.message(12, (vw) => writeValueInfo(vw, v));
  });
  for (const [domain, version] of Object.entries(m.opsets)) {
    w.message(8, (o) => {
      if (domain) o.string(1, domain);
      o.int(2, version);
    });
  }
  for (const [k, v] of Object.entries(m.metadata ?? {})) w.message(14, (e) => e.string(1, k).string(2, v));
  return w.finish().slice();
}
