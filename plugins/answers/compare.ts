// Equality of two canonical keys beyond string identity: structures (tuples, intervals, sets, unions,
// matrices) element by element, then scalars by value (constants), by probing (expressions with
// variables, to reject quickly) and finally by the symbolic engine (asked through `symbolic`).
import { evaluateExpr, parseExpression, probeEnvironments, type ParsedExpr, type TextKey } from './expression';

/** A key read as a structure. */
export type Structure =
  | { readonly kind: 'scalar'; readonly key: string }
  /** Ordered, bracket types significant: tuples, points, intervals `[a,b)`. */
  | { readonly kind: 'tuple'; readonly open: string; readonly close: string; readonly items: readonly Structure[] }
  /** Unordered: `\{a,b\}`, bare lists "1, 2" (several solutions), and unions of intervals. */
  | { readonly kind: 'set'; readonly items: readonly Structure[] }
  | { readonly kind: 'matrix'; readonly rows: readonly (readonly Structure[])[] };

/** Largest number of elements compared element-wise (bigger structures are compared as text). */
const MAX_ITEMS = 64;

const OPENERS = new Set(['(', '[', '{']);
const CLOSERS = new Set([')', ']', '}']);

/** Depth-0 split points of `s` for the separator `sep` (generic bracket depth, `\{`/`\}` included). */
function splitTop(s: string, sep: string): string[] | null {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') {
      if (s.startsWith('\\{', i) || s.startsWith('\\begin', i)) depth++;
      else if (s.startsWith('\\}', i) || s.startsWith('\\end', i)) depth--;
      if (depth === 0 && sep.length > 1 && s.startsWith(sep, i)) {
        parts.push(s.slice(from, i));
        from = i + sep.length;
        i += sep.length - 1;
        continue;
      }
      i++;
      continue;
    }
    if (OPENERS.has(c)) depth++;
    else if (CLOSERS.has(c)) depth--;
    else if (depth === 0 && sep.length === 1 && c === sep) {
      parts.push(s.slice(from, i));
      from = i + 1;
    }
    if (depth < 0) return null;
    if (parts.length > MAX_ITEMS) return null;
  }
  if (depth !== 0) return null;
  parts.push(s.slice(from));
  return parts;
}

/** The index of the bracket closing the one at 0 (any closer type, for intervals), or −1. */
function closerOf(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') {
      if (s.startsWith('\\{', i)) depth++;
      else if (s.startsWith('\\}', i)) depth--;
      i++;
      continue;
    }
    if (OPENERS.has(c)) depth++;
    else if (CLOSERS.has(c) && --depth === 0) return i;
  }
  return -1;
}

/** Read a key as a structure (scalars are left as text; see {@link scalarEqual}). */
export function structureOf(key: string, depth = 0): Structure {
  if (depth > 8 || key.length === 0) return { kind: 'scalar', key };
  if (key.startsWith('\\begin{pmatrix}') && key.endsWith('\\end{pmatrix}')) {
    const inner = key.slice('\\begin{pmatrix}'.length, -'\\end{pmatrix}'.length);
    const rows = splitTop(inner, '\\\\');
    if (rows) {
      const cells = rows.filter((r, i) => r.length > 0 || i < rows.length - 1).map((r) => splitTop(r, '&'));
      if (cells.every((r) => r !== null) && cells.length <= MAX_ITEMS) {
        return { kind: 'matrix', rows: (cells as string[][]).map((r) => r.map((c) => structureOf(c, depth + 1))) };
      }
    }
    return { kind: 'scalar', key };
  }
  const union = splitTop(key, '\\cup');
  if (union && union.length > 1 && union.every((p) => p.length > 0))
    return { kind: 'set', items: union.map((p) => structureOf(p, depth + 1)) };
  if (key.startsWith('\\{') && key.endsWith('\\}') && closerOfSet(key) === key.length - 2) {
    const items = splitTop(key.slice(2, -2), ',');
    if (items) return { kind: 'set', items: items.filter((x) => x.length > 0).map((x) => structureOf(x, depth + 1)) };
  }
  const first = key[0]!;
  const last = key[key.length - 1]!;
  if ((first === '(' || first === '[') && (last === ')' || last === ']') && closerOf(key) === key.length - 1) {
    const items = splitTop(key.slice(1, -1), ',');
    if (items && items.length > 1)
      return { kind: 'tuple', open: first, close: last, items: items.map((x) => structureOf(x, depth + 1)) };
    // "(5)" is 5 in parentheses; "[5]" stays a one-element list
    if (items && first === '(' && last === ')') return structureOf(key.slice(1, -1), depth + 1);
    if (items) return { kind: 'tuple', open: first, close: last, items: items.map((x) => structureOf(x, depth + 1)) };
  }
  const bare = splitTop(key, ',');
  if (bare && bare.length > 1 && bare.every((p) => p.length > 0))
    return { kind: 'set', items: bare.map((p) => structureOf(p, depth + 1)) };
  return { kind: 'scalar', key };
}

