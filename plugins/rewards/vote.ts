import type { RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { definePlugin } from '../../core/plugins/define';
import { matches, pluralityVote } from '../../core/voting/plurality';

interface VoteOptions {
  /** A winning vote share under this is no label (the reference's default is 0). */
  threshold: number;
  /**
   * How the answers of several supervisors combine: `pool` counts all their answers in one
   * plurality (self + peers or union of peers, depending on the topology); `teacher` uses only the
   * first supervisor (the released reference's ring rule).
   */
  rule: 'pool' | 'teacher';
}

/**
 * Majority-vote pseudo-labels: Co-RL with `corl:ring`, TTRL with `corl:self`.
 * â = argmax_b Σ_{m∈S(n)} Σ_j 1[a_m^j ≡ b]; r_k = 1[a_k ≡ â]; no label → every reward 0.
 * Equations: docs/algorithms/co-rl.md (1)–(3).
 */
export const voteReward = definePlugin({
  manifest: {
    name: 'corl:vote',
    kind: 'reward',
    description: 'Majority-vote pseudo-label from the topology\'s supervisors; reward 1 for agreeing with it (Co-RL, TTRL)',
    corl: '^0.1.0',
    usesGroundTruth: false,
    options: {
      type: 'object',
      properties: {
        threshold: { type: 'number', minimum: 0, maximum: 1, default: 0, description: 'minimum vote share of the winning answer; below it the prompt has no label' },
        rule: { enum: ['pool', 'teacher'], default: 'pool', description: 'pool: one plurality over all supervisors\' answers; teacher: the first supervisor only' },
      },
      additionalProperties: false,
    },
  },
  create(options: VoteOptions): RewardSource {
    return {
      async score(ctx): Promise<RewardResult> {
        const voters = options.rule === 'teacher' ? ctx.supervisors.slice(0, 1) : ctx.supervisors;
        const keys = voters.flatMap((s) => s.keys);
        const vote = await pluralityVote(keys, ctx.equivalence, options.threshold);
        const own = ctx.supervisors.length === 1 && ctx.supervisors[0]!.agent === ctx.agent
          ? vote
          : await pluralityVote(ctx.own.keys, ctx.equivalence, options.threshold);
        const rewards: number[] = [];
        for (const c of ctx.completions) rewards.push((await matches(c.key, vote.label, ctx.equivalence)) ? 1 : 0);
        const metrics: Record<string, number> = { 'vote/answered_fraction': vote.total ? vote.voters / vote.total : 0 };
        if (vote.label !== null) metrics['vote/majority_ratio'] = vote.share;
        return { rewards, label: vote.label, ownLabel: own.label, metrics };
      },
    };
  },
});
