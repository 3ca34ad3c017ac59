// The forms a number takes in a text, for the meaning check of `corl rephrase`: digits of any script
// (full-width, Arabic-Indic, Devanagari, superscript, circled …), English number words ("forty-two",
// "one hundred and five", "three point five", "a dozen", "two thirds") and answers written with a
// currency or a unit ("$42", "42 km", "\frac{1}{2}"). A leak is a value, not a spelling.

/** Zero of the run of decimal digits `cp` belongs to (Unicode encodes each script's 0–9 contiguously, from 0). */
function digitValue(cp: number): number {
  let start = cp;
  while (start > 0 && /\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/**
 * `text` after NFKC (full-width forms, superscripts and circled digits become ASCII), with every
 * other decimal digit (Arabic-Indic, Devanagari, Bengali, Thai, …) as its ASCII digit, the Arabic
 * decimal and thousands separators as "." and ",", the fraction slash as "/", and the minus sign as "-".
 */
export function asciiDigits(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/\p{Nd}/gu, (d) => (d >= '0' && d <= '9' ? d : String(digitValue(d.codePointAt(0) ?? 48))))
    .replace(/\u066b/g, '.')
    .replace(/\u066c/g, ',')
    .replace(/\u2044/g, '/')
    .replace(/\u2212/g, '-');
}

const UNITS: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
};
const TEENS: Readonly<Record<string, number>> = {
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fourty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const SCALES: Readonly<Record<string, number>> = { thousand: 1e3, million: 1e6, billion: 1e9, trillion: 1e12 };
/** Ordinal words as the cardinal they end a number with ("forty-second" is 42). */
const ORDINALS: Readonly<Record<string, number>> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  eleventh: 11,
  twelfth: 12,
  thirteenth: 13,
  fourteenth: 14,
  fifteenth: 15,
  sixteenth: 16,
  seventeenth: 17,
  eighteenth: 18,
  nineteenth: 19,
  twentieth: 20,
  thirtieth: 30,
  fortieth: 40,
  fiftieth: 50,
  sixtieth: 60,
  seventieth: 70,
  eightieth: 80,
  ninetieth: 90,
  hundredth: 100,
  thousandth: 1000,
  millionth: 1e6,
};
/** Denominators a fraction is written with after a number ("two thirds", "one half", "three quarters"). */
const DENOMINATORS: Readonly<Record<string, number>> = {
  half: 2,
  halves: 2,
  third: 3,
  thirds: 3,
  quarter: 4,
  quarters: 4,
  fourths: 4,
  fifths: 5,
  sixths: 6,
  sevenths: 7,
  eighths: 8,
  ninths: 9,
  tenths: 10,
};

type Kind = 'unit' | 'teen' | 'tens' | 'hundred' | 'scale';

/** A number being read word by word: what came last decides what may follow. */
interface Reading {
  total: number;
  current: number;
  last: Kind | 'point';
  decimals: string;
}

function kindOf(t: string): Kind | undefined {
  if (UNITS[t] !== undefined) return 'unit';
  if (TEENS[t] !== undefined) return 'teen';
  if (TENS[t] !== undefined) return 'tens';
  if (t === 'hundred') return 'hundred';
  return SCALES[t] !== undefined ? 'scale' : undefined;
}

/** Whether a word of `kind` continues the number `r` ("forty" then "two", "two" then "hundred"). */
function continues(r: Reading, kind: Kind): boolean {
  if (r.last === 'point' || r.decimals) return false;
  if (kind === 'unit') return r.last === 'tens' ? r.current % 10 === 0 : r.last === 'hundred' || r.last === 'scale';
  if (kind === 'teen' || kind === 'tens') return r.last === 'hundred' || r.last === 'scale';
  if (kind === 'hundred') return r.last === 'unit' || r.last === 'teen' || r.last === 'tens';
  return true;
}

/** Reads English number words one word at a time into `out`. */
class WordReader {
  readonly out: number[] = [];
  private r: Reading | undefined;
  private article = false; // "a" or "an" just before: "a hundred", "a dozen", "a half"

  /** End the number being read; its value (undefined: none was being read). */
  end(): number | undefined {
    const r = this.r;
    if (!r) return undefined;
    const whole = r.total + r.current;
    const v = r.decimals ? Number(`${whole}.${r.decimals}`) : whole;
    this.out.push(v);
    this.r = undefined;
    return v;
  }

  /** A mark between words: spaces and hyphens join number words, anything else ends one. */
  mark(t: string): void {
    if (/^[\s-]+$/.test(t)) return;
    this.end();
    this.article = false;
  }

  word(t: string): void {
    const article = this.article;
    this.article = false;
    if (this.numeral(t, article)) return;
    const ordinal = ORDINALS[t];
    const denominator = DENOMINATORS[t];
    const r = this.r;
    if (ordinal !== undefined && ordinal < 10 && r && r.last === 'tens' && r.current % 10 === 0 && !r.decimals) {
      r.current += ordinal; // "forty-second"
      this.end();
    } else if (ordinal !== undefined || denominator !== undefined) {
      // "two thirds" (2 and 2/3), "a fifth" (1/5), "half" (1/2); an ordinal alone is its value
      const n = this.end();
      const d = denominator ?? (ordinal !== undefined && ordinal > 2 ? ordinal : undefined);
      if (d !== undefined && (n !== undefined || article || denominator !== undefined)) this.out.push((n ?? 1) / d);
      else if (ordinal !== undefined) this.out.push(ordinal);
    } else if (t === 'dozen') {
      this.out.push((this.end() ?? 1) * 12);
    } else {
      this.end();
      this.article = t === 'a' || t === 'an';
    }
  }

