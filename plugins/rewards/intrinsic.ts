import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { CompletionView, RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { mean } from '../../core/util/mean';

/** Mean of a per-token statistic, checked against the completion's length. */
function tokenMean(c: CompletionView, field: 'entropies' | 'meanLogprobs', index: number): number {
  const values = c[field];
  if (!values) {
    throw new CorlError('CORL_ERR_REWARD_TOKEN_STATS', `expected per-token ${field} on completion ${index}, got none`, {
      where: 'reward',
    });
  }
  if (values.length !== c.length) {
    throw new CorlError(
      'CORL_ERR_REWARD_TOKEN_STATS',
      `expected ${c.length} ${field} on completion ${index} (one per generated token), got ${values.length}`,
      { where: 'reward' },
    );
  }
  if (values.length === 0) return 0;
  let s = 0;
  for (let t = 0; t < values.length; t++) {
    const v = values[t]!;
    if (!Number.isFinite(v))
      throw new CorlError(
        'CORL_ERR_REWARD_TOKEN_STATS',
        `expected finite ${field}, got ${v} at token ${t} of completion ${index}`,
        { where: 'reward' },
      );
    s += v;
  }
  return s / values.length;
}

const INTRINSIC_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    method: {
      enum: ['rent', 'intuitor'],
      default: 'rent',
      description: 'rent: reward = -mean token entropy; intuitor: reward = mean KL(U || p_t) (self-certainty)',
    },
    vocabSize: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description:
        'vocabulary size V for the -log V term of self-certainty; 0 leaves out that constant (group-normalized advantages ignore it)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type IntrinsicOptions = FromSchema<typeof INTRINSIC_OPTIONS_SCHEMA>;

/**
 * Label-free intrinsic rewards from the policy's own next-token distributions (no voting):
 * RENT r = −(1/T) Σ_t H(p_t); Intuitor r = (1/T) Σ_t KL(U‖p_t) = −log V − (1/T) Σ_t (1/V) Σ_v log p_t(v).
 * An empty completion gets 0. The trainer asks the policy for the statistics (manifest `tokenStats`).
 */
export const intrinsicReward = definePlugin({
  manifest: {
    name: 'corl:intrinsic',
    kind: 'reward',
    description:
      "Intrinsic rewards from the policy's token distributions: RENT (-mean token entropy) or Intuitor self-certainty (mean KL(U||p))",
    corl: '^0.1.0',
    readsGroundTruth: false,
    tokenStats: true,
    options: INTRINSIC_OPTIONS_SCHEMA,
  },
  create(options: IntrinsicOptions): RewardSource {
    const logV = options.vocabSize > 0 ? Math.log(options.vocabSize) : 0;
    return {
      async score(ctx): Promise<RewardResult> {
        const rewards: number[] = [];
        let entropy = 0;
        for (const [i, c] of ctx.completions.entries()) {
          if (options.method === 'rent') {
            const h = tokenMean(c, 'entropies', i);
            entropy += h;
            rewards.push(h === 0 ? 0 : -h);
          } else {
            rewards.push(c.length === 0 ? 0 : -logV - tokenMean(c, 'meanLogprobs', i));
          }
        }
        const n = Math.max(1, ctx.completions.length);
        const metrics: Record<string, number> =
          options.method === 'rent'
            ? { 'intrinsic/entropy': entropy / n }
            : { 'intrinsic/self_certainty': mean(rewards, 0) };
        return { rewards, metrics };
      },
    };
  },
});
