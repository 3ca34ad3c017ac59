// Final-answer extraction from completions. Each rule is a linear scan (indexOf/lastIndexOf and one
// brace-matching pass), so a megabyte of hostile text costs a few milliseconds, never a hang.
import type { MathExtractorOptions } from './math';
import { asciiLower, braceMatches, isDigit, isSpace, lastIndexOfTail, trimMath } from './latex';

/** Which rules the math extractor tries, in this order: the options of the `corl:math` extractor. */
export type MathExtractRules = MathExtractorOptions;

/** Every rule on: the released Co-RL code's behaviour plus answer tags. */
export const ALL_RULES: MathExtractRules = {
  minerva: true,
  answerTags: true,
  boxed: true,
  answerIs: true,
  lastNumber: true,
};

/** Longest stretch taken after "answer is" when no delimiter ends it sooner. */
const ANSWER_IS_SPAN = 300;
/** Longest unbraced `\boxed 5` argument. */
const UNBRACED_SPAN = 200;

/**
 * The final answer of a math completion, or null. Rules in priority order: Minerva, `<answer>` tag,
 * last balanced `\boxed{}`/`\fbox{}`, "the answer is", last number (each switchable).
 */
export function extractMathAnswer(text: string, rules: MathExtractRules = ALL_RULES): string | null {
  if (typeof text !== 'string' || text.length === 0) return null;
  if (rules.minerva) {
    const m = minervaAnswer(text);
    if (m !== null) return m;
  }
  if (rules.answerTags) {
    const tag = lastAnswerTag(text);
    if (tag !== null) {
      const inner = extractMathAnswer(tag, { ...rules, answerTags: false, lastNumber: false });
      const answer = inner ?? nonEmpty(trimMath(tag));
      if (answer !== null) return answer;
    }
  }
  if (rules.boxed) {
    const b = lastBoxed(text);
    if (b !== null) return b;
  }
  if (rules.answerIs) {
    const a = afterAnswerIs(text);
    if (a !== null) return a;
  }
  if (rules.lastNumber) return lastNumber(text);
  return null;
}

function nonEmpty(s: string): string | null {
  return s.length > 0 ? s : null;
}

/** Minerva format: the `$…$` after the last "final answer is", when followed by `. I hope`. */
export function minervaAnswer(text: string): string | null {
  const at = lastIndexOfTail(text, 'final answer is', true);
  if (at < 0) return null;
  let i = at + 'final answer is'.length;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 36 /* $ */) return null;
  const rest = asciiLower(text.slice(i + 1));
  const found = rest.indexOf('$. i hope');
  const end = found < 0 ? -1 : i + 1 + found;
  if (end < 0) return null;
  return nonEmpty(trimMath(text.slice(i + 1, end)));
}

/** Content of the last `<answer>…</answer>` (an unclosed last tag is ignored). */
export function lastAnswerTag(text: string): string | null {
  const close = lastIndexOfTail(text, '</answer>', true);
  if (close < 0) return null;
  const open = lastIndexOfTail(text, '<answer>', true, close);
  if (open < 0) return null;
  return text.slice(open + '<answer>'.length, close);
}

/**
 * Content of the last `\boxed{…}` or `\fbox{…}` whose brace is balanced (an unbalanced last one, as in
 * a truncated completion, yields the one before it). `\boxed 5` (no brace) gives the text up to the
 * next `$` or line end. Candidates are visited from the end; the first unbalanced one makes a single
 * brace-matching pass over the whole text, so the scan stays linear however many boxes there are.
 */
export function lastBoxed(text: string): string | null {
  let match: Int32Array | undefined;
  let nextBoxed = lastIndexOfTail(text, '\\boxed');
  let nextFbox = lastIndexOfTail(text, '\\fbox');
  while (nextBoxed >= 0 || nextFbox >= 0) {
    const isBoxed = nextBoxed > nextFbox;
    const at = isBoxed ? nextBoxed : nextFbox;
    // earlier candidates: a native backward search from here costs the distance covered, no more
    if (isBoxed) nextBoxed = at > 0 ? text.lastIndexOf('\\boxed', at - 1) : -1;
    else nextFbox = at > 0 ? text.lastIndexOf('\\fbox', at - 1) : -1;
    const macroEnd = at + (isBoxed ? 6 : 5);
    // `\boxedx` is another macro, not \boxed followed by x
    const next = text.charCodeAt(macroEnd);
    if ((next >= 65 && next <= 90) || (next >= 97 && next <= 122)) continue;
    let i = macroEnd;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) === 123 /* { */) {
      let close: number;
      if (match) close = match[i]!;
      else {
        close = closingBrace(text, i);
        if (close < 0) match = braceMatches(text);
      }
      if (close > i) {
        const inner = trimMath(text.slice(i + 1, close));
        if (inner.length > 0) return inner;
      }
    } else if (i > macroEnd && i < text.length) {
      let j = i;
      const limit = Math.min(text.length, i + UNBRACED_SPAN);
      while (j < limit && text.charCodeAt(j) !== 36 && text.charCodeAt(j) !== 10) j++;
      const inner = trimMath(text.slice(i, j));
      if (inner.length > 0) return inner;
    }
  }
  return null;
}

