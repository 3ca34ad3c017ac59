// Symbolic dimensions. A dimension is a size (number) or a symbol such as 'B' or 'T' that is bound
// when a graph runs; reshapes may form products ('B*T', '2*B'). Products are kept canonical (the
// coefficient first, then the symbols sorted) so that equality is string equality.
import { CorlError } from '../errors';

/** A tensor dimension: a fixed size or a symbolic one bound at run time. */
export type Dim = number | string;
/** A tensor shape. */
export type Shape = readonly Dim[];

const SYMBOL = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Monomial {
  readonly c: number;
  readonly syms: readonly string[];
}

function parse(d: Dim): Monomial {
  if (typeof d === 'number') return { c: d, syms: [] };
  let c = 1;
  const syms: string[] = [];
  for (const part of d.split('*')) {
    if (/^\d+$/.test(part)) c *= Number(part);
    else if (SYMBOL.test(part)) syms.push(part);
    else
      throw new CorlError(
        'CORL_ERR_TENSOR_SHAPE',
        `expected a dimension symbol (letters, digits, _) or a product of them, got "${d}"`,
      );
  }
  return { c, syms: syms.sort() };
}

function make(m: Monomial): Dim {
  if (m.syms.length === 0) return m.c;
  return (m.c === 1 ? '' : `${m.c}*`) + m.syms.join('*');
}

/** Canonical form of a dimension (validates symbols). */
export function dim(d: Dim): Dim {
  if (typeof d === 'number') {
    if (!Number.isInteger(d) || d < 0)
      throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected a non-negative integer dimension, got ${d}`);
    return d;
  }
  return make(parse(d));
}

/** Whether two dimensions are provably equal. */
export function dimEq(a: Dim, b: Dim): boolean {
  return make(parse(a)) === make(parse(b));
}

/** a · b. */
export function dimMul(a: Dim, b: Dim): Dim {
  const x = parse(a);
  const y = parse(b);
  return make({ c: x.c * y.c, syms: [...x.syms, ...y.syms].sort() });
}

/** a / b when it divides exactly (symbol by symbol), else undefined. */
export function dimDiv(a: Dim, b: Dim): Dim | undefined {
  const x = parse(a);
  const y = parse(b);
  if (y.c === 0 || x.c % y.c !== 0) return undefined;
  const rest = [...x.syms];
  for (const s of y.syms) {
    const i = rest.indexOf(s);
    if (i < 0) return undefined;
    rest.splice(i, 1);
  }
  return make({ c: x.c / y.c, syms: rest });
}

/** Product of all dimensions. */
export function shapeSize(shape: Shape): Dim {
  return shape.reduce<Dim>((acc, d) => dimMul(acc, d), 1);
}

/** Whether every dimension is a number. */
export function isStatic(shape: Shape): shape is readonly number[] {
  return shape.every((d) => typeof d === 'number');
}

/** "[B, T, 128]". */
export function formatShape(shape: Shape): string {
  return `[${shape.join(', ')}]`;
}

/** Whether two shapes are provably equal. */
export function shapeEq(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => dimEq(d, b[i]!));
}

/** Size of a dimension under symbol bindings. */
export function resolveDim(d: Dim, bindings: ReadonlyMap<string, number>): number {
  const m = parse(d);
  let v = m.c;
  for (const s of m.syms) {
    const b = bindings.get(s);
    if (b === undefined)
      throw new CorlError(
        'CORL_ERR_TENSOR_SHAPE',
        `expected dimension symbol ${s} to be bound by an input, got no input with it`,
      );
    v *= b;
  }
  return v;
}

/**
 * Bind the symbols of `shape` to the sizes of `actual` (extending `bindings`); throws when a fixed
 * size or an already bound symbol disagrees. Products must already be bound through their parts.
 */
export function bindShape(shape: Shape, actual: readonly number[], bindings: Map<string, number>, what: string): void {
  if (shape.length !== actual.length) {
    throw new CorlError(
      'CORL_ERR_TENSOR_SHAPE',
      `expected ${what} of rank ${shape.length} ${formatShape(shape)}, got rank ${actual.length} [${actual.join(', ')}]`,
    );
  }
  shape.forEach((d, i) => {
    const n = actual[i]!;
    if (typeof d === 'string' && SYMBOL.test(d)) {
      const prev = bindings.get(d);
      if (prev === undefined) bindings.set(d, n);
      else if (prev !== n)
        throw new CorlError(
          'CORL_ERR_TENSOR_SHAPE',
          `expected ${what} dimension ${i} (${d}) to be ${prev} like the other inputs, got ${n}`,
        );
      return;
    }
    const want = resolveDim(d, bindings);
    if (want !== n)
      throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected ${what} dimension ${i} to be ${d} = ${want}, got ${n}`);
  });
}

/** Numpy broadcasting of two shapes (right-aligned; a dimension broadcasts only when it is literally 1). */
export function broadcastShapes(a: Shape, b: Shape, what: string): Dim[] {
  const n = Math.max(a.length, b.length);
  const out: Dim[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (dimEq(x, y)) out.push(x);
    else if (x === 1) out.push(y);
    else if (y === 1) out.push(x);
    else
      throw new CorlError(
        'CORL_ERR_TENSOR_SHAPE',
        `expected broadcastable shapes in ${what}, got ${formatShape(a)} and ${formatShape(b)} (dimension ${i}: ${x} vs ${y})`,
      );
  }
  return out;
}
