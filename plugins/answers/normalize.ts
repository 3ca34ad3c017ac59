// Canonical keys of math answers: the cheap normal form computed once per completion. Two answers with
// the same key are the same answer; answers whose keys differ may still be equal (see compare.ts).
// Two passes, both linear: a macro-level rewrite of the LaTeX, then string-level rules on the result.
import { braceMatches, isDigit, isLetter, isSpace } from './latex';
import { isThousands } from './extract';

/** How a trailing percent sign is read. */
export type PercentMode = 'strip' | 'fraction' | 'keep';

/** Options of the normalizer. */
export interface NormalizeOptions {
  /** `strip`: 50% → 50 (the released Co-RL code); `fraction`: 50% → 0.5; `keep`: 50% stays its own answer. */
  readonly percent: PercentMode;
  /** Unit words dropped after a number or inside `\text{}` (case-insensitive, plurals included). */
  readonly units: readonly string[];
}

/** Units the normalizer drops by default. Single letters are only dropped inside `\text{}`/`\mathrm{}`. */
export const DEFAULT_UNITS: readonly string[] = [
  'unit',
  'units',
  'sq',
  'square',
  'cubic',
  'per',
  'mm',
  'cm',
  'm',
  'km',
  'meter',
  'metre',
  'centimeter',
  'centimetre',
  'millimeter',
  'kilometer',
  'kilometre',
  'in',
  'inch',
  'inches',
  'ft',
  'foot',
  'feet',
  'yd',
  'yard',
  'mi',
  'mile',
  'g',
  'gram',
  'kg',
  'kilogram',
  'mg',
  'lb',
  'lbs',
  'pound',
  'ounce',
  'oz',
  'ton',
  'tonne',
  'l',
  'liter',
  'litre',
  'ml',
  'milliliter',
  'gallon',
  'gal',
  'quart',
  'pint',
  'cup',
  's',
  'sec',
  'second',
  'min',
  'minute',
  'h',
  'hr',
  'hour',
  'day',
  'week',
  'month',
  'year',
  'yr',
  'dollar',
  'cent',
  'euro',
  'yuan',
  'rupee',
  'mph',
  'kph',
  'km/h',
  'm/s',
  'degree',
  'deg',
  'radian',
  'rad',
  'percent',
  'point',
];

/** Default normalizer options. */
export const DEFAULT_NORMALIZE: NormalizeOptions = { percent: 'strip', units: DEFAULT_UNITS };

/** Macros dropped with nothing in their place. */
const DROP = new Set([
  'left',
  'right',
  'bigl',
  'bigr',
  'Bigl',
  'Bigr',
  'biggl',
  'biggr',
  'Biggl',
  'Biggr',
  'big',
  'Big',
  'bigg',
  'Bigg',
  'displaystyle',
  'textstyle',
  'scriptstyle',
  'scriptscriptstyle',
  'limits',
  'nolimits',
  'middle',
  '$',
  'degree',
  'displaylimits',
]);
/** Spacing macros: a space in their place (spaces are removed at the end). */
const SPACE = new Set([
  ',',
  ';',
  ':',
  '!',
  ' ',
  'quad',
  'qquad',
  'enspace',
  'thinspace',
  'medspace',
  'thickspace',
  'negthinspace',
  'space',
  'nobreakspace',
]);
/** Macros whose argument is unwrapped (its braces and the macro dropped). */
const UNWRAP = new Set([
  'text',
  'textbf',
  'textit',
  'textrm',
  'textsf',
  'texttt',
  'textnormal',
  'mathrm',
  'mathbf',
  'mathit',
  'mathsf',
  'mathtt',
  'mathnormal',
  'mbox',
  'hbox',
  'boldsymbol',
  'bm',
  'boxed',
  'fbox',
  'emph',
  'operatorname',
  'pmb',
  'mathup',
  'up',
]);
/** Macros whose argument is a unit text (dropped if it is a unit). */
const TEXTLIKE = new Set([
  'text',
  'textrm',
  'textnormal',
  'mathrm',
  'mbox',
  'hbox',
  'textit',
  'textbf',
  'mathit',
  'textsf',
  'texttt',
]);
/** Macros that take one argument which is dropped along with them. */
const DROP_WITH_ARG = new Set([
  'hspace',
  'vspace',
  'hspace*',
  'kern',
  'label',
  'tag',
  'phantom',
  'hphantom',
  'vphantom',
]);
/** Renamed macros. */
const RENAME: Readonly<Record<string, string>> = {
  dfrac: 'frac',
  tfrac: 'frac',
  cfrac: 'frac',
  le: 'leq',
  ge: 'geq',
  ne: 'neq',
  leqslant: 'leq',
  geqslant: 'geq',
  varnothing: 'emptyset',
  lbrace: '{',
  rbrace: '}',
  dots: 'ldots',
  cdots: 'ldots',
  to: 'rightarrow',
  gets: 'leftarrow',
  varpi: 'pi',
  vert: '|',
  lvert: '|',
  rvert: '|',
  mid: '|',
};
/** Unicode characters with a LaTeX meaning. */
const UNICODE: Readonly<Record<string, string>> = {
  '\u2212': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u00d7': '\\times ',
  '\u22c5': '\\cdot ',
  '\u00b7': '\\cdot ',
  '\u00f7': '\\div ',
  '\u03c0': '\\pi ',
  '\u221e': '\\infty ',
  '\u2264': '\\leq ',
  '\u2265': '\\geq ',
  '\u2260': '\\neq ',
  '\u221a': '\\sqrt',
  '\u00b0': '',
  '\u00bd': '\\frac{1}{2}',
  '\u00bc': '\\frac{1}{4}',
  '\u00be': '\\frac{3}{4}',
  '\u2205': '\\emptyset ',
  '\u222a': '\\cup ',
  '\u2229': '\\cap ',
  '\u00b2': '^{2}',
  '\u00b3': '^{3}',
  '\u2032': "'",
  '\uff0c': ',',
  '\u3002': '.',
  '\u00a0': ' ',
  '\u200b': '',
  '\ufeff': '',
  '\u2009': ' ',
  '\u202f': ' ',
};
/** Environments written the same way in keys (a matrix is a matrix whatever its brackets). */
const MATRIX_ENVS = new Set(['bmatrix', 'Bmatrix', 'matrix', 'smallmatrix', 'pmatrix']);

