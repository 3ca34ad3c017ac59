// A small, strict reader of normalized answer keys as real-valued expressions, for the fast in-process
// checks of the math equivalence: constant answers are compared by value, answers with variables are
// probed at fixed points to reject unequal pairs without asking the symbolic engine. Anything it does
// not understand for certain is refused (null), and the symbolic engine decides.
import { mixSeed } from '../../core/util/rng';
import { isDigit, isLetter } from './latex';

/** An expression tree. */
export type Expr =
  | { readonly t: 'num'; readonly v: number }
  | { readonly t: 'var'; readonly name: string }
  | { readonly t: 'neg'; readonly a: Expr }
  | { readonly t: 'bin'; readonly op: '+' | '-' | '*' | '/' | '^'; readonly a: Expr; readonly b: Expr }
  | { readonly t: 'fn'; readonly name: string; readonly a: Expr; readonly base?: Expr }
  | { readonly t: 'root'; readonly a: Expr; readonly n: Expr }
  | { readonly t: 'fact'; readonly a: Expr }
  | { readonly t: 'binom'; readonly a: Expr; readonly b: Expr };

/** A parsed key: its tree and the names of its free variables (sorted). */
export interface ParsedExpr {
  readonly expr: Expr;
  readonly vars: readonly string[];
  /** Whether it is a plain word (three or more letters in a row): compared as text, not as a product. */
  readonly text?: false;
}

/** What {@link parseExpression} gives for keys that are words, not formulas. */
export interface TextKey {
  readonly text: true;
  readonly word: string;
}

/** Deepest nesting the reader accepts (deeper keys go to the symbolic engine). */
const MAX_DEPTH = 48;
/** Longest key the reader looks at. */
const MAX_LENGTH = 2000;

const FUNCTIONS = new Set([
  'sin',
  'cos',
  'tan',
  'sec',
  'csc',
  'cot',
  'arcsin',
  'arccos',
  'arctan',
  'sinh',
  'cosh',
  'tanh',
  'ln',
  'log',
  'exp',
]);
const GREEK = new Set([
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'varepsilon',
  'zeta',
  'eta',
  'theta',
  'vartheta',
  'iota',
  'kappa',
  'lambda',
  'mu',
  'nu',
  'xi',
  'rho',
  'sigma',
  'tau',
  'upsilon',
  'phi',
  'varphi',
  'chi',
  'psi',
  'omega',
  'Gamma',
  'Delta',
  'Theta',
  'Lambda',
  'Xi',
  'Sigma',
  'Phi',
  'Psi',
  'Omega',
]);

type Tok = { k: 'num'; v: number } | { k: 'id'; name: string } | { k: 'mac'; name: string } | { k: 'op'; c: string };

class Refused extends Error {}
const refuse = (): never => {
  throw new Refused();
};

function tokenize(s: string): Tok[] | TextKey {
  const toks: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 32) {
      i++;
      continue;
    }
    if (isDigit(c) || (c === 46 && isDigit(s.charCodeAt(i + 1)))) {
      let j = i;
      while (j < s.length && isDigit(s.charCodeAt(j))) j++;
      if (s.charCodeAt(j) === 46 && isDigit(s.charCodeAt(j + 1))) {
        j++;
        while (j < s.length && isDigit(s.charCodeAt(j))) j++;
      }
      // scientific notation inside a larger key (1.5e+24 from the normalizer)
      if (
        s.charCodeAt(j) === 101 &&
        (s.charCodeAt(j + 1) === 43 || s.charCodeAt(j + 1) === 45) &&
        isDigit(s.charCodeAt(j + 2))
      ) {
        j += 2;
        while (j < s.length && isDigit(s.charCodeAt(j))) j++;
      }
      toks.push({ k: 'num', v: Number(s.slice(i, j)) });
      i = j;
      continue;
    }
    if (isLetter(c)) {
      let j = i;
      while (j < s.length && isLetter(s.charCodeAt(j))) j++;
      if (j - i >= 3) return { text: true, word: s.toLowerCase() };
      for (let k = i; k < j; k++) toks.push({ k: 'id', name: s[k]! });
      i = j;
      continue;
    }
    if (c === 92 /* \ */) {
      let j = i + 1;
      while (j < s.length && isLetter(s.charCodeAt(j))) j++;
      if (j === i + 1) refuse(); // \{ \, \\ and friends: not an expression
      toks.push({ k: 'mac', name: s.slice(i + 1, j) });
      i = j;
      continue;
    }
    if ('+-*/^_(){}|!'.includes(s[i]!)) {
      toks.push({ k: 'op', c: s[i]! });
      i++;
      continue;
    }
    refuse();
  }
  return toks;
}

