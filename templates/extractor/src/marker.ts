import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { definePlugin, type AnswerExtractor } from 'corl';

/** Options of the extractor: a JSON Schema, which corl validates and defaults a config's options against before `create` runs. */
const MARKER_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    marker: { type: 'string', minLength: 1, default: '####', description: 'text that introduces the final answer' },
    clean: { type: 'boolean', default: true, description: 'drop thousands separators and a trailing period' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options type, derived from the schema (json-schema-to-ts), so the two cannot drift. */
export type MarkerOptions = FromSchema<typeof MARKER_OPTIONS_SCHEMA>;

/**
 * The final answer is the rest of the line after the last `marker` ("#### 72" → "72"). Total and
 * linear, as the AnswerExtractor contract requires: one `lastIndexOf` and one scan to the line end,
 * no regular expression that could backtrack; null when there is no marker or nothing after it.
 */
export function extractAfterMarker(text: string, o: MarkerOptions): string | null {
  const at = text.lastIndexOf(o.marker);
  if (at < 0) return null;
  const start = at + o.marker.length;
  let end = text.indexOf('\n', start);
  if (end < 0) end = text.length;
  let answer = text.slice(start, end).trim();
  if (o.clean) {
    if (/^-?\d{1,3}(,\d{3})+(\.\d+)?\.?$/.test(answer)) answer = answer.replace(/,/g, '');
    if (answer.endsWith('.')) answer = answer.slice(0, -1).trimEnd();
  }
  return answer === '' ? null : answer;
}

export const exampleExtractor = definePlugin({
  manifest: {
    name: 'example:extractor',
    kind: 'extractor',
    description: 'The final answer is the rest of the line after the last marker, e.g. "#### 72" (GSM8K style)',
    corl: '^0.1.0',
    options: MARKER_OPTIONS_SCHEMA,
  },
  create(options: MarkerOptions): AnswerExtractor {
    return { extract: (text) => extractAfterMarker(text, options) };
  },
});