const MAX_OPTIONAL_ARG = 64;

/**
 * Canonical key of a raw math answer, or null when nothing is left after normalization (an empty
 * answer never wins a vote). Pure, total and linear in the length of the answer.
 */
export function normalizeKey(answer: string, options: NormalizeOptions = DEFAULT_NORMALIZE): string | null {
  if (typeof answer !== 'string') return null;
  const units = unitSet(options.units);
  let s = rewriteMacros(answer, units);
  s = stringRules(s, options, units);
  return s.length > 0 ? s : null;
}

const unitCache = new WeakMap<readonly string[], ReadonlySet<string>>();
function unitSet(units: readonly string[]): ReadonlySet<string> {
  let set = unitCache.get(units);
  if (!set) {
    set = new Set(units.map((u) => u.toLowerCase()));
    unitCache.set(units, set);
  }
  return set;
}

function isUnit(word: string, units: ReadonlySet<string>): boolean {
  const w = word.toLowerCase();
  if (units.has(w)) return true;
  if (w.length > 2 && w.endsWith('s') && units.has(w.slice(0, -1))) return true;
  if (w.length > 3 && w.endsWith('es') && units.has(w.slice(0, -2))) return true;
  return false;
}

/**
 * Pass 1: one left-to-right walk over the LaTeX, with every group brace matched up front. Macros are
 * dropped, renamed or unwrapped; `\frac12`/`\sqrt2` get their braces. Nothing recurses, so deeply
 * nested input costs the same as flat input.
 */
function rewriteMacros(src: string, units: ReadonlySet<string>): string {
  return new MacroWalk(src, units).run();
}

/** The state of one {@link rewriteMacros} walk: the position, the output and the braces decided ahead. */
class MacroWalk {
  private readonly n: number;
  private readonly match: Int32Array;
  /** Braces to leave out of the output (unwrapped groups). */
  private readonly skip: Uint8Array;
  /** Closing braces after which a `\frac` needs its second argument. */
  private readonly fracSecond: Uint8Array;
  private readonly out: string[] = [];
  private i = 0;

  constructor(
    private readonly src: string,
    private readonly units: ReadonlySet<string>,
  ) {
    this.n = src.length;
    this.match = braceMatches(src);
    this.skip = new Uint8Array(this.n);
    this.fracSecond = new Uint8Array(this.n);
  }

  run(): string {
    while (this.i < this.n) {
      const c = this.src.charCodeAt(this.i);
      if (c === 92 /* \ */) this.macro();
      else if (c === 123 /* { */ || c === 125 /* } */) this.brace(c);
      else this.character(c);
    }
    return this.out.join('');
  }