class Reader {
  private i = 0;
  private depth = 0;
  private absDepth = 0;
  readonly vars = new Set<string>();
  constructor(private readonly toks: Tok[]) {}

  parse(): Expr {
    const e = this.expr();
    if (this.i !== this.toks.length) refuse();
    return e;
  }

  private peek(): Tok | undefined {
    return this.toks[this.i];
  }
  private isOp(c: string): boolean {
    const t = this.toks[this.i];
    return t?.k === 'op' && t.c === c;
  }
  private isMac(name: string): boolean {
    const t = this.toks[this.i];
    return t?.k === 'mac' && t.name === name;
  }
  private expect(c: string): void {
    if (!this.isOp(c)) refuse();
    this.i++;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) refuse();
  }
  private leave(): void {
    this.depth--;
  }

  private expr(): Expr {
    this.enter();
    let left = this.term();
    for (;;) {
      if (this.isOp('+')) {
        this.i++;
        left = { t: 'bin', op: '+', a: left, b: this.term() };
      } else if (this.isOp('-')) {
        this.i++;
        left = { t: 'bin', op: '-', a: left, b: this.term() };
      } else break;
    }
    this.leave();
    return left;
  }

  private term(): Expr {
    let left = this.unary();
    let sawDivide = false;
    for (;;) {
      if (this.isOp('*') || this.isMac('cdot') || this.isMac('times')) {
        this.i++;
        left = { t: 'bin', op: '*', a: left, b: this.unary() };
      } else if (this.isOp('/') || this.isMac('div')) {
        this.i++;
        sawDivide = true;
        left = { t: 'bin', op: '/', a: left, b: this.unary() };
      } else if (this.startsPrimary()) {
        // "1/2x" reads differently to different people: leave it to the symbolic engine
        if (sawDivide) refuse();
        left = { t: 'bin', op: '*', a: left, b: this.power() };
      } else break;
    }
    return left;
  }

  private unary(): Expr {
    if (this.isOp('-')) {
      this.i++;
      this.enter();
      const a = this.unary();
      this.leave();
      return { t: 'neg', a };
    }
    if (this.isOp('+')) {
      this.i++;
      return this.unary();
    }
    return this.power();
  }

  private power(): Expr {
    const base = this.postfix();
    if (this.isOp('^')) {
      this.i++;
      this.enter();
      const exp = this.isOp('-') ? (this.i++, { t: 'neg', a: this.exponent() } as Expr) : this.exponent();
      this.leave();
      return { t: 'bin', op: '^', a: base, b: exp };
    }
    return base;
  }

  private exponent(): Expr {
    if (this.isOp('{')) return this.group('{', '}');
    return this.postfix();
  }

  private postfix(): Expr {
    let e = this.primary();
    while (this.isOp('!')) {
      this.i++;
      e = { t: 'fact', a: e };
    }
    return e;
  }

  private startsPrimary(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.k === 'num' || t.k === 'id') return true;
    if (t.k === 'op') return t.c === '(' || (t.c === '|' && this.absDepth === 0);
    return t.name !== 'cdot' && t.name !== 'times' && t.name !== 'div';
  }

  private group(open: string, close: string): Expr {
    this.expect(open);
    const e = this.expr();
    this.expect(close);
    return e;
  }

  private primary(): Expr {
    const t = this.peek();
    if (!t) return refuse();
    if (t.k === 'num') {
      this.i++;
      return { t: 'num', v: t.v };
    }
    if (t.k === 'id') {
      this.i++;
      if (t.name === 'i') refuse(); // complex numbers are the symbolic engine's job
      if (t.name === 'e' && !this.isOp('_')) return { t: 'num', v: Math.E };
      return this.variable(t.name);
    }
    if (t.k === 'op') {
      if (t.c === '(') return this.group('(', ')');
      if (t.c === '{') return this.group('{', '}');
      if (t.c === '|' && this.absDepth === 0) {
        this.i++;
        this.absDepth++;
        const a = this.expr();
        this.absDepth--;
        this.expect('|');
        return { t: 'fn', name: 'abs', a };
      }
      return refuse();
    }
    this.i++;
    const name = t.name;
    if (name === 'pi') return { t: 'num', v: Math.PI };
    if (name === 'infty') return { t: 'num', v: Infinity };
    if (GREEK.has(name)) return this.variable(`\\${name}`);
    if (name === 'frac') {
      const a = this.group('{', '}');
      const b = this.group('{', '}');
      return { t: 'bin', op: '/', a, b };
    }
    if (name === 'binom') {
      const a = this.group('{', '}');
      const b = this.group('{', '}');
      return { t: 'binom', a, b };
    }
    if (name === 'sqrt') {
      // \sqrt[3]{x} keeps its "[", which is not a token here: nth roots go to the symbolic engine
      const a = this.group('{', '}');
      return { t: 'root', a, n: { t: 'num', v: 2 } };
    }
    if (FUNCTIONS.has(name)) return this.func(name);
    return refuse();
  }

  private variable(name: string): Expr {
    let full = name;
    if (this.isOp('_')) {
      this.i++;
      const s = this.peek();
      if (s?.k === 'num' && Number.isInteger(s.v)) {
        this.i++;
        full += `_${s.v}`;
      } else if (s?.k === 'id') {
        this.i++;
        full += `_${s.name}`;
      } else if (this.isOp('{')) {
        this.i++;
        let sub = '';
        while (!this.isOp('}')) {
          const u = this.peek();
          if (!u || u.k === 'op' || u.k === 'mac') refuse();
          sub += u!.k === 'num' ? String(u!.v) : (u as { name: string }).name;
          this.i++;
        }
        this.i++;
        full += `_${sub}`;
      } else refuse();
    }
    this.vars.add(full);
    return { t: 'var', name: full };
  }

  private func(name: string): Expr {
    let power: Expr | undefined;
    let base: Expr | undefined;
    if (name === 'log' && this.isOp('_')) {
      this.i++;
      base = this.isOp('{') ? this.group('{', '}') : this.postfix();
    }
    if (this.isOp('^')) {
      this.i++;
      power = this.exponent();
      // \sin^{-1} is the inverse function, not a power
      if (power.t === 'neg' || (power.t === 'num' && power.v < 0)) refuse();
    }
    let a: Expr;
    if (this.isOp('(')) a = this.group('(', ')');
    else if (this.isOp('{')) a = this.group('{', '}');
    else {
      // "\sin x" is fine, "\sin 2x" is ambiguous
      a = this.postfix();
      if (this.startsPrimary() || this.isOp('^')) refuse();
    }
    const f: Expr = { t: 'fn', name, a, ...(base ? { base } : {}) };
    return power ? { t: 'bin', op: '^', a: f, b: power } : f;
  }
}

