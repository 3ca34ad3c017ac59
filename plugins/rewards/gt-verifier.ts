import type { RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { matches } from '../../core/voting/match';

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
    usesGroundTruth: true,
    pointwise: true,
    options: { type: 'object', properties: {}, additionalProperties: false },
  },
  create(): RewardSource {
    return {
      async score(ctx): Promise<RewardResult> {
        if (!ctx.reference) {
          throw new CorlError(
            'CORL_ERR_TASK_DATA',
            `expected a reference answer for problem "${ctx.problem.id}", got none`,
            { hint: 'corl:gt-verifier needs a task whose problems all have references' },
          );
        }
        const target = ctx.equivalence.key(ctx.reference.answer);
        const rewards: number[] = [];
        for (const c of ctx.completions) rewards.push((await matches(c.key, target, ctx.equivalence)) ? 1 : 0);
        const right = rewards.reduce((a, b) => a + b, 0) / Math.max(rewards.length, 1);
        return { rewards, metrics: { 'verifier/score_mean': right } };
      },
    };
  },
});
