// Reading back what corl writes: the initializers, inputs, outputs and metadata of an ONNX model
// (checkpoint loading). Field numbers as in model.ts. Anything malformed throws ProtoDecodeError
// or a CorlError; callers turn that into CORL_ERR_POLICY_CHECKPOINT.
import { decodeFields, fieldInts, fieldString, ProtoDecodeError, type ProtoField } from './proto';
import { ONNX_DTYPE, type OnnxDtype, type OnnxTensor } from './model';

/** What a model holds, as far as corl needs it. */
export interface ReadModel {
  readonly irVersion: number;
  readonly producer: string;
  readonly opsets: Record<string, number>;
  readonly graphName: string;
  readonly nodeCount: number;
  readonly inputs: string[];
  readonly outputs: string[];
  readonly initializers: Map<string, OnnxTensor>;
  readonly metadata: Record<string, string>;
}

const DTYPE_BY_NUMBER = new Map<number, OnnxDtype>(Object.entries(ONNX_DTYPE).map(([k, v]) => [v, k as OnnxDtype]));

function one(fields: ProtoField[], n: number): ProtoField | undefined {
  let last: ProtoField | undefined;
  for (const f of fields) if (f.field === n) last = f;
  return last;
}

function readTensor(bytes: Uint8Array): OnnxTensor {
  const f = decodeFields(bytes);
  const dims = f
    .filter((x) => x.field === 1)
    .flatMap(fieldInts)
    .map(Number);
  const dt = Number(one(f, 2)?.varint ?? 0n);
  const dtype = DTYPE_BY_NUMBER.get(dt);
  if (!dtype) throw new ProtoDecodeError(`unsupported tensor data type ${dt}`);
  const name = fieldString(one(f, 8) ?? { field: 8, wire: 2, bytes: new Uint8Array() });
  const raw = one(f, 9)?.bytes;
  const n = dims.reduce((a, b) => a * b, 1);
  const copy = (bytesPer: number) => {
    if (!raw) throw new ProtoDecodeError(`tensor "${name}" has no raw_data`);
    if (raw.length !== n * bytesPer)
      throw new ProtoDecodeError(
        `tensor "${name}" of shape [${dims.join(', ')}] needs ${n * bytesPer} bytes, has ${raw.length}`,
      );
    const buf = new ArrayBuffer(raw.length);
    new Uint8Array(buf).set(raw);
    return buf;
  };
  let data: OnnxTensor['data'];
  switch (dtype) {
    case 'float32':
      data = new Float32Array(copy(4));
      break;
    case 'int32':
      data = new Int32Array(copy(4));
      break;
    case 'int64':
      data = new BigInt64Array(copy(8));
      break;
    case 'float64':
      data = new Float64Array(copy(8));
      break;
    default:
      data = new Uint8Array(copy(1));
  }
  return { name, dtype, dims, data };
}

function valueName(bytes: Uint8Array): string {
  const f = one(decodeFields(bytes), 1);
  return f ? fieldString(f) : '';
}

/** Decode an ONNX model's bytes. */
export function readModel(bytes: Uint8Array): ReadModel {
  const top = decodeFields(bytes);
  const graphField = one(top, 7);
  if (!graphField?.bytes) throw new ProtoDecodeError('no graph in the model');
  const g = decodeFields(graphField.bytes);
  const initializers = new Map<string, OnnxTensor>();
  for (const f of g.filter((x) => x.field === 5)) {
    const t = readTensor(f.bytes!);
    initializers.set(t.name, t);
  }
  const opsets: Record<string, number> = {};
  for (const f of top.filter((x) => x.field === 8)) {
    const o = decodeFields(f.bytes!);
    const d = one(o, 1);
    opsets[d ? fieldString(d) : ''] = Number(one(o, 2)?.varint ?? 0n);
  }
  const metadata: Record<string, string> = {};
  for (const f of top.filter((x) => x.field === 14)) {
    const e = decodeFields(f.bytes!);
    const k = one(e, 1);
    const v = one(e, 2);
    if (k) metadata[fieldString(k)] = v ? fieldString(v) : '';
  }
  const name = one(g, 2);
  const producer = one(top, 2);
  return {
    irVersion: Number(one(top, 1)?.varint ?? 0n),
    producer: producer ? fieldString(producer) : '',
    opsets,
    graphName: name ? fieldString(name) : '',
    nodeCount: g.filter((x) => x.field === 1).length,
    inputs: g.filter((x) => x.field === 11).map((f) => valueName(f.bytes!)),
    outputs: g.filter((x) => x.field === 12).map((f) => valueName(f.bytes!)),
    initializers,
    metadata,
  };
}