  /** Read a cardinal word, "hundred", a scale, "and" inside a number, or "point" and its digits: true when `t` was one. */
  private numeral(t: string, article: boolean): boolean {
    const r = this.r;
    if (r?.last === 'point') {
      const digit = UNITS[t];
      if (digit === undefined) {
        r.last = 'unit'; // "… point" with no digit after it: the number before it
        return false;
      }
      r.decimals += String(digit);
      return true;
    }
    if (t === 'and' && r && (r.last === 'hundred' || r.last === 'scale')) return true;
    if (t === 'point' && r && !r.decimals && r.last !== 'scale' && r.last !== 'hundred') {
      r.last = 'point';
      return true;
    }
    const kind = kindOf(t);
    if (kind === undefined) return false;
    if (r && !continues(r, kind)) this.end();
    if (!this.r) {
      // "a hundred", "a thousand"; a scale word alone ("hundreds of") is no number
      if (kind === 'hundred' || kind === 'scale') {
        if (!article) return true;
        this.r = { total: 0, current: 1, last: 'unit', decimals: '' };
      } else this.r = { total: 0, current: 0, last: kind, decimals: '' };
    }
    const cur = this.r;
    if (kind === 'hundred') cur.current = (cur.current || 1) * 100;
    else if (kind === 'scale') {
      cur.total += (cur.current || 1) * (SCALES[t] ?? 1);
      cur.current = 0;
    } else cur.current += UNITS[t] ?? TEENS[t] ?? TENS[t] ?? 0;
    cur.last = kind;
    return true;
  }
}

/**
 * The values of the numbers `text` writes in English words, in order: cardinals ("forty-two",
 * "one hundred and five", "two thousand twenty"), decimals ("three point five"), ordinals ("forty-second"
 * is 42), "a dozen" (12), "a hundred", and fractions, which also give their numerator ("two thirds":
 * 2 and 2/3; "half" alone: 0.5). Number words are joined by spaces and hyphens; any other mark ends one.
 */
export function numberWords(text: string): number[] {
  const reader = new WordReader();
  for (const t of text.toLowerCase().match(/[a-z]+|[^a-z]+/g) ?? []) {
    if (/^[a-z]/.test(t)) reader.word(t);
    else reader.mark(t);
  }
  reader.end();
  return reader.out;
}

/** Digit numbers of an ASCII-digit text: "1,250.5" (grouped thousands), "3.5", "42", and fractions "a/b" (their quotient too). */
function digitValues(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d*\.\d+|\d+(?:\.\d+)?/g)) {
    const v = Number(m[0].replace(/,/g, ''));
    if (Number.isFinite(v)) out.push(v);
  }
  for (const m of text.matchAll(
    /(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)|\\[dt]?frac\s*\{\s*(\d+(?:\.\d+)?)\s*\}\s*\{\s*(\d+(?:\.\d+)?)\s*\}/g,
  )) {
    const a = Number(m[1] ?? m[3]);
    const b = Number(m[2] ?? m[4]);
    if (b !== 0 && Number.isFinite(a / b)) out.push(a / b);
  }
  return out;
}

/** Every value `text` states, in digits of any script or in English words (signs are not read). */
export function statedValues(text: string): number[] {
  const t = asciiDigits(text);
  return [...digitValues(t), ...numberWords(t)];
}

/**
 * The value of an answer that is one number, with an optional sign, currency, unit, `\boxed{}` or
 * "x =" ("42", "-3.5", "$1,250", "42 km", "42km", "12 cm^2", "50%", "\frac{1}{2}", "3/4",
 * "forty-two"), as an absolute value; undefined for anything else ("(3, 4)", "x^2 + 1", "B").
 */
export function answerValue(answer: string): number | undefined {
  let a = asciiDigits(answer).trim();
  a = a.replace(/^\\boxed\s*\{([\s\S]*)\}$/, '$1').trim();
  a = a.replace(/^[a-z]\s*=\s*/i, '');
  a = a
    .replace(/\\text\s*\{([^}]*)\}/g, ' $1 ')
    .replace(/\\[,;!: ]/g, ' ')
    .replace(/\\%/g, '%')
    .replace(/\\\$/g, '$');
  a = a
    .replace(/^[-+]\s*/, '')
    .replace(/^(?:\$|€|£|¥|usd|eur)\s*/i, '')
    .trim();
  const frac =
    /^(?:\\[dt]?frac\s*\{\s*(\d+(?:\.\d+)?)\s*\}\s*\{\s*(\d+(?:\.\d+)?)\s*\}|(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?))\s*([^\d]*)$/.exec(
      a,
    );
  if (frac) {
    const v = Number(frac[1] ?? frac[3]) / Number(frac[2] ?? frac[4]);
    return Number.isFinite(v) ? v : undefined;
  }
  const num = /^(\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d*\.\d+|\d+(?:\.\d+)?)\s*(.*)$/.exec(a);
  if (num) {
    const unit = (num[2] ?? '').replace(/\^\s*\{?\s*\d+\s*\}?/g, '');
    if (/\d/.test(unit) || /^[.,]/.test(unit)) return undefined;
    const v = Number((num[1] ?? '').replace(/,/g, ''));
    return Number.isFinite(v) ? v : undefined;
  }
  if (/^[a-z][a-z\s-]*$/i.test(a)) {
    const words = numberWords(a);
    if (words.length === 1) return words[0];
  }
  return undefined;
}

/** How many of `values` equal `v` (to a relative 1e-9, so 0.1 + 0.2 is 0.3). */
export function countOf(values: readonly number[], v: number): number {
  let n = 0;
  for (const x of values) if (Math.abs(x - v) <= 1e-9 * Math.max(1, Math.abs(v))) n++;
  return n;
}