  private skipSpaces(j: number): number {
    while (j < this.n && isSpace(this.src.charCodeAt(j))) j++;
    return j;
  }

  /** A macro at i: dropped, spaced, unwrapped, renamed, or given its arguments' braces. */
  private macro(): void {
    const { src, n, out } = this;
    let k = this.i + 1;
    while (k < n && isLetter(src.charCodeAt(k))) k++;
    if (k === this.i + 1) k = Math.min(n, this.i + 2); // a one-character macro: \, \{ \$ \% \\ ...
    if (src.charCodeAt(k) === 42 /* * */ && src.slice(this.i + 1, k) === 'hspace') k++;
    const name = src.slice(this.i + 1, k);
    this.i = k;
    if (DROP.has(name)) {
      // \left. and \right. are invisible delimiters
      if ((name === 'left' || name === 'right' || name === 'middle') && src.charCodeAt(this.i) === 46) this.i++;
      return;
    }
    if (SPACE.has(name)) {
      out.push(' ');
      return;
    }
    if (name === '%') {
      out.push('%');
      return;
    }
    if (name === '{' || name === '}') {
      out.push('\\', name);
      return;
    }
    if (DROP_WITH_ARG.has(name)) {
      const j = this.skipSpaces(this.i);
      if (src.charCodeAt(j) === 123 && this.match[j]! > j) this.i = this.match[j]! + 1;
      return;
    }
    if (UNWRAP.has(name)) return this.unwrap(name);
    if (name === 'begin' || name === 'end') return this.environment(name);
    const renamed = RENAME[name] ?? name;
    if (renamed === '{' || renamed === '}') {
      out.push('\\', renamed);
      return;
    }
    if (renamed === '|' || renamed === '$') {
      out.push(renamed);
      return;
    }
    out.push('\\', renamed);
    if (renamed === 'frac' || renamed === 'binom') this.fracArguments();
    else if (renamed === 'sqrt') this.sqrtArguments();
  }

  /**
   * `\text{…}` and the like: the group's braces are left out and its content walked; a short text
   * group reading "and", "or" or "," becomes a comma, and a unit phrase goes, with its power.
   */
  private unwrap(name: string): void {
    const { src, match, out } = this;
    const j = this.skipSpaces(this.i);
    if (src.charCodeAt(j) !== 123 || match[j]! <= j) return;
    const close = match[j]!;
    if (TEXTLIKE.has(name) && close - j < 40) {
      const inner = src.slice(j + 1, close).trim();
      if (inner === 'and' || inner === 'or' || inner === ',') {
        this.i = close + 1;
        out.push(',');
        return;
      }
      if (inner.length > 0 && isUnitPhrase(inner, this.units)) {
        this.i = close + 1;
        // the unit's power goes with it: \text{cm}^2
        const pow = /^\s*\^\s*(?:\{\s*[23]\s*\}|[23])/.exec(src.slice(this.i, this.i + 12));
        if (pow) this.i += pow[0].length;
        out.push(' ');
        return;
      }
    }
    this.skip[j] = 1;
    this.skip[close] = 1;
    out.push(' ');
    this.i = j;
  }

  /** `\begin{env}` / `\end{env}`, every matrix environment written as pmatrix. */
  private environment(name: 'begin' | 'end'): void {
    const { src, match } = this;
    const j = this.skipSpaces(this.i);
    if (src.charCodeAt(j) === 123 && match[j]! > j && match[j]! - j < 40) {
      const env = src.slice(j + 1, match[j]!).trim();
      this.out.push(`\\${name}{${MATRIX_ENVS.has(env) ? 'pmatrix' : env}}`);
      this.i = match[j]! + 1;
    } else this.out.push(`\\${name}`);
  }

  /** `\frac` / `\binom`: a group first argument is walked (its close then asks for the second); else both now. */
  private fracArguments(): void {
    const first = this.argument(this.i);
    if (first.close > 0) {
      this.fracSecond[first.close] = 1;
      this.i = first.next;
    } else this.i = this.argument(first.next).next;
  }

