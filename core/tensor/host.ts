// Tensors in host memory: what the reference evaluator computes with and what sessions take and return.
import { CorlError } from '../errors';

/** Element types of the graph IR. */
export type DType = 'float32' | 'int32' | 'int64' | 'bool';

/** Typed array that can hold a tensor's elements. Float tensors may be held in float64 by the reference evaluator. */
export type TensorArray = Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array;

/** A dense row-major tensor with concrete dimensions. */
export class HostTensor {
  constructor(
    readonly dtype: DType,
    readonly shape: readonly number[],
    readonly data: TensorArray,
  ) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (data.length !== n)
      throw new CorlError(
        'CORL_ERR_TENSOR_SHAPE',
        `expected ${n} elements for shape [${shape.join(', ')}], got ${data.length}`,
      );
  }

  /** Number of elements. */
  get size(): number {
    return this.data.length;
  }

  /** A float tensor from numbers (float64 storage). */
  static float(shape: readonly number[], values: ArrayLike<number> | number): HostTensor {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float64Array(n);
    if (typeof values === 'number') data.fill(values);
    else data.set(values);
    return new HostTensor('float32', shape, data);
  }

  /** An int32 tensor. */
  static int(shape: readonly number[], values: ArrayLike<number>): HostTensor {
    return new HostTensor('int32', shape, Int32Array.from(values));
  }

  /** The element at a flat index as a number. */
  at(i: number): number {
    const v = this.data[i]!;
    return typeof v === 'bigint' ? Number(v) : v;
  }

  /** The elements as plain numbers. */
  toArray(): number[] {
    return Array.from(this.data as ArrayLike<number | bigint>, (v) => Number(v));
  }
}

/** Row-major strides of a shape. */
export function strides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i]!;
  }
  return s;
}
