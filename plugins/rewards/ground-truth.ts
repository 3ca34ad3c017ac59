import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RewardContext, RewardResult, RewardSource } from '../../core/contracts/reward-source';
import type { WorkOptions } from '../../core/contracts/work';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { gradeKeys, referenceKey } from '../../core/reward/grade';

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
/**
 * Whether each completion's key matches the reference's key, by the one grader's rule
 * (core/reward/grade.ts), for the rewards that read ground truth; a problem without a reference is CORL_ERR_TASK_DATA naming the plugin.
 */
export async function matchesReference(ctx: RewardContext, plugin: string, work?: WorkOptions): Promise<boolean[]> {
  if (!ctx.reference) {
    throw new CorlError('CORL_ERR_TASK_DATA', `expected a reference answer for problem "${ctx.problem.id}", got none`, {
      hint: `${plugin} needs a task whose problems all have references`,
    });
  }
  return gradeKeys(
    ctx.completions.map((c) => c.key),
    referenceKey(ctx.reference, ctx.equivalence),
    ctx.equivalence,
    work,
  );
}

export const groundTruthReward = definePlugin({
  manifest: {
    name: 'corl:ground-truth',
    kind: 'reward',
    description: 'Supervised baseline: reward 1 when the answer is equivalent to the reference answer',
    corl: '^0.1.0',
    readsGroundTruth: true,
    pointwise: true,
    options: GROUND_TRUTH_OPTIONS_SCHEMA,
  },
  create(options: GroundTruthOptions): RewardSource {
    return {
      async score(ctx, work): Promise<RewardResult> {
        const right = await matchesReference(ctx, 'corl:ground-truth', work);
        const rewards = right.map((r) => (r ? options.correct : options.wrong));
        return { rewards };
      },
    };
  },
});
