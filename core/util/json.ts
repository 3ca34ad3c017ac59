// Nesting limits for JSON read from users: JSON.parse itself reads any depth, but what corl does
// next (copying, freezing, validating, writing back) recurses, and a file nested thousands deep
// would end in a stack overflow instead of a coded error.

/** The deepest nesting of objects and arrays corl reads from a config or a data file. */
export const MAX_JSON_DEPTH = 100;

/** Where a text first nests deeper than `max` (1-based line and column), or undefined. Strings and comments are skipped. */
export function tooDeep(text: string, max: number = MAX_JSON_DEPTH): { line: number; column: number } | undefined {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 /* \n */) {
      line++;
      lineStart = i + 1;
    } else if (c === 34 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34 || d === 10) break;
      }
      if (text.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    } else if (c === 47 /* / */ && text.charCodeAt(i + 1) === 47) {
      while (i < text.length && text.charCodeAt(i) !== 10) i++;
      i--;
    } else if (c === 47 && text.charCodeAt(i + 1) === 42 /* * */) {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (let k = i; k < stop; k++)
        if (text.charCodeAt(k) === 10) {
          line++;
          lineStart = k + 1;
        }
      i = stop - 1;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) return { line, column: i - lineStart + 1 };
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    }
  }
  return undefined;
}

/**
 * `JSON.parse` for text from users, refusing nesting deeper than `max` with a SyntaxError that says
 * where (callers already turn a SyntaxError into their coded error).
 */
export function parseJson(text: string, max: number = MAX_JSON_DEPTH): unknown {
  const at = tooDeep(text, max);
  if (at) throw new SyntaxError(`nested more than ${max} levels deep at line ${at.line}, column ${at.column}`);
  return JSON.parse(text) as unknown;
}

/** The nesting depth of a value (objects and arrays), counted without recursion; stops counting past `max`. */
export function depthOf(value: unknown, max: number = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }];
  const seen = new Set<unknown>();
  while (stack.length) {
    const { v, d } = stack.pop()!;
    if (!v || typeof v !== 'object' || seen.has(v)) continue;
    seen.add(v);
    const depth = d + 1;
    if (depth > deepest) deepest = depth;
    if (deepest > max) return deepest;
    for (const x of Object.values(v as Record<string, unknown>)) stack.push({ v: x, d: depth });
  }
  return deepest;
}
