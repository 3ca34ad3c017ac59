// The meaning check of `corl rephrase`: a rephrasing may change every word but no number, must
// not be empty, and must not reveal the reference answer when the original did not, in any form:
// its text, or its value in digits of any script, in words, or with another unit (core/rephrase/numerals.ts).
import { answerValue, asciiDigits, countOf, statedValues } from './numerals';

/** Why a variant was dropped, or null when it passed. */
export type CheckFailure =
  | { readonly reason: 'empty' }
  | { readonly reason: 'numbers'; readonly original: readonly string[]; readonly variant: readonly string[] }
  | { readonly reason: 'answer'; readonly answer: string };

/**
 * The numbers written in a text, canonical and sorted: digit runs with decimal points and properly
 * grouped thousands commas ("1,250" is 1250, "3.50" is 3.5), in any script's digits ("４２" and "٤٢"
 * are 42); signs and number words are ignored.
 */
export function numbersOf(text: string): string[] {
  const out: string[] = [];
  for (const m of asciiDigits(text).matchAll(/\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?/g)) {
    const v = Number(m[0].replace(/,/g, ''));
    out.push(Number.isFinite(v) ? String(v) : m[0]);
  }
  return out.sort();
}

/** `text` as the textual leak check compares it: NFKC, ASCII digits, LaTeX spacing and `\left`/`\right` gone, `\dfrac` as `\frac`. */
function plain(text: string): string {
  return asciiDigits(text)
    .replace(/\\(?:left|right)\b/g, '')
    .replace(/\\[dt]frac\b/g, '\\frac')
    .replace(/\\[,;!: ]/g, ' ');
}

/**
 * Whether `text` mentions `answer` as written: as a whole word for short alphanumeric answers (option
 * letters, small numbers), else as a substring ignoring case and spaces; both sides in ASCII digits
 * and NFKC forms ("Ｂ" is "B").
 */
export function mentions(text: string, answer: string): boolean {
  const a = plain(answer).trim();
  const t = plain(text);
  if (a === '') return false;
  if (/^[A-Za-z0-9.]{1,3}$/.test(a)) {
    const escaped = a.replace(/\./g, '\\.');
    return new RegExp(`(^|[^A-Za-z0-9.])${escaped}($|[^A-Za-z0-9.]|\\.(?!\\d))`).test(t);
  }
  const squeeze = (x: string): string => x.toLowerCase().replace(/\s+/g, '');
  return squeeze(t).includes(squeeze(a));
}

/**
 * Whether `variant` states the value of a one-number answer more often than `original` does: in
 * digits of any script, in words ("(which makes forty-two)"), as a fraction or decimal ("1/2" for
 * 0.5), or with another unit ("42 kilometres" for "42 km"). Signs are not read, so "-42" leaks as "42".
 */
export function revealsValue(original: string, variant: string, answer: string): boolean {
  const v = answerValue(answer);
  if (v === undefined) return false;
  return countOf(statedValues(variant), Math.abs(v)) > countOf(statedValues(original), Math.abs(v));
}

/** Check one rephrasing of `original` (whose reference answer is `answer`, when known). */
export function checkVariant(original: string, variant: string, answer?: string): CheckFailure | null {
  if (variant.trim() === '') return { reason: 'empty' };
  const a = numbersOf(original);
  const b = numbersOf(variant);
  if (a.length !== b.length || a.some((x, i) => x !== b[i])) return { reason: 'numbers', original: a, variant: b };
  if (
    answer !== undefined &&
    ((mentions(variant, answer) && !mentions(original, answer)) || revealsValue(original, variant, answer))
  )
    return { reason: 'answer', answer };
  return null;
}

/** One line for a report: why the variant was dropped. */
export function describeFailure(f: CheckFailure): string {
  if (f.reason === 'empty') return 'empty rephrasing';
  if (f.reason === 'answer') return `reveals the answer "${f.answer}", which the original does not`;
  return `numbers differ: original {${f.original.join(', ')}}, variant {${f.variant.join(', ')}}`;
}
