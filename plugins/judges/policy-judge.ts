// The embedded judge of corl:comas: a cohort policy's own plurality answer stands in for an LLM judge's
// reading of a proposal and its evaluation (docs/algorithms/comas.md, "The judge").
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Judge, JudgeItem, JudgeRequest, JudgeResult } from '../../core/contracts/judge';
import { definePlugin } from '../../core/registry/define';
import { isAnswer, matches } from '../../core/voting/match';
import { pluralityVote } from '../../core/voting/plurality';

/**
 * The rubric score of one item given the judge's answer key `judge` (null: no verdict), keys compared
 * by the one key-match rule (`matches`: no answer matches anything): 3 when the proposal's key is the
 * judge's (no criticism can hold), 1 when it is not and the evaluation contested it (answered
 * otherwise: a fatal criticism that holds), `unchallenged` when it is not and the evaluation let it
 * stand.
 */
export async function policyVerdict(
  item: JudgeItem,
  judge: string | null,
  unchallenged: number,
  equal: (a: string, b: string) => Promise<boolean>,
): Promise<number | null> {
  if (judge === null) return null;
  const p = item.proposal.key;
  if (await matches(p, judge, { equal })) return 3;
  const e = item.evaluation.key;
  const contested = isAnswer(e) && !(await matches(e, p, { equal }));
  return contested ? 1 : unchallenged;
}

/** The options schema of this plugin. */
const POLICY_JUDGE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    agent: {
      oneOf: [{ type: 'integer', minimum: 0 }, { const: 'all' }],
      default: 'all',
      description: 'the agent whose policy judges, or "all": every agent\'s samples pooled into one plurality',
    },
    samples: {
      type: 'integer',
      minimum: 1,
      maximum: 256,
      default: 8,
      description: 'completions each judging agent samples per problem (its plurality is the judge answer)',
    },
    unchallenged: {
      type: 'number',
      minimum: 1,
      maximum: 3,
      default: 2,
      description: 'score of a proposal off the judge answer whose evaluation did not contest it (rubric 1..3)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** Options of `corl:policy-judge`, derived from its schema. */
export type PolicyJudgeOptions = FromSchema<typeof POLICY_JUDGE_OPTIONS_SCHEMA>;

/** `corl:policy-judge`: the plurality answer of a cohort policy's own samples judges every proposal. */
export const policyJudge = definePlugin({
  manifest: {
    name: 'corl:policy-judge',
    kind: 'judge',
    description:
      'Embedded judge: a cohort policy samples the problem; a proposal on its plurality answer scores 3, one off it 1 if its evaluation contested it, else 2',
    corl: '^0.1.0',
    options: POLICY_JUDGE_OPTIONS_SCHEMA,
  },
  create(options: PolicyJudgeOptions): Judge {
    return {
      ...(options.agent === 'all' ? {} : { agents: [options.agent] }),
      async score(req: JudgeRequest): Promise<JudgeResult> {
        const who = options.agent === 'all' ? Array.from({ length: req.agents }, (_, a) => a) : [options.agent];
        const keys: (string | null)[] = [];
        for (const a of who) for (const s of await req.sample(a, options.samples)) keys.push(s.key);
        const vote = await pluralityVote(keys, { key: (x) => x, equal: (a, b) => req.equal(a, b) }, 0);
        const scores: (number | null)[] = [];
        for (const item of req.items)
          scores.push(await policyVerdict(item, vote.label, options.unchallenged, req.equal));
        return { scores, calls: who.length, samples: who.length * options.samples };
      },
    };
  },
});
