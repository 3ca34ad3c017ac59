import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { matches } from '../../core/voting/match';

const GROUND_TRUTH_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    correct: { type: 'number', default: 1, description: 'reward of a correct answer' },
    wrong: { type: 'number', default: 0, description: 'reward of a wrong or missing answer' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type GroundTruthOptions = FromSchema<typeof GROUND_TRUTH_OPTIONS_SCHEMA>;

/** The supervised baseline: a binary verifier against the dataset's reference answer. */
export const groundTruthReward = definePlugin({
  manifest: {
    name: 'corl:ground-truth',
    kind: 'reward',
    description: 'Supervised baseline: reward 1 when the answer is equivalent to the reference answer',
    corl: '^0.1.0',
    usesGroundTruth: true,
    pointwise: true,
    options: GROUND_TRUTH_OPTIONS_SCHEMA,
  },
  create(options: GroundTruthOptions): RewardSource {
    return {
      async score(ctx): Promise<RewardResult> {
        if (!ctx.reference) {
          throw new CorlError(
            'CORL_ERR_TASK_DATA',
            `expected a reference answer for problem "${ctx.problem.id}", got none`,
            {
              hint: 'corl:ground-truth needs a task whose problems all have references',
            },
          );
        }
        const target = ctx.equivalence.key(ctx.reference.answer);
        const rewards: number[] = [];
        for (const c of ctx.completions)
          rewards.push((await matches(c.key, target, ctx.equivalence)) ? options.correct : options.wrong);
        return { rewards };
      },
    };
  },
});
