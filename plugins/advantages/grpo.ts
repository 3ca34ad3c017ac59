import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { AdvantageEstimator } from '../../core/contracts/advantage-estimator';
import { drGrpoAdvantages, grpoAdvantages, rlooAdvantages } from '../../core/grpo/advantages';
import { definePlugin } from '../../core/registry/define';

const GRPO_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    scale: { enum: ['group', 'batch', 'none'], default: 'group', description: 'std used to scale centred rewards' },
    epsilon: { type: 'number', minimum: 0, default: 1e-6, description: 'added to the std (verl 1e-6, TRL 1e-4)' },
    unbiased: {
      type: 'boolean',
      default: true,
      description: 'n-1 standard deviation (torch.std), as TRL and verl',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type GrpoOptions = FromSchema<typeof GRPO_OPTIONS_SCHEMA>;

/** GRPO: (r − mean_group) / (std + ε), with the std of the group, of the batch, or none. */
export const grpoAdvantage = definePlugin({
  manifest: {
    name: 'corl:grpo',
    kind: 'advantage',
    description: 'GRPO advantages (r - group mean) / (std + eps); scale by group std, batch std or none',
    corl: '^0.1.0',
    options: GRPO_OPTIONS_SCHEMA,
  },
  create(options: GrpoOptions): AdvantageEstimator {
    return { estimate: (groups) => grpoAdvantages(groups, options) };
  },
});

/** Dr. GRPO: r − mean_group, no std scaling (pair it with the dr_grpo loss). */
export const drGrpoAdvantage = definePlugin({
  manifest: {
    name: 'corl:dr-grpo',
    kind: 'advantage',
    description: 'Dr. GRPO advantages r - group mean (no std scaling)',
    corl: '^0.1.0',
    options: { type: 'object', properties: {}, additionalProperties: false },
  },
  create(): AdvantageEstimator {
    return { estimate: (groups) => drGrpoAdvantages(groups) };
  },
});

/** RLOO: leave-one-out baseline, n/(n−1)·(r − mean_group). */
export const rlooAdvantage = definePlugin({
  manifest: {
    name: 'corl:rloo',
    kind: 'advantage',
    description: 'RLOO advantages: reward minus the mean of the other samples of the group',
    corl: '^0.1.0',
    options: { type: 'object', properties: {}, additionalProperties: false },
  },
  create(): AdvantageEstimator {
    return { estimate: (groups) => rlooAdvantages(groups) };
  },
});