/**
 * Read a normalized key as an expression. Returns null when the key is not something this reader
 * understands for certain (relations, sets, complex numbers, unknown macros...), or a {@link TextKey}
 * for plain words.
 */
export function parseExpression(key: string): ParsedExpr | TextKey | null {
  if (key.length === 0 || key.length > MAX_LENGTH) return null;
  try {
    const toks = tokenize(key);
    if (!Array.isArray(toks)) return toks;
    if (toks.length === 0) return null;
    const r = new Reader(toks);
    const expr = r.parse();
    return { expr, vars: [...r.vars].sort() };
  } catch (e) {
    if (e instanceof Refused || e instanceof RangeError) return null;
    throw e;
  }
}

/** Evaluate a tree with variable values (NaN outside the real domain). */
export function evaluateExpr(e: Expr, env: ReadonlyMap<string, number>): number {
  switch (e.t) {
    case 'num':
      return e.v;
    case 'var':
      return env.get(e.name) ?? NaN;
    case 'neg':
      return -evaluateExpr(e.a, env);
    case 'bin': {
      const a = evaluateExpr(e.a, env);
      const b = evaluateExpr(e.b, env);
      switch (e.op) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          return a / b;
        case '^':
          return power(a, b);
      }
    }
    // eslint-disable-next-line no-fallthrough
    case 'fn':
      return fn(e.name, evaluateExpr(e.a, env), e.base ? evaluateExpr(e.base, env) : undefined);
    case 'root':
      return root(evaluateExpr(e.a, env), evaluateExpr(e.n, env));
    case 'fact':
      return factorial(evaluateExpr(e.a, env));
    case 'binom':
      return binomial(evaluateExpr(e.a, env), evaluateExpr(e.b, env));
  }
}

