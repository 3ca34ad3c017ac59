import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Equivalence } from '../../core/contracts/equivalence';
import { definePlugin } from '../../core/registry/define';

const EXACT_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    caseSensitive: { type: 'boolean', default: true, description: 'compare letters case-sensitively' },
    collapseSpace: { type: 'boolean', default: true, description: 'collapse runs of whitespace into one space' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
export type ExactOptions = FromSchema<typeof EXACT_OPTIONS_SCHEMA>;

/** The key of the exact equivalence: the answer, trimmed, optionally lowercased and space-collapsed. */
export function exactKey(answer: string, options: ExactOptions): string | null {
  if (typeof answer !== 'string') return null;
  let s = options.collapseSpace ? answer.replace(/\s+/g, ' ').trim() : answer.trim();
  if (!options.caseSensitive) s = s.toLowerCase();
  return s.length > 0 ? s : null;
}

export const exactEquivalencePlugin = definePlugin({
  manifest: {
    name: 'corl:exact',
    kind: 'equivalence',
    description:
      "Exact string identity of trimmed answers (option letters, labels, the released Co-RL code's string votes)",
    corl: '^0.1.0',
    options: EXACT_OPTIONS_SCHEMA,
  },
  create(options: ExactOptions): Equivalence {
    return {
      key: (answer) => exactKey(answer, options),
      equal: async (a, b) => a === b,
    };
  },
});
