// Host kernels shared by the reference implementations: broadcasting, axis normalization, typed storage.
import { CorlError } from '../../errors';
import { broadcastShapes } from '../dim';
import { HostTensor, strides, type DType, type TensorArray } from '../host';

/** Fresh storage for a dtype (floats in float64: the reference evaluator computes in double precision). */
export function alloc(dtype: DType, n: number): TensorArray {
  switch (dtype) {
    case 'float32':
      return new Float64Array(n);
    case 'int32':
      return new Int32Array(n);
    case 'int64':
      return new BigInt64Array(n);
    case 'bool':
      return new Uint8Array(n);
  }
}

/** Element as a number. */
export function num(t: HostTensor, i: number): number {
  const v = t.data[i]!;
  return typeof v === 'bigint' ? Number(v) : v;
}

/** A negative axis counted from the end, checked against the rank. */
export function normAxis(axis: number, rank: number, what = 'axis'): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rank)
    throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected ${what} in [${-rank}, ${rank - 1}], got ${axis}`);
  return a;
}

/**
 * For each element of `outShape` (in row-major order), the flat index `base + Σ_d c_d · weights[d]`
 * of its coordinates c: an affine map from the output's elements to a source tensor's.
 */
export function affineIndex(outShape: readonly number[], weights: readonly number[], base = 0): Int32Array {
  const n = outShape.reduce((a, b) => a * b, 1);
  const idx = new Int32Array(n);
  const r = outShape.length;
  const ost = strides(outShape);
  for (let i = 0; i < n; i++) {
    let rem = i;
    let j = base;
    for (let d = 0; d < r; d++) {
      const c = Math.floor(rem / ost[d]!);
      rem -= c * ost[d]!;
      j += c * weights[d]!;
    }
    idx[i] = j;
  }
  return idx;
}

/** For each element of `outShape`, the flat index into a tensor of `shape` broadcast to it. */
export function broadcastIndex(shape: readonly number[], outShape: readonly number[]): Int32Array {
  const off = outShape.length - shape.length;
  const st = strides(shape);
  // a broadcast (size-1 or missing) dimension does not move the source index
  return affineIndex(
    outShape,
    outShape.map((_, d) => (d >= off && shape[d - off]! !== 1 ? st[d - off]! : 0)),
  );
}

/** Elementwise map over broadcast inputs. */
export function broadcastMap(inputs: readonly HostTensor[], dtype: DType, f: (xs: number[]) => number): HostTensor {
  let shape: readonly number[] = [];
  for (const t of inputs) shape = broadcastShapes(shape, t.shape, 'kernel') as number[];
  const n = shape.reduce((a, b) => a * b, 1);
  const idx = inputs.map((t) => broadcastIndex(t.shape, shape));
  const out = alloc(dtype, n);
  const xs = new Array<number>(inputs.length);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < inputs.length; k++) xs[k] = num(inputs[k]!, idx[k]![i]!);
    const v = f(xs);
    if (out instanceof BigInt64Array) out[i] = BigInt(Math.trunc(v));
    else out[i] = v;
  }
  return new HostTensor(dtype, shape, out);
}

/** Reduce `x` over `axes` with a binary accumulator starting at `init`. */
export function reduce(
  x: HostTensor,
  axes: readonly number[],
  keepdims: boolean,
  init: number,
  f: (acc: number, v: number) => number,
  finish?: (acc: number, count: number) => number,
): HostTensor {
  const r = x.shape.length;
  const ax = new Set(axes.map((a) => normAxis(a, r)));
  const kept = x.shape.map((d, i) => (ax.has(i) ? 1 : d));
  const n = kept.reduce((a, b) => a * b, 1);
  const count = x.shape.reduce((acc, d, i) => (ax.has(i) ? acc * d : acc), 1);
  const acc = new Float64Array(n).fill(init);
  const kst = strides(kept);
  const xst = strides(x.shape);
  for (let i = 0; i < x.size; i++) {
    let rem = i;
    let j = 0;
    for (let d = 0; d < r; d++) {
      const c = Math.floor(rem / xst[d]!);
      rem -= c * xst[d]!;
      if (!ax.has(d)) j += c * kst[d]!;
    }
    acc[j] = f(acc[j]!, num(x, i));
  }
  if (finish) for (let j = 0; j < n; j++) acc[j] = finish(acc[j]!, count);
  const shape = keepdims ? kept : x.shape.filter((_, i) => !ax.has(i));
  return new HostTensor('float32', shape, acc);
}