function power(a: number, b: number): number {
  if (a < 0 && !Number.isInteger(b)) {
    // odd roots of negatives: (-8)^(1/3) = -2
    const inv = 1 / b;
    if (Math.abs(inv - Math.round(inv)) < 1e-12 && Math.round(inv) % 2 !== 0) return -Math.pow(-a, b);
    return NaN;
  }
  return Math.pow(a, b);
}

function root(a: number, n: number): number {
  if (n === 2) return a < 0 ? NaN : Math.sqrt(a);
  return power(a, 1 / n);
}

function factorial(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 170) return NaN;
  let r = 1;
  for (let k = 2; k <= n; k++) r *= k;
  return r;
}

function binomial(n: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(k) || k < 0 || n < 0 || k > n || n > 10_000) return NaN;
  let r = 1;
  for (let j = 1; j <= Math.min(k, n - k); j++) r = (r * (n - Math.min(k, n - k) + j)) / j;
  return Math.round(r);
}

function fn(name: string, x: number, base?: number): number {
  switch (name) {
    case 'sin':
      return Math.sin(x);
    case 'cos':
      return Math.cos(x);
    case 'tan':
      return Math.tan(x);
    case 'sec':
      return 1 / Math.cos(x);
    case 'csc':
      return 1 / Math.sin(x);
    case 'cot':
      return 1 / Math.tan(x);
    case 'arcsin':
      return Math.asin(x);
    case 'arccos':
      return Math.acos(x);
    case 'arctan':
      return Math.atan(x);
    case 'sinh':
      return Math.sinh(x);
    case 'cosh':
      return Math.cosh(x);
    case 'tanh':
      return Math.tanh(x);
    case 'ln':
      return x <= 0 ? NaN : Math.log(x);
    case 'log':
      return x <= 0 ? NaN : base === undefined ? Math.log10(x) : Math.log(x) / Math.log(base);
    case 'exp':
      return Math.exp(x);
    case 'abs':
      return Math.abs(x);
    default:
      return NaN;
  }
}

/** Number of probe points for expressions with variables (half of them negative). */
export const PROBES = 6;

/**
 * The value of variable `name` at probe `k`: a fixed, irrational-looking point with |v| in (0.6, 2.2),
 * positive for even k and negative for odd k (so that √(x²) and x differ), the same on every run
 * (derived with mixSeed, never unseeded).
 */
export function probeValue(name: string, k: number): number {
  const v = 0.6 + (mixSeed('probe', name, k) / 4294967296) * 1.6;
  return k % 2 === 0 ? v : -v;
}

/** The environments of the probe points for a set of variables. */
export function probeEnvironments(vars: readonly string[]): Map<string, number>[] {
  const out: Map<string, number>[] = [];
  for (let k = 0; k < PROBES; k++) out.push(new Map(vars.map((v) => [v, probeValue(v, k)])));
  return out;
}