function closerOfSet(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    if (s.startsWith('\\{', i)) {
      depth++;
      i++;
      continue;
    }
    if (s.startsWith('\\}', i)) {
      if (--depth === 0) return i;
      i++;
      continue;
    }
    if (s[i] === '\\') i++;
  }
  return -1;
}

/** How two scalars were found equal or not. */
export type Verdict = boolean | undefined;

/** Caches of the fast checks, shared by one equivalence instance. */
export class ParseCache {
  private readonly parsed = new Map<string, ParsedExpr | TextKey | null>();
  constructor(private readonly limit = 100_000) {}
  get(key: string): ParsedExpr | TextKey | null {
    let p = this.parsed.get(key);
    if (p === undefined && !this.parsed.has(key)) {
      p = parseExpression(key);
      if (this.parsed.size >= this.limit) this.parsed.clear();
      this.parsed.set(key, p);
    }
    return p ?? null;
  }
}

/** How far the fast checks may go. */
export interface FastCheckOptions {
  /** Relative tolerance of numeric equality. */
  readonly tolerance: number;
  /**
   * Accept agreement at every probe point (to 1e-10, at positive and negative points) as identity, as
   * compute-engine's own identity test does before its symbolic fallback; false leaves every
   * expression with variables that the probes do not reject to the symbolic engine.
   */
  readonly probeIdentity: boolean;
}

/** Relative agreement at a probe point that counts as identical (floating error, not tolerance). */
const TIGHT = 1e-10;
/** Conclusive probe points needed before agreement counts as identity. */
const MIN_CONCLUSIVE = 3;

/**
 * The in-process verdict on two scalar keys: true/false when it is certain, undefined when only the
 * symbolic engine can tell. Constants compare by value within `tolerance` (relative); expressions
 * with variables are evaluated at fixed probe points: a clear difference at any point is false, and
 * (with `probeIdentity`) agreement to floating precision at every point is true.
 */
export function scalarVerdict(a: string, b: string, options: FastCheckOptions, cache: ParseCache): Verdict {
  if (a === b) return true;
  const tolerance = options.tolerance;
  const pa = cache.get(a);
  const pb = cache.get(b);
  if (!pa || !pb) return undefined;
  // words ("yes", "Monday") compare as text, case-insensitively; a word never equals a formula
  if (pa.text === true || pb.text === true) return pa.text === true && pb.text === true ? pa.word === pb.word : false;
  if (pa.vars.length === 0 && pb.vars.length === 0) {
    const x = evaluateExpr(pa.expr, EMPTY);
    const y = evaluateExpr(pb.expr, EMPTY);
    if (Number.isNaN(x) || Number.isNaN(y)) return undefined;
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      // ∞ = ∞ only when both are written as infinity; an overflow is the symbolic engine's call
      const inf = (k: string) => k.replace(/^[-+]/, '') === '\\infty';
      if (inf(a) && inf(b)) return x === y;
      if (inf(a) !== inf(b) && Number.isFinite(inf(a) ? y : x)) return false;
      return undefined;
    }
    if (closeRelative(x, y, tolerance)) return true;
    // A computed value next to zero (\sin(\pi) evaluates to 1.2e-16) may be float noise or a real
    // tiny number (6.626\times10^{-34}); only the symbolic engine can tell them apart.
    return (x === 0 || y === 0) && Math.abs(x - y) < 1e-12 ? undefined : false;
  }
  const vars = [...new Set([...pa.vars, ...pb.vars])].sort();
  let conclusive = 0;
  let tight = true;
  for (const env of probeEnvironments(vars)) {
    const x = evaluateExpr(pa.expr, env);
    const y = evaluateExpr(pb.expr, env);
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    conclusive++;
    const d = Math.abs(x - y);
    // a clear difference at one point is enough to reject
    if (d > Math.max(tolerance, 1e-9) * Math.max(Math.abs(x), Math.abs(y), 1)) return false;
    if (!(d <= TIGHT * Math.max(Math.abs(x), Math.abs(y)) || d <= 1e-12)) tight = false;
  }
  if (options.probeIdentity && tight && conclusive >= MIN_CONCLUSIVE) return true;
  return undefined;
}

