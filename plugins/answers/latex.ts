// Linear-time scanning helpers shared by the extractors and the normalizer. Nothing here uses a
// regular expression that can backtrack: every function is one or two passes over its input.

/**
 * For every group brace `{` of `text` (not the escaped `\{`), the index of its matching `}`, or −1
 * when it is never closed. Indices that are not an opening brace hold −1 too. One pass, O(n).
 */
export function braceMatches(text: string): Int32Array {
  const n = text.length;
  const match = new Int32Array(n).fill(-1);
  const stack = new Int32Array(n);
  let top = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) {
      i++;
      continue;
    } // an escaped character is never a group brace
    if (c === 123 /* { */) stack[top++] = i;
    else if (c === 125 /* } */ && top > 0) match[stack[--top]!] = i;
  }
  return match;
}

/** Whether `text` has `word` at `at`, comparing ASCII letters case-insensitively. */
export function startsWithIgnoreCase(text: string, word: string, at: number): boolean {
  if (at < 0 || at + word.length > text.length) return false;
  for (let i = 0; i < word.length; i++) {
    let a = text.charCodeAt(at + i);
    let b = word.charCodeAt(i);
    if (a >= 65 && a <= 90) a += 32;
    if (b >= 65 && b <= 90) b += 32;
    if (a !== b) return false;
  }
  return true;
}

/**
 * Lowercased copy with the same length as the input, so indices carry over. Only ASCII letters are
 * folded (every marker searched for is ASCII): a few non-ASCII letters change length when
 * lowercased ('İ'), so when that happens non-ASCII code units are masked first.
 */
export function asciiLower(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  return text.replace(/[^\x00-\x7f]+/g, (m) => '\u0000'.repeat(m.length)).toLowerCase();
}

/** First window searched from the end by {@link lastIndexOfTail}. */
const TAIL_WINDOW = 256;

/**
 * Start of the last occurrence of `needle` in `text` before `end` (ASCII case-insensitive when
 * `foldCase`), or −1. Final answers sit near the end of a completion, so the search starts with the
 * last 256 characters and widens eightfold until it finds one or has seen everything: linear in the
 * text, and much cheaper than a full backward search (or lowercasing the whole text) when the
 * marker is near the end.
 */
export function lastIndexOfTail(text: string, needle: string, foldCase = false, end = text.length): number {
  if (foldCase && !anyBefore(text, needle, end)) return -1;
  let w = TAIL_WINDOW;
  for (;;) {
    const start = Math.max(0, end - w);
    const part = start === 0 && end === text.length ? text : text.slice(start, end);
    const hay = foldCase ? asciiLower(part) : part;
    let i = hay.indexOf(needle);
    if (i >= 0) {
      for (let j = hay.indexOf(needle, i + 1); j >= 0; j = hay.indexOf(needle, j + 1)) i = j;
      return start + i;
    }
    if (start === 0) return -1;
    w *= 8;
  }
}

/** Per needle, its first non-letter ('' when it has none): needles are a handful of constants. */
const NON_LETTER = new Map<string, string>();

/**
 * False when a case-folded search for `needle` before `end` cannot match: folding changes letters
 * only, so a non-letter of the needle ('<', ':', a space) must stand in the text as it is. One
 * native search for it spares lowercasing windows of a text that holds none (a completion without
 * any `<` has no `</answer>`).
 */
function anyBefore(text: string, needle: string, end: number): boolean {
  let c = NON_LETTER.get(needle);
  if (c === undefined) {
    c = '';
    for (let j = 0; j < needle.length; j++)
      if (!isLetter(needle.charCodeAt(j))) {
        c = needle[j]!;
        break;
      }
    if (NON_LETTER.size < 64) NON_LETTER.set(needle, c);
  }
  return c === '' || (end > 0 && text.lastIndexOf(c, end - 1) >= 0);
}

/** Whether a UTF-16 code is an ASCII letter. */
export function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Whether a UTF-16 code is an ASCII digit. */
export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Whether a UTF-16 code is whitespace (ASCII or the common Unicode spaces). */
export function isSpace(c: number): boolean {
  return (
    c === 32 ||
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x2009 ||
    c === 0x202f ||
    c === 0x3000 ||
    (c >= 0x2000 && c <= 0x200a)
  );
}

/** `text` without leading and trailing whitespace and `$` math delimiters. */
export function trimMath(text: string): string {
  let a = 0;
  let b = text.length;
  while (a < b && (isSpace(text.charCodeAt(a)) || text.charCodeAt(a) === 36)) a++;
  while (b > a && (isSpace(text.charCodeAt(b - 1)) || text.charCodeAt(b - 1) === 36)) b--;
  return text.slice(a, b);
}