  /** `\sqrt[n]x`: the optional index kept without spaces, then the radicand. */
  private sqrtArguments(): void {
    const { src, n } = this;
    let j = this.skipSpaces(this.i);
    if (src.charCodeAt(j) === 91 /* [ */) {
      const limit = Math.min(n, j + MAX_OPTIONAL_ARG);
      let e = j + 1;
      while (e < limit && src.charCodeAt(e) !== 93) e++;
      if (e < limit) {
        this.out.push(src.slice(j, e + 1).replace(/\s+/g, ''));
        j = e + 1;
      }
    }
    this.i = this.argument(j).next;
  }

  /**
   * Emit the next argument of a macro at `at`: a group is walked normally (its braces kept); a single
   * token is wrapped in braces. Returns the new position and the group's close index (or -1).
   */
  private argument(at: number): { next: number; close: number } {
    const { src, n, out } = this;
    const j = this.skipSpaces(at);
    if (j >= n) return { next: j, close: -1 };
    const c = src.charCodeAt(j);
    if (c === 123 /* { */) return { next: j, close: this.match[j]! };
    if (c === 92 /* \ */) {
      let k = j + 1;
      while (k < n && isLetter(src.charCodeAt(k))) k++;
      if (k === j + 1) k = Math.min(n, j + 2);
      out.push('{', renameMacro(src.slice(j, k)), '}');
      return { next: k, close: -1 };
    }
    if (c === 125 /* } */ || c === 36 /* $ */) return { next: j, close: -1 };
    out.push('{', src[j]!, '}');
    return { next: j + 1, close: -1 };
  }

  /** A group brace: kept unless its group was unwrapped; a `\frac`'s first group then takes its second. */
  private brace(c: number): void {
    if (!this.skip[this.i]) this.out.push(this.src[this.i]!);
    if (c === 125 && this.fracSecond[this.i]) this.i = this.argument(this.i + 1).next;
    else this.i++;
  }

  /** Any other character: `$` goes, `~` and control characters are spaces, Unicode look-alikes mapped. */
  private character(c: number): void {
    const ch = this.src[this.i]!;
    this.i++;
    if (c === 36 /* $ */) return;
    if (c === 126 /* ~ */ || c < 32 || c === 127) {
      this.out.push(' ');
      return;
    }
    if (c >= 128) {
      const u = UNICODE[ch];
      if (u !== undefined) {
        this.out.push(u);
        return;
      }
      if (isSpace(c)) {
        this.out.push(' ');
        return;
      }
      // lone surrogates and other invisible characters are kept as they are: keys stay injective
    }
    this.out.push(ch);
  }
}

function renameMacro(m: string): string {
  const name = m.slice(1);
  const r = RENAME[name];
  return r === undefined
    ? m
    : r.length === 1 && !isLetter(r.charCodeAt(0))
      ? r === '{' || r === '}'
        ? `\\${r}`
        : r
      : `\\${r}`;
}

function isUnitPhrase(inner: string, units: ReadonlySet<string>): boolean {
  const words = inner.split(/[\s~]+/).filter((w) => w.length > 0);
  if (words.length === 0 || words.length > 4) return false;
  return words.every((w) => isUnit(w.replace(/[.^0-9{}]+$/, ''), units));
}

const SCI_TIMES = /^(-?)(\d+(?:\.\d+)?)(?:\\times|\\cdot|\*)10\^(?:\{([+-]?\d+)\}|([+-]?\d))$/;
const SCI_E = /^(-?)(\d+(?:\.\d+)?|\.\d+)[eE]([+-]?\d+)$/;
const PLAIN_NUMBER = /^(-?)(\d+(?:\.\d*)?|\.\d+)$/;
const SIMPLE_FRACTION = /^(-?)\\frac\{(-?)(\d+)\}\{(-?)(\d+)\}$/;
const SLASH_FRACTION = /^(-?)(\d+)\/(\d+)$/;
const MIXED_NUMBER = /^(-?)(\d+)\\frac\{(\d+)\}\{(\d+)\}$/;
const LHS = /^(?:[A-Za-z]|\\[A-Za-z]+)(?:_(?:\{[A-Za-z0-9]{1,3}\}|[A-Za-z0-9]))?(?:\([A-Za-z]\))?(?:=|\\in)(?!=)/;

