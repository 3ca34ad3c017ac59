import { expect } from 'chai';
import {
  decodeFields,
  fieldInts,
  fieldString,
  ProtoDecodeError,
  ProtoWriter,
} from '../../../../core/tensor/onnx/proto';

describe('core/tensor/onnx/proto (wire format)', () => {
  it('encodes varints as the protobuf documentation shows', () => {
    expect([...new ProtoWriter().varint(150).finish()]).to.deep.equal([0x96, 0x01]);
    expect([...new ProtoWriter().int(1, 150).finish()]).to.deep.equal([0x08, 0x96, 0x01]);
    expect([...new ProtoWriter().string(2, 'testing').finish()]).to.deep.equal([
      0x12, 0x07, 0x74, 0x65, 0x73, 0x74, 0x69, 0x6e, 0x67,
    ]);
    expect(new ProtoWriter().varint(-1).finish().length).to.equal(10);
  });

  it('round-trips fields, nested messages and packed ints', () => {
    const w = new ProtoWriter(4);
    w.int(1, 2 ** 40)
      .string(2, 'héllo')
      .message(3, (m) => m.int(1, 7).float(2, 0.5))
      .packedInts(4, [1, 300, -1]);
    const f = decodeFields(w.finish());
    expect(f.map((x) => x.field)).to.deep.equal([1, 2, 3, 4]);
    expect(f[0]!.varint).to.equal(2n ** 40n);
    expect(fieldString(f[1]!)).to.equal('héllo');
    const inner = decodeFields(f[2]!.bytes!);
    expect(inner[0]!.varint).to.equal(7n);
    expect(new DataView(inner[1]!.bytes!.buffer, inner[1]!.bytes!.byteOffset, 4).getFloat32(0, true)).to.equal(0.5);
    expect(fieldInts(f[3]!).map((v) => BigInt.asIntN(64, v))).to.deep.equal([1n, 300n, -1n]);
  });

  it('rejects truncated and malformed input', () => {
    const good = new ProtoWriter().string(1, 'abcdef').finish();
    expect(() => decodeFields(good.subarray(0, 4))).to.throw(ProtoDecodeError, /runs past the end/);
    expect(() => decodeFields(Uint8Array.from([0x08, 0x96]))).to.throw(ProtoDecodeError, /truncated varint/);
    expect(() => decodeFields(Uint8Array.from([0x0b]))).to.throw(ProtoDecodeError, /wire type 3/);
  });
});
