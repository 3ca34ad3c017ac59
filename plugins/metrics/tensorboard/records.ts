// TensorBoard's event files: TFRecord framing around `Event` protocol buffers. A record is
//   uint64 length (little-endian) · uint32 masked CRC32C of those 8 bytes · data · uint32 masked CRC32C of data
// where masked(c) = ((c >>> 15) | (c << 17)) + 0xa282ead8 (mod 2^32) and CRC32C is the Castagnoli CRC
// (reflected polynomial 0x82f63b78). The messages, with their field numbers (TensorBoard's
// compat/proto/event.proto, summary.proto, tensor.proto, tensor_shape.proto, types.proto and
// plugins/text/plugin_data.proto):
//   Event { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5;
//           SourceMetadata source_metadata = 10 { string writer = 1 } }
//   Summary { repeated Value value = 1 }
//   Value { string tag = 1; float simple_value = 2; TensorProto tensor = 8; SummaryMetadata metadata = 9 }
//   SummaryMetadata { PluginData plugin_data = 1 { string plugin_name = 1; bytes content = 2 } }
//   TensorProto { DataType dtype = 1 (DT_STRING = 7); TensorShapeProto tensor_shape = 2 (no dims: a scalar);
//                 repeated bytes string_val = 8 }
// A text summary is a string tensor whose metadata names the plugin "text"; its content is the
// serialized TextPluginData { int32 version = 1 } of version 0, which is empty.
import { Reader, Writer } from 'protobufjs/minimal';

/** The file version string TensorBoard's own writers put in the first event of a file. */
export const FILE_VERSION = 'brain.Event:2';

/** What corl names as the writer in the first event (`source_metadata.writer`). */
export const WRITER = 'corl';

const DT_STRING = 7;

let table: Uint32Array | undefined;

/** The CRC32C (Castagnoli) of bytes. */
export function crc32c(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      table[i] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const b of data) crc = table[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The masked CRC32C TFRecord stores (so that a CRC of data holding CRCs is not degenerate). */
export function maskedCrc32c(data: Uint8Array): number {
  const c = crc32c(data);
  return (((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0;
}

/** One TFRecord: the framing around `data`. */
export function frame(data: Uint8Array): Buffer {
  const out = Buffer.alloc(8 + 4 + data.length + 4);
  out.writeBigUInt64LE(BigInt(data.length), 0);
  out.writeUInt32LE(maskedCrc32c(out.subarray(0, 8)), 8);
  out.set(data, 12);
  out.writeUInt32LE(maskedCrc32c(data), 12 + data.length);
  return out;
}

/** The records of a file, in order, and where its last whole record ends. */
export interface Unframed {
  readonly records: Uint8Array[];
  /** Bytes of whole, intact records from the start: a torn record at the end is not counted. */
  readonly end: number;
  /** Why reading stopped before the end of the file, when it did. */
  readonly problem?: string;
  /** Whether that problem is a last record cut short (an append that a stop interrupted), not a bad CRC. */
  readonly torn?: boolean;
}

/**
 * Split a file into its records, checking both CRCs of each. A record cut short at the end (a
 * process killed while appending) stops the reading there; so does a CRC that does not match,
 * which `problem` then reports with its byte offset.
 */
export function unframe(bytes: Buffer): Unframed {
  const records: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 12) return { records, end: at, problem: `a record cut short at byte ${at}`, torn: true };
    const header = bytes.subarray(at, at + 8);
    if (bytes.readUInt32LE(at + 8) !== maskedCrc32c(header))
      return { records, end: at, problem: `the length CRC of the record at byte ${at} does not match` };
    const length = bytes.readBigUInt64LE(at);
    if (length > BigInt(bytes.length - at - 16))
      return { records, end: at, problem: `a record cut short at byte ${at}`, torn: true };
    const n = Number(length);
    const data = bytes.subarray(at + 12, at + 12 + n);
    if (bytes.readUInt32LE(at + 12 + n) !== maskedCrc32c(data))
      return { records, end: at, problem: `the data CRC of the record at byte ${at} does not match` };
    records.push(data);
    at += 16 + n;
  }
  return { records, end: at };
}

/** The first event of every file: its version and writer. */
export function fileVersionEvent(wallTime: number): Uint8Array {
  const w = Writer.create();
  w.uint32((1 << 3) | 1).double(wallTime);
  w.uint32((3 << 3) | 2).string(FILE_VERSION);
  w.uint32((10 << 3) | 2).fork();
  w.uint32((1 << 3) | 2).string(WRITER);
  w.ldelim();
  return w.finish();
}

/** An event holding one scalar summary value per entry, all at `step`. */
export function scalarsEvent(
  wallTime: number,
  step: number,
  values: readonly (readonly [string, number])[],
): Uint8Array {
  const w = Writer.create();
  w.uint32((1 << 3) | 1).double(wallTime);
  w.uint32((2 << 3) | 0).int64(step);
  w.uint32((5 << 3) | 2).fork();
  for (const [tag, value] of values) {
    w.uint32((1 << 3) | 2).fork();
    w.uint32((1 << 3) | 2).string(tag);
    w.uint32((2 << 3) | 5).float(value);
    w.ldelim();
  }
  w.ldelim();
  return w.finish();
}

/** An event holding one text summary (TensorBoard's Text tab renders it as Markdown). */
export function textEvent(wallTime: number, step: number, tag: string, text: string): Uint8Array {
  const w = Writer.create();
  w.uint32((1 << 3) | 1).double(wallTime);
  w.uint32((2 << 3) | 0).int64(step);
  w.uint32((5 << 3) | 2).fork();
  w.uint32((1 << 3) | 2).fork();
  w.uint32((1 << 3) | 2).string(tag);
  w.uint32((8 << 3) | 2).fork(); // tensor
  w.uint32((1 << 3) | 0).int32(DT_STRING);
  w.uint32((2 << 3) | 2)
    .fork()
    .ldelim(); // tensor_shape with no dims: a scalar
  w.uint32((8 << 3) | 2).bytes(Buffer.from(text, 'utf8'));
  w.ldelim();
  w.uint32((9 << 3) | 2).fork(); // metadata
  w.uint32((1 << 3) | 2).fork(); // plugin_data
  w.uint32((1 << 3) | 2).string('text');
  w.uint32((2 << 3) | 2).bytes(new Uint8Array(0)); // TextPluginData { version: 0 }: no bytes
  w.ldelim();
  w.ldelim();
  w.ldelim();
  w.ldelim();
  return w.finish();
}

/**
 * The step of an event, or null for an event without one (the file-version event, whose step is
 * the default 0 and which every file keeps). Only the fields corl writes are read; others are skipped.
 */
export function eventStep(data: Uint8Array): number | null {
  const r = Reader.create(data);
  let step = 0;
  let isVersion = false;
  while (r.pos < r.len) {
    const key = r.uint32();
    const field = key >>> 3;
    if (field === 2 && (key & 7) === 0) step = Number(r.int64().toString());
    else {
      if (field === 3) isVersion = true;
      r.skipType(key & 7);
    }
  }
  return isVersion ? null : step;
}