/** Pass 2: string-level rules on the rewritten LaTeX. Every regex here is anchored and unambiguous. */
function stringRules(s: string, options: NormalizeOptions, units: ReadonlySet<string>): string {
  s = stripDegrees(s);
  s = stripTrailingUnits(s, units);
  s = removeSpaces(s);
  s = s.replace(/\{,\}/g, ',');
  // trailing sentence punctuation
  let end = s.length;
  while (end > 0 && (s.charCodeAt(end - 1) === 46 || s.charCodeAt(end - 1) === 44 || s.charCodeAt(end - 1) === 59))
    end--;
  s = s.slice(0, end);
  // a short left-hand side: "x = 5" → 5, "f(x) = x^2" → x^2, "x \in [0, 1]" → [0, 1]
  const lhs = LHS.exec(s);
  if (lhs && s.indexOf('=', lhs[0].length) < 0) s = s.slice(lhs[0].length);
  if (s.startsWith('+') && s.length > 1) s = s.slice(1);
  // "\$5" was dropped in pass 1; a lone "$" or "\%" may remain at the ends
  s = percent(s, options.percent);
  if (s.includes(',') && /^-?[\d,]+(?:\.\d+)?$/.test(s) && isThousands(s.replace(/^-/, '').split('.')[0]!))
    s = s.replace(/,/g, '');
  // exponents written as digit runs: 2^10 means 2^{10}
  if (s.includes('^')) s = s.replace(/\^(\d{2,})/g, '^{$1}');
  let m: RegExpExecArray | null;
  if ((m = SCI_TIMES.exec(s))) return canonicalDecimal(m[1]!, m[2]!, Number(m[3] ?? m[4]));
  if ((m = SCI_E.exec(s))) return canonicalDecimal(m[1]!, m[2]!, Number(m[3]));
  if ((m = PLAIN_NUMBER.exec(s))) return canonicalDecimal(m[1]!, m[2]!, 0);
  if ((m = MIXED_NUMBER.exec(s))) {
    const whole = BigInt(m[2]!);
    const num = BigInt(m[3]!);
    const den = BigInt(m[4]!);
    if (den !== 0n) return fraction(m[1] === '-', whole * den + num, den);
  }
  if ((m = SLASH_FRACTION.exec(s))) {
    const den = BigInt(m[3]!);
    if (den !== 0n) return fraction(m[1] === '-', BigInt(m[2]!), den);
  }
  if ((m = SIMPLE_FRACTION.exec(s))) {
    const den = BigInt(m[5]!);
    if (den !== 0n) return fraction(((m[1] === '-') !== (m[2] === '-')) !== (m[4] === '-'), BigInt(m[3]!), den);
  }
  return canonicalNumbersIn(s);
}

function stripDegrees(s: string): string {
  if (!s.includes('circ')) return s;
  return s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\{\}\s*\^\s*\\circ|\\circ(?=\s*$)/g, '');
}

/** Drop unit words at the end ("5 square units", "12 cm^2"), only after something that is not a unit. */
function stripTrailingUnits(s: string, units: ReadonlySet<string>): string {
  let end = s.length;
  for (let guard = 0; guard < 6; guard++) {
    let e = end;
    while (e > 0 && (isSpace(s.charCodeAt(e - 1)) || s.charCodeAt(e - 1) === 46)) e--;
    // optional ^2 / ^{3}
    let p = e;
    if (p >= 2 && isDigit(s.charCodeAt(p - 1)) && s.charCodeAt(p - 2) === 94) p -= 2;
    else if (
      p >= 4 &&
      s.charCodeAt(p - 1) === 125 &&
      isDigit(s.charCodeAt(p - 2)) &&
      s.charCodeAt(p - 3) === 123 &&
      s.charCodeAt(p - 4) === 94
    )
      p -= 4;
    let w = p;
    while (w > 0 && (isLetter(s.charCodeAt(w - 1)) || s.charCodeAt(w - 1) === 47)) w--;
    const word = s.slice(w, p);
    if (word.length < 2 || !isUnit(word, units)) break;
    // the unit must follow a number (or another unit), separated by a space, or directly a digit
    const before = s.charCodeAt(w - 1);
    if (!(w > 0 && (isSpace(before) || isDigit(before)))) break;
    let b = w;
    while (b > 0 && isSpace(s.charCodeAt(b - 1))) b--;
    if (b === 0) break;
    end = b;
  }
  return end === s.length ? s : s.slice(0, end);
}

function removeSpaces(s: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    if (isSpace(s.charCodeAt(i))) {
      // keep a separator between a macro name and a following letter (\pi r), which would otherwise fuse
      const keep = isLetter(s.charCodeAt(i + 1)) && endsWithMacro(s, i);
      out += s.slice(from, i) + (keep ? ' ' : '');
      from = i + 1;
      while (i + 1 < s.length && isSpace(s.charCodeAt(i + 1))) {
        i++;
        from = i + 1;
      }
    }
  }
  return from === 0 ? s : out + s.slice(from);
}

