import type { RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { definePlugin } from '../../core/registry/define';
import { matchesReference } from './ground-truth';
import { mean } from '../../core/util/mean';

/**
 * MAPoRL's verifier, from labels: each turn's score is 1 when its answer is equivalent to the
 * reference, else 0 (the released code's label-only mode). It reads ground truth, so a `labelFree`
 * run refuses it; MAPoRL's learned verifier is `corl:learned-verifier` (docs/algorithms/maporl.md).
 */
export const gtVerifierReward = definePlugin({
  manifest: {
    name: 'corl:gt-verifier',
    kind: 'reward',
    description: "Ground-truth verifier of a debate's turns: score 1 when the answer matches the reference, else 0",
    corl: '^0.1.0',
    readsGroundTruth: true,
    pointwise: true,
    options: { type: 'object', properties: {}, additionalProperties: false },
  },
  create(): RewardSource {
    return {
      async score(ctx, work): Promise<RewardResult> {
        const rewards: number[] = (await matchesReference(ctx, 'corl:gt-verifier', work)).map((r) => (r ? 1 : 0));
        return { rewards, metrics: { 'verifier/score_mean': mean(rewards, 0) } };
      },
    };
  },
});
