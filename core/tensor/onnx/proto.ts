// A minimal protocol-buffers wire encoder and decoder: enough for the ONNX messages corl writes
// (ModelProto, GraphProto, NodeProto, TensorProto, ...) and reads back from its own checkpoints.
// Wire format: https://protobuf.dev/programming-guides/encoding/ (varints, length-delimited fields).

/** Growable byte buffer with the protobuf primitives. */
export class ProtoWriter {
  private buf: Uint8Array;
  private len = 0;

  constructor(initial = 256) {
    this.buf = new Uint8Array(initial);
  }

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** Unsigned varint of a non-negative safe integer (or a negative int64, as ten bytes of two's complement). */
  varint(value: number | bigint): this {
    let v =
      typeof value === 'bigint' ? BigInt.asUintN(64, value) : value < 0 ? BigInt.asUintN(64, BigInt(value)) : value;
    this.reserve(10);
    if (typeof v === 'number') {
      while (v >= 0x80) {
        this.buf[this.len++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      this.buf[this.len++] = v;
    } else {
      while (v >= 0x80n) {
        this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
        v >>= 7n;
      }
      this.buf[this.len++] = Number(v);
    }
    return this;
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  /** An int32/int64/enum/bool field (wire type 0). */
  int(field: number, value: number | bigint): this {
    this.tag(field, 0);
    return this.varint(value);
  }

  /** A 32-bit float field (wire type 5). */
  float(field: number, value: number): this {
    this.tag(field, 5);
    this.reserve(4);
    new DataView(this.buf.buffer, this.buf.byteOffset + this.len, 4).setFloat32(0, value, true);
    this.len += 4;
    return this;
  }

  /** A length-delimited field holding raw bytes. */
  bytes(field: number, data: Uint8Array): this {
    this.tag(field, 2);
    this.varint(data.length);
    this.reserve(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
    return this;
  }

  /** A UTF-8 string field. */
  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }

  /** An embedded message field, written by `write` into a nested writer. */
  message(field: number, write: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter(64);
    write(inner);
    return this.bytes(field, inner.finish());
  }

  /** A packed repeated varint field. */
  packedInts(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtoWriter(values.length * 2 + 8);
    for (const v of values) inner.varint(v);
    return this.bytes(field, inner.finish());
  }

  /** A packed repeated float field. */
  packedFloats(field: number, values: readonly number[]): this {
    const f = new Float32Array(values);
    return this.bytes(field, new Uint8Array(f.buffer, f.byteOffset, f.byteLength));
  }

  /** The encoded bytes (a view, valid until the next write). */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

/** One decoded field: its number, wire type and value (number for varints and fixed32, bytes for length-delimited). */
export interface ProtoField {
  readonly field: number;
  readonly wire: number;
  /** Varint value (as a bigint, exact for int64) for wire type 0. */
  readonly varint?: bigint;
  /** Little-endian fixed32/fixed64 payload or length-delimited payload. */
  readonly bytes?: Uint8Array;
}

/** Thrown for bytes that are not a well-formed protobuf message. */
export class ProtoDecodeError extends Error {}

/** Decode the fields of one message (not recursive: embedded messages stay as bytes). */
export function decodeFields(data: Uint8Array): ProtoField[] {
  const out: ProtoField[] = [];
  let pos = 0;
  const readVarint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= data.length) throw new ProtoDecodeError(`truncated varint at byte ${pos}`);
      const b = data[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new ProtoDecodeError(`varint longer than 10 bytes at byte ${pos}`);
    }
  };
  while (pos < data.length) {
    const key = readVarint();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (field === 0) throw new ProtoDecodeError(`field number 0 at byte ${pos}`);
    switch (wire) {
      case 0:
        out.push({ field, wire, varint: readVarint() });
        break;
      case 1:
        if (pos + 8 > data.length) throw new ProtoDecodeError(`truncated fixed64 at byte ${pos}`);
        out.push({ field, wire, bytes: data.subarray(pos, pos + 8) });
        pos += 8;
        break;
      case 2: {
        const n = Number(readVarint());
        if (pos + n > data.length) throw new ProtoDecodeError(`length ${n} runs past the end at byte ${pos}`);
        out.push({ field, wire, bytes: data.subarray(pos, pos + n) });
        pos += n;
        break;
      }
      case 5:
        if (pos + 4 > data.length) throw new ProtoDecodeError(`truncated fixed32 at byte ${pos}`);
        out.push({ field, wire, bytes: data.subarray(pos, pos + 4) });
        pos += 4;
        break;
      default:
        throw new ProtoDecodeError(`unsupported wire type ${wire} at byte ${pos}`);
    }
  }
  return out;
}

/** Decode a length-delimited field's bytes as UTF-8. */
export function fieldString(f: ProtoField): string {
  return new TextDecoder().decode(f.bytes ?? new Uint8Array());
}

/** Decode a packed (or single unpacked) repeated varint field. */
export function fieldInts(f: ProtoField): bigint[] {
  if (f.wire === 0) return [f.varint!];
  const out: bigint[] = [];
  const data = f.bytes!;
  let pos = 0;
  while (pos < data.length) {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= data.length) throw new ProtoDecodeError('truncated packed varint');
      const b = data[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
    }
    out.push(result);
  }
  return out;
}
