import type { AnswerExtractor } from '../../core/contracts/answer-extractor';
import type { Equivalence } from '../../core/contracts/equivalence';
import { definePlugin } from '../../core/plugins/define';

interface MathExtractorOptions {
  /** Fall back to the last number in the text when no explicit answer marker is found (the released reference does). */
  lastNumber: boolean;
}

/** Content of the last `\boxed{…}` / `\fbox{…}` with balanced braces, or null. Linear scan, no regex backtracking. */
export function lastBoxed(text: string): string | null {
  let at = -1;
  for (const macro of ['\\boxed', '\\fbox']) at = Math.max(at, text.lastIndexOf(macro));
  while (at >= 0) {
    const macroLen = text.startsWith('\\boxed', at) ? 6 : 5;
    let i = at + macroLen;
    while (text[i] === ' ') i++;
    if (text[i] === '{') {
      let depth = 0;
      for (let j = i; j < text.length; j++) {
        const c = text[j];
        if (c === '{') depth++;
        else if (c === '}' && --depth === 0) return text.slice(i + 1, j);
      }
    } else if (i < text.length && i > at + macroLen) {
      // "\boxed 5": up to the next $ or whitespace
      const m = /^[^\s$]+/.exec(text.slice(i, i + 200));
      if (m) return m[0];
    }
    // unbalanced: try an earlier one
    const before = text.slice(0, at);
    at = Math.max(before.lastIndexOf('\\boxed'), before.lastIndexOf('\\fbox'));
  }
  return null;
}

const ANSWER_IS = /(?:the )?(?:final )?answer is[:\s]*/gi;
const NUMBER = /-?\d[\d,]*(?:\.\d+)?|-?\.\d+/g;

/**
 * The foundation's math extractor: the last brace-balanced `\boxed{}`, then the text after the last
 * "the answer is", then (optionally) the last number.
 */
export function extractMath(text: string, options: MathExtractorOptions): string | null {
  const boxed = lastBoxed(text);
  if (boxed !== null && boxed.trim()) return boxed.trim();
  let last: RegExpExecArray | null = null;
  for (let m = ANSWER_IS.exec(text); m; m = ANSWER_IS.exec(text)) last = m;
  ANSWER_IS.lastIndex = 0;
  if (last) {
    const rest = text.slice(last.index + last[0].length, last.index + last[0].length + 200);
    const answer = rest.split(/\n|(?<=[^\d])\.(?:\s|$)|\.$/)[0]!.replace(/^\$+|\$+$/g, '').trim();
    if (answer) return answer;
  }
  if (!options.lastNumber) return null;
  let num: string | null = null;
  for (const m of text.matchAll(NUMBER)) num = m[0];
  return num;
}

export const mathExtractor = definePlugin({
  manifest: {
    name: 'corl:math',
    kind: 'extractor',
    description: 'Final math answer: last balanced \\boxed{}, then "the answer is", then the last number',
    corl: '^0.1.0',
    options: {
      type: 'object',
      properties: {
        lastNumber: { type: 'boolean', default: true, description: 'fall back to the last number in the text (the released reference votes with it)' },
      },
      additionalProperties: false,
    },
  },
  create(options: MathExtractorOptions): AnswerExtractor {
    return { extract: (text) => extractMath(text, options) };
  },
});

interface MathEquivalenceOptions {
  /** Relative tolerance of numeric comparison. */
  tolerance: number;
}

/** Canonical key of a math answer: whitespace, `$`, `\left`/`\right`, `\text{}` wrappers, `\dfrac` and trailing dots removed; numbers in canonical decimal form. */
export function mathKey(answer: string): string | null {
  let s = answer.trim();
  s = s.replace(/\\(?:left|right)(?=[()[\]|.\\{}])/g, '').replace(/\\[dt]frac/g, '\\frac');
  s = s.replace(/\\(?:text|mathrm|textbf|mbox)\{([^{}]*)\}/g, '$1');
  s = s.replace(/\$/g, '').replace(/\\[,;:! ]/g, '').replace(/\s+/g, '');
  s = s.replace(/\.$/, '');
  if (/^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/,/g, '');
  if (/^-?(\d+\.?\d*|\.\d+)$/.test(s)) s = canonicalNumber(Number(s));
  const frac = /^(-?\d+)\/(\d+)$/.exec(s);
  if (frac) s = `\\frac{${frac[1]}}{${frac[2]}}`;
  return s === '' ? null : s;
}

function canonicalNumber(x: number): string {
  return Object.is(x, -0) ? '0' : String(x);
}

/** The numeric value of a key, when it is a plain number or a \frac of integers. */
export function numericValue(key: string): number | undefined {
  if (/^-?\d+(\.\d+)?(e[+-]?\d+)?$/.test(key)) return Number(key);
  const f = /^(-?)\\frac\{(-?\d+)\}\{(\d+)\}$/.exec(key);
  if (f && Number(f[3]) !== 0) return (f[1] ? -1 : 1) * Number(f[2]) / Number(f[3]);
  return undefined;
}

export const mathEquivalence = definePlugin({
  manifest: {
    name: 'corl:math',
    kind: 'equivalence',
    description: 'Math answers: normalized keys, then numeric equality within a relative tolerance',
    corl: '^0.1.0',
    options: {
      type: 'object',
      properties: {
        tolerance: { type: 'number', minimum: 0, default: 1e-4, description: 'relative tolerance of numeric equality' },
      },
      additionalProperties: false,
    },
  },
  create(options: MathEquivalenceOptions): Equivalence {
    return {
      key: mathKey,
      async equal(a, b) {
        if (a === b) return true;
        const x = numericValue(a);
        const y = numericValue(b);
        if (x === undefined || y === undefined) return false;
        return Math.abs(x - y) <= options.tolerance * Math.max(Math.abs(x), Math.abs(y), 1e-12);
      },
    };
  },
});
