import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import * as path from 'node:path';
import type { Problem, Reference } from '../../core/contracts/problem';
import { MapGroundTruth } from '../../core/contracts/problem';
import type { Task, TaskData } from '../../core/contracts/task';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { chatDiscussionPrompt, chatEvaluationPrompt } from '../../core/discussion/prompts';

const row = {
  type: 'object',
  required: ['id', 'prompt'],
  properties: {
    id: { type: 'string', minLength: 1 },
    prompt: { type: 'string' },
    answer: { type: 'string', description: 'reference answer (ground truth; never shown to label-free plugins)' },
    variants: { type: 'array', items: { type: 'string' } },
    images: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'local image files (PNG, JPEG, GIF, WebP) for multimodal backends, relative to the config',
    },
    solution: { type: 'string', description: 'worked solution, used as pretraining text' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

const INLINE_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['train'],
  properties: {
    train: { type: 'array', items: row, minItems: 1 },
    heldOut: { type: 'array', items: row, default: [] },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type InlineOptions = FromSchema<typeof INLINE_OPTIONS_SCHEMA>;
/** One problem row of `train` or `heldOut`. */
type InlineRow = InlineOptions['train'][number];

/** Problems written directly in the config: for quick experiments and tests. */
export const inlineTask = definePlugin({
  manifest: {
    name: 'corl:inline',
    kind: 'task',
    description:
      'Problems listed in the config itself (train and held-out rows with optional answers, variants and images)',
    corl: '^0.1.0',
    options: INLINE_OPTIONS_SCHEMA,
  },
  create(options: InlineOptions, ctx): Task {
    return {
      discussionPrompt: chatDiscussionPrompt,
      evaluationPrompt: chatEvaluationPrompt,
      async load(): Promise<TaskData> {
        const refs: [string, Reference][] = [];
        const seen = new Set<string>();
        const toProblems = (rows: InlineRow[], split: string): Problem[] =>
          rows.map((r, i) => {
            if (seen.has(r.id)) {
              throw new CorlError('CORL_ERR_TASK_DATA', `expected unique problem ids, got "${r.id}" twice`, {
                where: `task.options.${split}[${i}].id`,
              });
            }
            seen.add(r.id);
            if (r.answer !== undefined) refs.push([r.id, { answer: r.answer, solution: r.solution }]);
            const images = r.images?.map((f) => path.resolve(ctx.baseDir, f));
            return { id: r.id, prompt: r.prompt, variants: r.variants, ...(images ? { images } : {}) };
          });
        const train = toProblems(options.train, 'train');
        const heldOut = toProblems(options.heldOut, 'heldOut');
        const pretrainText = [...options.train]
          .filter((r) => r.solution !== undefined)
          .map((r) => r.prompt + r.solution);
        return { train, heldOut, groundTruth: new MapGroundTruth(refs), pretrainText };
      },
    };
  },
});
