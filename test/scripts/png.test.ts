import { expect } from 'chai';
import * as zlib from 'node:zlib';
import { compressPng, decodePng, encodeIndexedPng, paletteOf, type RgbImage } from '../../scripts/png';

/** A truecolour PNG (colour type 2, or 6 with alpha) whose rows use filters 0 … 4 in turn, as encoders may. */
function truecolourPng(image: RgbImage, alpha = false): Buffer {
  const bpp = alpha ? 4 : 3;
  const stride = image.width * bpp;
  const rows: Buffer[] = [];
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < image.height; y++) {
    const row = Buffer.alloc(stride);
    for (let x = 0; x < image.width; x++) {
      for (let k = 0; k < 3; k++) row[x * bpp + k] = image.rgb[(y * image.width + x) * 3 + k]!;
      if (alpha) row[x * bpp + 3] = 255;
    }
    const filter = y % 5;
    const out = Buffer.alloc(stride + 1);
    out[0] = filter;
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? row[i - bpp]! : 0;
      const b = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const pred = [0, a, b, (a + b) >> 1, paeth][filter]!;
      out[1 + i] = (row[i]! - pred) & 255;
    }
    rows.push(out);
    prev = row;
  }
  const chunk = (kind: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(kind, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(image.width, 0);
  ihdr.writeUInt32BE(image.height, 4);
  ihdr[8] = 8;
  ihdr[9] = alpha ? 6 : 2;
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** width × height pixels, each f(x, y) as [r, g, b]. */
function image(width: number, height: number, f: (x: number, y: number) => [number, number, number]): RgbImage {
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) rgb.set(f(x, y), (y * width + x) * 3);
  return { width, height, rgb };
}

describe('scripts/png (small PNGs for the docs)', () => {
  it('decodes truecolour PNGs through all five row filters, with and without alpha', () => {
    const img = image(7, 10, (x, y) => [(x * 37 + y * 11) & 255, (x * y * 13) & 255, (255 - x * 20 - y) & 255]);
    for (const alpha of [false, true]) {
      const back = decodePng(truecolourPng(img, alpha));
      expect([back.width, back.height]).to.deep.equal([7, 10]);
      expect(Buffer.from(back.rgb).equals(Buffer.from(img.rgb)), `alpha ${alpha}`).to.equal(true);
    }
    expect(() => decodePng(Buffer.from('not a png'))).to.throw('not a PNG');
  });

  it('a page of few colours is re-encoded exactly, as an indexed PNG', () => {
    // white page, black text, two series colours: four colours, the most frequent first
    const colours: [number, number, number][] = [
      [255, 255, 255],
      [0, 0, 0],
      [0, 114, 178],
      [213, 94, 0],
    ];
    const img = image(40, 30, (x, y) => colours[x < 20 ? 0 : y < 10 ? 1 : x < 30 ? 2 : 3]!);
    // 600 white, 200 black, 200 blue (x 20 … 29, y ≥ 10), 200 orange; ties by colour value
    expect(paletteOf(img)).to.deep.equal([0xffffff, 0x000000, 0x0072b2, 0xd55e00]);
    const png = compressPng(truecolourPng(img));
    expect(png[25]).to.equal(3); // IHDR colour type: indexed
    expect(Buffer.from(decodePng(png).rgb).equals(Buffer.from(img.rgb))).to.equal(true);
  });

  it('more than 256 colours: the frequent ones kept exactly, the rest within a few levels', () => {
    // a white page with a 64 × 64 gradient of 4096 colours in one corner
    const img = image(200, 100, (x, y) => (x < 64 && y < 64 ? [x * 4, y * 4, 128] : [255, 255, 255]));
    const palette = paletteOf(img);
    expect(palette).to.have.length(256);
    expect(palette[0]).to.equal(0xffffff);
    const back = decodePng(encodeIndexedPng(img, palette));
    let worst = 0;
    for (let i = 0; i < img.rgb.length; i++) worst = Math.max(worst, Math.abs(back.rgb[i]! - img.rgb[i]!));
    // 4096 gradient colours in 160 boxes: each box about 5 × 5 colours 4 levels apart (14 levels at worst here)
    expect(worst).to.be.at.most(16);
    expect(back.rgb.slice(-3)).to.deep.equal(new Uint8Array([255, 255, 255]));
    expect(() => encodeIndexedPng(img, [])).to.throw(RangeError);
  });
});