/** Index of the `}` closing the `{` at `open` (escaped braces skipped), or −1 when it never closes. */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let j = open; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 92) {
      j++;
      continue;
    }
    if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return j;
  }
  return -1;
}

/**
 * The answer stated after the last "answer is" or "answer:" (as in "the final answer is 42." or
 * "**Answer:** $x^2$"): a `$…$` span if one opens it, else up to the end of the sentence or line.
 */
export function afterAnswerIs(text: string): string | null {
  let at = -1;
  let len = 0;
  for (const marker of ['answer is', 'answer:']) {
    const i = lastIndexOfTail(text, marker, true);
    if (i > at) {
      at = i;
      len = marker.length;
    }
  }
  if (at < 0) return null;
  let i = at + len;
  const end = Math.min(text.length, i + ANSWER_IS_SPAN);
  // skip spacing, colons and markdown emphasis between the marker and the answer
  while (i < end) {
    const c = text.charCodeAt(i);
    if (isSpace(c) || c === 58 /* : */ || c === 42 /* * */ || c === 95 /* _ */) i++;
    else break;
  }
  if (i >= end) return null;
  let span: string;
  if (text.charCodeAt(i) === 36 /* $ */) {
    let s = i;
    while (s < end && text.charCodeAt(s) === 36) s++;
    let e = s;
    while (e < end && text.charCodeAt(e) !== 36) e++;
    span = text.slice(s, e);
  } else if (text.startsWith('\\(', i) || text.startsWith('\\[', i)) {
    const closer = text.startsWith('\\(', i) ? '\\)' : '\\]';
    const e = text.indexOf(closer, i + 2);
    span = text.slice(i + 2, e >= 0 && e < end ? e : end);
  } else {
    let e = i;
    while (e < end) {
      const c = text.charCodeAt(e);
      if (c === 10 || c === 13) break;
      // a period ends the sentence unless it is a decimal point (digit on both sides)
      if (c === 46 && !(isDigit(text.charCodeAt(e - 1)) && isDigit(text.charCodeAt(e + 1)))) {
        const n = text.charCodeAt(e + 1);
        if (e + 1 >= text.length || isSpace(n) || n === 42 || n === 36) break;
      }
      e++;
    }
    span = text.slice(i, e);
  }
  span = stripEmphasis(trimMath(span));
  return nonEmpty(span);
}

function stripEmphasis(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 42 || s.charCodeAt(a) === 95)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 42 || s.charCodeAt(b - 1) === 95 || s.charCodeAt(b - 1) === 46)) b--;
  return trimMath(s.slice(a, b));
}

/**
 * The last number in the text: optional minus, digits with thousands commas (only when properly
 * grouped), optional decimals. Commas that do not group thousands end the number, so the last number
 * of "(3,4)" is 4, not 34. One backward scan.
 */
export function lastNumber(text: string): string | null {
  let e = text.length;
  while (e > 0 && !isDigit(text.charCodeAt(e - 1))) e--;
  if (e === 0) return null;
  let k = e;
  while (k > 0 && isDigit(text.charCodeAt(k - 1))) k--;
  let frac = '';
  let intEnd = e;
  if (k > 0 && text.charCodeAt(k - 1) === 46 /* . */) {
    frac = text.slice(k, e);
    intEnd = k - 1;
    if (intEnd === 0 || !isDigit(text.charCodeAt(intEnd - 1))) return sign(text, intEnd, `0.${frac}`);
  }
  // integer part: digits and commas, left of intEnd
  let s = intEnd;
  while (s > 0 && (isDigit(text.charCodeAt(s - 1)) || text.charCodeAt(s - 1) === 44)) s--;
  while (text.charCodeAt(s) === 44) s++;
  let intPart = text.slice(s, intEnd);
  if (intPart.includes(',')) {
    if (isThousands(intPart)) intPart = intPart.replace(/,/g, '');
    else {
      const cut = intPart.lastIndexOf(',') + 1;
      s += cut;
      intPart = intPart.slice(cut);
    }
  }
  return sign(text, s, frac ? `${intPart}.${frac}` : intPart);
}

/** Whether `digits` is grouped by thousands: 1 to 3 digits, then groups of exactly 3 after each comma. */
export function isThousands(digits: string): boolean {
  const groups = digits.split(',');
  if (groups.length < 2 || groups[0]!.length < 1 || groups[0]!.length > 3) return false;
  for (const g of groups) if (!/^\d+$/.test(g)) return false;
  for (let i = 1; i < groups.length; i++) if (groups[i]!.length !== 3) return false;
  return true;
}

function sign(text: string, start: number, num: string): string {
  return start > 0 && text.charCodeAt(start - 1) === 45 /* - */ && !isDigit(text.charCodeAt(start - 2))
    ? `-${num}`
    : num;
}
