// Small PNGs for the docs: Chromium writes its screenshots as 24-bit PNGs, fast to encode and large;
// a report page has few colours (white, greys, twelve series and their tints), so an indexed PNG of
// at most 256 colours, deflated at level 9, shows the same page at a third of the size.
import * as zlib from 'node:zlib';

/** An image as 8-bit RGB, row after row. */
export interface RgbImage {
  readonly width: number;
  readonly height: number;
  readonly rgb: Uint8Array;
}

const SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Decode an 8-bit, non-interlaced PNG: truecolour (with or without alpha, alpha dropped) or indexed. */
export function decodePng(png: Uint8Array): RgbImage {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (!buf.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let type = -1;
  let palette: Buffer | undefined;
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length;) {
    const len = buf.readUInt32BE(at);
    const kind = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (kind === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      type = data[9]!;
      if (data[8] !== 8 || data[12] !== 0 || ![2, 3, 6].includes(type))
        throw new Error(`unsupported PNG: bit depth ${data[8]}, colour type ${type}, interlace ${data[12]}`);
    } else if (kind === 'PLTE') palette = data;
    else if (kind === 'IDAT') idat.push(data);
    at += 12 + len;
  }
  const bpp = type === 2 ? 3 : type === 6 ? 4 : 1;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const prev = new Uint8Array(stride);
  const row = new Uint8Array(stride);
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const base = y * (stride + 1);
    const filter = raw[base]!;
    for (let i = 0; i < stride; i++) {
      const x = raw[base + 1 + i]!;
      const a = i >= bpp ? row[i - bpp]! : 0;
      const b = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      const pred =
        filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
      row[i] = (x + pred) & 255;
    }
    for (let p = 0; p < width; p++) {
      const o = (y * width + p) * 3;
      if (bpp === 1) {
        const k = row[p]! * 3;
        rgb[o] = palette![k]!;
        rgb[o + 1] = palette![k + 1]!;
        rgb[o + 2] = palette![k + 2]!;
      } else {
        rgb[o] = row[p * bpp]!;
        rgb[o + 1] = row[p * bpp + 1]!;
        rgb[o + 2] = row[p * bpp + 2]!;
      }
    }
    prev.set(row);
  }
  return { width, height, rgb };
}

/**
 * At most `size` colours for `image`: its `keep` most frequent colours exactly (the page's white,
 * text and the series' own colours), then a median cut of the others (anti-aliased edges), weighted by
 * how often each appears. Fewer colours than `size` in the image: all of them.
 */
export function paletteOf(image: RgbImage, size = 256, keep = 96): number[] {
  const counts = new Map<number, number>();
  for (let i = 0; i < image.rgb.length; i += 3) {
    const c = (image.rgb[i]! << 16) | (image.rgb[i + 1]! << 8) | image.rgb[i + 2]!;
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const byCount = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  if (byCount.length <= size) return byCount.map(([c]) => c);
  const kept = byCount.slice(0, keep).map(([c]) => c);
  const channel = (c: number, k: number): number => (c >> (16 - 8 * k)) & 255;
  let boxes: [number, number][][] = [byCount.slice(keep)];
  while (boxes.length < size - keep) {
    // split the box with the widest channel range (times its weight's square root) at its weighted median
    let best = -1;
    let bestScore = 0;
    let bestChannel = 0;
    boxes.forEach((box, i) => {
      if (box.length < 2) return;
      const weight = box.reduce((s, [, n]) => s + n, 0);
      for (let k = 0; k < 3; k++) {
        const vs = box.map(([c]) => channel(c, k));
        const score = (Math.max(...vs) - Math.min(...vs)) * Math.sqrt(weight);
        if (score > bestScore) [best, bestScore, bestChannel] = [i, score, k];
      }
    });
    if (best < 0) break;
    const box = [...boxes[best]!].sort((a, b) => channel(a[0], bestChannel) - channel(b[0], bestChannel));
    const half = box.reduce((s, [, n]) => s + n, 0) / 2;
    let acc = 0;
    let cut = 1;
    for (; cut < box.length - 1; cut++) if ((acc += box[cut - 1]![1]) >= half) break;
    boxes = [...boxes.slice(0, best), box.slice(0, cut), box.slice(cut), ...boxes.slice(best + 1)];
  }
  const means = boxes.map((box) => {
    const w = box.reduce((s, [, n]) => s + n, 0);
    const m = [0, 1, 2].map((k) => Math.round(box.reduce((s, [c, n]) => s + channel(c, k) * n, 0) / w));
    return (m[0]! << 16) | (m[1]! << 8) | m[2]!;
  });
  return [...kept, ...means];
}

function chunk(kind: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(kind, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** `image` as an indexed PNG with `palette` (each pixel its nearest colour), deflated at level 9. */
export function encodeIndexedPng(image: RgbImage, palette: readonly number[]): Buffer {
  if (palette.length === 0 || palette.length > 256)
    throw new RangeError(`expected 1 … 256 colours, got ${palette.length}`);
  const pr = palette.map((c) => (c >> 16) & 255);
  const pg = palette.map((c) => (c >> 8) & 255);
  const pb = palette.map((c) => c & 255);
  const nearest = new Map<number, number>();
  const index = (r: number, g: number, b: number): number => {
    const c = (r << 16) | (g << 8) | b;
    let k = nearest.get(c);
    if (k === undefined) {
      let best = Infinity;
      k = 0;
      for (let i = 0; i < palette.length; i++) {
        const d = (pr[i]! - r) ** 2 + (pg[i]! - g) ** 2 + (pb[i]! - b) ** 2;
        if (d < best) [best, k] = [d, i];
      }
      nearest.set(c, k);
    }
    return k;
  };
  const { width, height, rgb } = image;
  const raw = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      raw[y * (width + 1) + 1 + x] = index(rgb[o]!, rgb[o + 1]!, rgb[o + 2]!);
    }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 3;
  const plte = Buffer.alloc(palette.length * 3);
  palette.forEach((_, i) => {
    plte[3 * i] = pr[i]!;
    plte[3 * i + 1] = pg[i]!;
    plte[3 * i + 2] = pb[i]!;
  });
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('PLTE', plte),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A PNG re-encoded with at most 256 colours (see {@link paletteOf}). */
export function compressPng(png: Uint8Array): Buffer {
  const image = decodePng(png);
  return encodeIndexedPng(image, paletteOf(image));
}
