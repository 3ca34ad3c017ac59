import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { AnswerExtractor } from '../../core/contracts/answer-extractor';
import { definePlugin } from '../../core/registry/define';
import { afterAnswerIs, lastAnswerTag, lastBoxed } from './extract';
import { isSpace } from './latex';

const LEAD_WORDS = ['option', 'choice', 'answer'];

/** The option letter a short answer names: "C", "(C)", "[C]", "C.", "C) text", "C. text", "Option C". */
export function letterOf(candidate: string, letters: string): string | null {
  let s = candidate;
  // unwrap \text{...} / \mathrm{...} / \textbf{...} and markdown emphasis, $ and spaces
  s = s.replace(/\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]{0,200})\}/g, '$1').replace(/[*$]/g, '');
  let i = 0;
  while (i < s.length && (isSpace(s.charCodeAt(i)) || s[i] === ':')) i++;
  for (const w of LEAD_WORDS) {
    if (s.slice(i, i + w.length).toLowerCase() === w) {
      i += w.length;
      while (i < s.length && (isSpace(s.charCodeAt(i)) || s[i] === ':')) i++;
      break;
    }
  }
  let open = '';
  if (s[i] === '(' || s[i] === '[') {
    open = s[i]!;
    i++;
  }
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  const letter = s[i];
  if (letter === undefined || !letters.includes(letter)) return null;
  i++;
  while (i < s.length && isSpace(s.charCodeAt(i)) && open) i++;
  if (open) {
    if (s[i] !== (open === '(' ? ')' : ']')) return null;
    return letter;
  }
  // a bare letter must stand alone: end, or followed by punctuation / a space
  const next = s[i];
  if (next === undefined || next === '.' || next === ')' || next === ':' || next === ',' || isSpace(s.charCodeAt(i)))
    return letter;
  return null;
}

const CHOICE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    letters: { type: 'string', pattern: '^[A-Za-z]+$', default: 'ABCDE', description: 'the option letters' },
    anywhere: { type: 'boolean', default: false, description: 'also accept the last "(X)" anywhere in the text' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
export type ChoiceOptions = FromSchema<typeof CHOICE_OPTIONS_SCHEMA>;

/**
 * The chosen option letter: from the last `<answer>` tag, the last `\boxed{}`, the text after "answer
 * is"/"answer:", or a reply that starts with the letter; optionally the last "(C)" anywhere.
 */
export function extractChoice(text: string, options: ChoiceOptions): string | null {
  if (typeof text !== 'string' || text.length === 0) return null;
  for (const candidate of [lastAnswerTag(text), lastBoxed(text), afterAnswerIs(text)]) {
    if (candidate === null) continue;
    const l = letterOf(candidate, options.letters);
    if (l !== null) return l;
  }
  const whole = letterOf(text.slice(0, 400), options.letters);
  if (whole !== null) return whole;
  if (options.anywhere) {
    for (let at = text.lastIndexOf('('); at >= 0; at = at > 0 ? text.lastIndexOf('(', at - 1) : -1) {
      const l = text[at + 1];
      if (l !== undefined && options.letters.includes(l) && text[at + 2] === ')') return l;
    }
  }
  return null;
}

export const choiceExtractor = definePlugin({
  manifest: {
    name: 'corl:choice',
    kind: 'extractor',
    description:
      'Multiple-choice letter: "C", "(C)", "C. text", "answer is C", from the last <answer> tag or \\boxed{} first',
    corl: '^0.1.0',
    options: CHOICE_OPTIONS_SCHEMA,
  },
  create(options: ChoiceOptions): AnswerExtractor {
    return { extract: (text) => extractChoice(text, options) };
  },
});