function endsWithMacro(s: string, i: number): boolean {
  let k = i;
  while (k > 0 && isLetter(s.charCodeAt(k - 1))) k--;
  return k < i && k > 0 && s.charCodeAt(k - 1) === 92;
}

function percent(s: string, mode: PercentMode): string {
  if (!s.endsWith('%')) return s;
  if (mode === 'keep') return s;
  const body = s.slice(0, -1);
  if (mode === 'strip') return body;
  const m = PLAIN_NUMBER.exec(body);
  if (!m) return body;
  return canonicalDecimal(m[1]!, m[2]!, -2);
}

/** The fraction num/den in lowest terms: `\frac{1}{2}`, `-\frac{3}{4}`, or an integer. */
function fraction(negative: boolean, num: bigint, den: bigint): string {
  const g = gcd(num, den);
  const p = num / g;
  const q = den / g;
  const sign = negative && p !== 0n ? '-' : '';
  return q === 1n ? `${sign}${p}` : `${sign}\\frac{${p}}{${q}}`;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/**
 * Exact canonical text of sign·digits·10^exp: no leading zeros, no trailing fractional zeros, plain
 * notation for exponents in [−7, 21), otherwise `d.ddde±N`. Textual, so no precision is lost.
 */
export function canonicalDecimal(sign: string, digits: string, exp: number): string {
  if (!Number.isFinite(exp)) return `${sign}${digits}`;
  let point = digits.indexOf('.');
  let mantissa = point >= 0 ? digits.slice(0, point) + digits.slice(point + 1) : digits;
  if (point < 0) point = digits.length;
  // strip leading zeros (moving the point) and trailing zeros
  let lead = 0;
  while (lead < mantissa.length && mantissa.charCodeAt(lead) === 48) lead++;
  mantissa = mantissa.slice(lead);
  point -= lead;
  let trail = mantissa.length;
  while (trail > 0 && mantissa.charCodeAt(trail - 1) === 48) trail--;
  mantissa = mantissa.slice(0, trail);
  if (mantissa.length === 0) return '0';
  const e10 = point + exp; // value = 0.mantissa × 10^e10
  const sci = e10 - 1;
  let body: string;
  if (sci >= 21 || sci < -7) {
    body = `${mantissa[0]}${mantissa.length > 1 ? `.${mantissa.slice(1)}` : ''}e${sci >= 0 ? '+' : ''}${sci}`;
  } else if (e10 <= 0) {
    body = `0.${'0'.repeat(-e10)}${mantissa}`;
  } else if (e10 >= mantissa.length) {
    body = mantissa + '0'.repeat(e10 - mantissa.length);
  } else {
    body = `${mantissa.slice(0, e10)}.${mantissa.slice(e10)}`;
  }
  return `${sign}${body}`;
}

/** Every decimal literal inside a larger key in canonical form: (1.50,2.0) → (1.5,2); .5 → 0.5. */
function canonicalNumbersIn(s: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const startsNumber = isDigit(c) || (c === 46 && isDigit(s.charCodeAt(i + 1)) && !isDigit(s.charCodeAt(i - 1)));
    if (!startsNumber) continue;
    // numbers glued to a macro name or a subscript/variable letter are left alone (x_10, \frac1 is gone already)
    let j = i;
    while (j < s.length && isDigit(s.charCodeAt(j))) j++;
    let hasPoint = false;
    if (s.charCodeAt(j) === 46 && isDigit(s.charCodeAt(j + 1))) {
      hasPoint = true;
      j++;
      while (j < s.length && isDigit(s.charCodeAt(j))) j++;
    }
    // another point right after ("1.2.3") is not a number we rewrite
    if (s.charCodeAt(j) === 46 && isDigit(s.charCodeAt(j + 1))) {
      while (j < s.length && (isDigit(s.charCodeAt(j)) || s.charCodeAt(j) === 46)) j++;
      i = j - 1;
      continue;
    }
    const literal = s.slice(i, j);
    // only decimals are rewritten inside larger keys: "1,00" or "x_{01}" keep their digits
    const needs = hasPoint && /0$|^\.|^0\d/.test(literal);
    if (needs) {
      out += s.slice(from, i) + canonicalDecimal('', literal, 0);
      from = j;
    }
    i = j - 1;
  }
  return from === 0 ? s : out + s.slice(from);
}