const EMPTY: ReadonlyMap<string, number> = new Map();

/**
 * |x − y| ≤ tol · max(|x|, |y|): relative at every magnitude, with no absolute floor, so
 * `1e-13` ≠ `2e-13` and `6.626\times10^{-34}` ≠ `0` (zero equals only zero).
 */
export function closeRelative(x: number, y: number, tolerance: number): boolean {
  if (x === y) return true;
  return Math.abs(x - y) <= tolerance * Math.max(Math.abs(x), Math.abs(y));
}

/** Asks the symbolic engine about two scalar keys; resolves false when it cannot show them equal. */
export type SymbolicCheck = (a: string, b: string) => Promise<boolean>;

/**
 * Whether two canonical keys denote the same answer: structures element-wise (bracket types of
 * tuples and intervals must match, sets and unions in any order), scalars by {@link scalarVerdict}
 * and then `symbolic`.
 */
export async function keysEqual(
  a: string,
  b: string,
  options: FastCheckOptions,
  cache: ParseCache,
  symbolic: SymbolicCheck | undefined,
): Promise<boolean> {
  if (a === b) return true;
  return structuresEqual(structureOf(a), structureOf(b), options, cache, symbolic);
}

async function structuresEqual(
  x: Structure,
  y: Structure,
  tol: FastCheckOptions,
  cache: ParseCache,
  symbolic: SymbolicCheck | undefined,
): Promise<boolean> {
  if (x.kind !== y.kind) return false;
  switch (x.kind) {
    case 'scalar': {
      const yk = (y as typeof x).key;
      const v = scalarVerdict(x.key, yk, tol, cache);
      if (v !== undefined) return v;
      return symbolic ? symbolic(x.key, yk) : false;
    }
    case 'tuple': {
      const t = y as typeof x;
      if (x.open !== t.open || x.close !== t.close || x.items.length !== t.items.length) return false;
      for (let i = 0; i < x.items.length; i++)
        if (!(await structuresEqual(x.items[i]!, t.items[i]!, tol, cache, symbolic))) return false;
      return true;
    }
    case 'matrix': {
      const m = y as typeof x;
      if (x.rows.length !== m.rows.length || x.rows.some((r, i) => r.length !== m.rows[i]!.length)) return false;
      for (let i = 0; i < x.rows.length; i++) {
        for (let j = 0; j < x.rows[i]!.length; j++)
          if (!(await structuresEqual(x.rows[i]![j]!, m.rows[i]![j]!, tol, cache, symbolic))) return false;
      }
      return true;
    }
    case 'set': {
      const s = y as typeof x;
      if (x.items.length !== s.items.length) return false;
      // greedy matching: each element of x takes the first unused equal element of y
      const used = new Uint8Array(s.items.length);
      for (const item of x.items) {
        let found = false;
        for (let j = 0; j < s.items.length && !found; j++) {
          if (used[j]) continue;
          if (await structuresEqual(item, s.items[j]!, tol, cache, symbolic)) {
            used[j] = 1;
            found = true;
          }
        }
        if (!found) return false;
      }
      return true;
    }
  }
}
