import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import * as path from 'node:path';
import type { DiversityStrategy } from '../../core/contracts/diversity-strategy';
import type { Problem } from '../../core/contracts/problem';
import { CorlError, errorLine } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { readUserText } from '../../core/util/files';
import { parseJson } from '../../core/util/json';

const REPHRASE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    assign: {
      type: 'array',
      items: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] },
      default: [null, 0],
      description: 'variant index per agent (null = canonical prompt); default: agent 0 canonical, agent 1 variant 0',
    },
    file: {
      type: 'string',
      description:
        'JSONL with {"id", "variants"} rows, e.g. written by `corl rephrase`; overrides the task\'s variants',
    },
    missing: {
      enum: ['error', 'original'],
      default: 'error',
      description: 'a problem without the assigned variant: fail, or fall back to the canonical prompt',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type RephraseOptions = FromSchema<typeof REPHRASE_OPTIONS_SCHEMA>;

/**
 * Co-RL's input diversity: agents train on differently phrased copies of the same problems, aligned
 * by problem id (same reference answer), so phrasing-correlated errors do not reinforce each other.
 */
export const rephraseDiversity = definePlugin({
  manifest: {
    name: 'corl:rephrase',
    kind: 'diversity',
    description: 'Each agent sees the problem variant assigned to it (row-aligned rephrasings, same ids and answers)',
    corl: '^0.1.0',
    options: REPHRASE_OPTIONS_SCHEMA,
  },
  create(options: RephraseOptions, ctx): DiversityStrategy {
    const fromFile = options.file ? readVariants(path.resolve(ctx.baseDir, options.file)) : undefined;
    return {
      view(problem: Problem, agent: number) {
        const index = options.assign[agent] ?? null;
        if (index === null) return { prompt: problem.prompt, images: problem.images };
        const variants = fromFile ? fromFile.get(problem.id) : problem.variants;
        const text = variants?.[index];
        if (text === undefined) {
          if (options.missing === 'original') return { prompt: problem.prompt, images: problem.images };
          throw new CorlError(
            'CORL_ERR_TASK_DATA',
            `expected variant ${index} of problem "${problem.id}" for agent ${agent}, got ${variants ? `${variants.length} variant(s)` : 'no variants'}`,
            {
              where: 'diversity.options.assign',
              hint: 'generate variants with `corl rephrase`, pick a task that ships them, or set diversity.options.missing to "original"',
            },
          );
        }
        return { prompt: text, images: problem.images };
      },
    };
  },
});

function readVariants(file: string): Map<string, string[]> {
  let text: string;
  try {
    text = readUserText(file);
  } catch (e) {
    throw new CorlError('CORL_ERR_TASK_DATA', `expected a readable variants file, got ${errorLine(e)}`, {
      where: file,
    });
  }
  const out = new Map<string, string[]>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let row: unknown;
    try {
      row = parseJson(line);
    } catch {
      throw new CorlError('CORL_ERR_TASK_DATA', 'expected a JSON object, got invalid JSON', {
        where: `${file}:${i + 1}`,
      });
    }
    const r = row as { id?: unknown; variants?: unknown };
    if (typeof r.id !== 'string' || !Array.isArray(r.variants) || !r.variants.every((v) => typeof v === 'string')) {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        'expected {"id": string, "variants": string[]}, got ' + JSON.stringify(row).slice(0, 80),
        { where: `${file}:${i + 1}` },
      );
    }
    out.set(r.id, r.variants as string[]);
  });
  return out;
}
