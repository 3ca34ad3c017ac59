// Array helpers for hot paths.

/**
 * `xs.map(f)`, always as a packed array. V8 builds `map`'s result packed in the interpreter and
 * holey once the calling function is optimized: arrays whose kind changes when their producer is
 * optimized send every optimized consumer back ("wrong map") to be compiled again. On the
 * service's request path those deopt-and-recompile rounds were a large part of what a freshly
 * started process spends; a `push` loop gives the same kind in every tier.
 */
export function mapPacked<T, U>(xs: readonly T[], f: (x: T, i: number) => U): U[] {
  const out: U[] = [];
  for (let i = 0; i < xs.length; i++) out.push(f(xs[i]!, i));
  return out;
}
