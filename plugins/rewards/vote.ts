import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RewardContext, RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { definePlugin } from '../../core/registry/define';
import type { Equivalence } from '../../core/contracts/equivalence';
import type { WorkOptions } from '../../core/contracts/work';
import { matchesAtOnce } from '../../core/voting/match';
import { pluralityVote } from '../../core/voting/plurality';
import { mapPacked } from '../../core/util/arrays';

const VOTE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    threshold: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: 0,
      description: 'minimum vote share of the winning answer; below it the prompt has no label',
    },
    rule: {
      enum: ['pool', 'teacher', 'majority'],
      default: 'pool',
      description:
        "pool: one plurality over all supervisors' answers (with corl:complete: union of peers, or self + peers); teacher: the first supervisor only (the released Co-RL code's ring); majority: the label a strict majority of supervisors' own labels share, ties give no label",
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type VoteOptions = FromSchema<typeof VOTE_OPTIONS_SCHEMA>;

/**
 * Majority-vote pseudo-labels: Co-RL with `corl:ring`, TTRL with `corl:self`.
 * â = argmax_b Σ_{m∈S(n)} Σ_j 1[a_m^j ≡ b]; r_k = 1[a_k ≡ â]; no label → every reward 0.
 * Equations: docs/algorithms/co-rl.md (1)–(3).
 */
export const voteReward = definePlugin({
  manifest: {
    name: 'corl:vote',
    kind: 'reward',
    description:
      "Majority-vote pseudo-label from the topology's supervisors; reward 1 for agreeing with it (Co-RL, TTRL)",
    corl: '^0.1.0',
    readsGroundTruth: false,
    options: VOTE_OPTIONS_SCHEMA,
  },
  create(options: VoteOptions): RewardSource {
    return {
      async score(ctx, work): Promise<RewardResult> {
        const { vote, own, matches } = await groupVote(ctx, options, work);
        const rewards = matches.map((m) => (m ? 1 : 0));
        const metrics: Record<string, number> = { 'vote/answered_fraction': vote.total ? vote.voters / vote.total : 0 };
        if (vote.label !== null) metrics['vote/majority_ratio'] = vote.share;
        // the reference logs labeled fractions of own, peer and both labels
        metrics['vote/own_labeled'] = own.label !== null ? 1 : 0;
        metrics['vote/both_labeled'] = own.label !== null && vote.label !== null ? 1 : 0;
        return { rewards, label: vote.label, ownLabel: own.label, metrics };
      },
    };
  },
});

/** The vote of one context: the supervisors' label, the agent's own label, and who matches the label. */
export interface GroupVote {
  readonly vote: LabelVote;
  readonly own: { readonly label: string | null };
  /** Whether each completion's key matches `vote.label` (the `matches` rule). */
  readonly matches: readonly boolean[];
}

/**
 * The vote `corl:vote` rewards with, written once (`corl:python` hands the same facts to a Python
 * function): the label of the supervisors' keys by `rule` (`pool`: one plurality over all, `teacher`: the
 * first supervisor, `majority`: a strict majority of their own labels) at `threshold`, the own
 * label (the supervisors' under self-supervision, where the two are one vote), and who matches it.
 * `work` goes to every `equal`.
 */
export async function groupVote(
  ctx: RewardContext,
  options: { readonly rule: VoteOptions['rule']; readonly threshold: number },
  work?: WorkOptions,
): Promise<GroupVote> {
  const vote =
    options.rule === 'majority'
      ? await majorityOfLabels(
          mapPacked(ctx.supervisors, (sup) => sup.keys),
          ctx.equivalence,
          options.threshold,
          work,
        )
      : await pluralityVote(
          (options.rule === 'teacher' ? ctx.supervisors.slice(0, 1) : ctx.supervisors).flatMap((sup) => sup.keys),
          ctx.equivalence,
          options.threshold,
          work,
        );
  const own =
    ctx.supervisors.length === 1 && ctx.supervisors[0]!.agent === ctx.agent
      ? vote
      : await pluralityVote(ctx.own.keys, ctx.equivalence, options.threshold, work);
  const matches: boolean[] = [];
  for (const c of ctx.completions) {
    // Equal keys and missing answers are settled at once; only differing keys wait for `equal`.
    const now = matchesAtOnce(c.key, vote.label);
    matches.push(now ?? (await ctx.equivalence.equal(c.key!, vote.label!, work)));
  }
  return { vote, own, matches };
}

/** The outcome of a vote among supervisors' labels: the label and the share of supervisors behind it. */
interface LabelVote {
  readonly label: string | null;
  readonly share: number;
  readonly voters: number;
  readonly total: number;
}

/**
 * Strict majority over supervisors: each supervisor's own plurality label (with the threshold) is
 * one vote; the label wins when more than half of all supervisors (labelled or not) share it, else
 * there is no label (a tie of two against two is no label).
 */
export async function majorityOfLabels(
  groups: readonly (readonly (string | null)[])[],
  equivalence: Equivalence,
  threshold: number,
  work?: WorkOptions,
): Promise<LabelVote> {
  const labels: (string | null)[] = [];
  let answered = 0;
  let total = 0;
  for (const g of groups) {
    const v = await pluralityVote(g, equivalence, threshold, work);
    labels.push(v.label);
    answered += v.voters;
    total += v.total;
  }
  const among = await pluralityVote(labels, equivalence, 0, work);
  const best = among.clusters.reduce((m, c) => Math.max(m, c.count), 0);
  const strict = groups.length > 0 && best * 2 > groups.length;
  return {
    label: strict ? among.label : null,
    share: groups.length ? best / groups.length : 0,
    voters: answered,
    total,
  };
}
