import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { definePlugin, matches, pluralityVote, type RewardResult, type RewardSource } from 'corl';

/** Options of the reward: a JSON Schema, which corl validates and defaults a config's options against before `create` runs. */
const AGREEMENT_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    scale: { type: 'number', exclusiveMinimum: 0, default: 1, description: 'reward of full agreement' },
    minShare: { type: 'number', minimum: 0, maximum: 1, default: 0, description: 'agreement shares below this earn 0' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options type, derived from the schema (json-schema-to-ts), so the two cannot drift. */
export type AgreementOptions = FromSchema<typeof AGREEMENT_OPTIONS_SCHEMA>;

/**
 * Soft peer agreement: a completion earns the share of its supervisors' answers that are equivalent
 * to its own, r_k = scale · |{j : a_k ≡ b_j}| / |{j : b_j ≠ null}| (0 under `minShare`, 0 for no
 * answer). Unlike a majority vote, a minority answer still earns something. Label-free: it reads
 * only answer keys, never the reference.
 */
export const exampleReward = definePlugin({
  manifest: {
    name: 'example:reward',
    kind: 'reward',
    description: 'Soft peer agreement: reward = share of the supervisors\' answers equivalent to this answer',
    corl: '^0.1.0',
    readsGroundTruth: false,
    options: AGREEMENT_OPTIONS_SCHEMA,
  },
  create(options: AgreementOptions): RewardSource {
    return {
      async score(ctx): Promise<RewardResult> {
        const votes = ctx.supervisors.flatMap((s) => s.keys).filter((k): k is string => k !== null);
        const rewards: number[] = [];
        for (const c of ctx.completions) {
          let agree = 0;
          for (const v of votes) if (await matches(c.key, v, ctx.equivalence)) agree++;
          const share = votes.length ? agree / votes.length : 0;
          rewards.push(share >= options.minShare ? options.scale * share : 0);
        }
        // The plurality of the supervisors is reported as the label, so corl's label metrics work.
        const vote = await pluralityVote(votes, ctx.equivalence, 0);
        const own = await pluralityVote(ctx.own.keys, ctx.equivalence, 0);
        const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0;
        return { rewards, label: vote.label, ownLabel: own.label, metrics: { 'agreement/mean_reward': mean } };
      },
    };
  },
});
