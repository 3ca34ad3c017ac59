// CoMAS (arXiv 2510.08529; the released code's CoMAS workflow and reward, xxyQwQ/CoMAS): agents propose
// solutions, another agent evaluates each, a judge scores each proposal against its evaluation on a
// 1–3 rubric, and the normalized score s = (score − 1)/2 rewards the proposal (s) and its evaluation
// (1 − s). Label-free: no reference reaches it or its judge. docs/algorithms/comas.md works it through.
import type { ExtendedJSONSchema, FromExtendedSchema } from 'json-schema-to-ts';
import type { DebateScores, DiscussionRecord, Interaction, Judgement, TurnRef } from '../../core/contracts/interaction';
import type { Judge, JudgeItem, JudgeTools } from '../../core/contracts/judge';
import type { PluginContext, PluginKind, ResolvedSelection } from '../../core/contracts/plugin';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';

/** corl's schema keyword for a nested plugin selection, `{ corlPlugin: kind }`. */
type CorlPluginKeyword = { corlPlugin: PluginKind };

/** The options schema of `corl:comas`. */
const COMAS_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    cycles: {
      type: 'integer',
      minimum: 1,
      maximum: 8,
      default: 2,
      description: 'propose-then-evaluate cycles per problem (the released num_rounds: 2); 2·cycles turns',
    },
    references: {
      type: 'integer',
      minimum: 1,
      maximum: 16,
      default: 2,
      description: "earlier (proposal, evaluation) pairs a later proposal quotes: its own, then its neighbours'",
    },
    share: {
      enum: ['answer', 'solution'],
      default: 'solution',
      description: 'quote turns as answers only, or as whole solutions (cut to the context)',
    },
    judge: {
      corlPlugin: 'judge',
      default: 'corl:policy-judge',
      description: 'the judge: "corl:policy-judge" (a cohort policy, embedded) or "corl:openai-judge" (an LLM)',
    },
  },
  additionalProperties: false,
} as const satisfies ExtendedJSONSchema<CorlPluginKeyword>;

/** Options of `corl:comas`, derived from its schema; `judge` is a selection the validator has resolved. */
export type ComasOptions = FromExtendedSchema<
  CorlPluginKeyword,
  typeof COMAS_OPTIONS_SCHEMA,
  { deserialize: [{ pattern: { corlPlugin: 'judge' }; output: ResolvedSelection }] }
>;

/** The agent whose proposal agent `e` evaluates: e − 1 (mod N), the ring's "n reads n − 1". */
export const evaluatedBy = (e: number, agents: number): number => (e - 1 + agents) % agents;
/** The agent that evaluates agent `t`'s proposal: t + 1 (mod N). */
export const evaluatorOf = (t: number, agents: number): number => (t + 1) % agents;

/**
 * The turns agent `agent` reads in round `round` of CoMAS: in an evaluation round (odd), the proposal
 * it evaluates; in a later proposal round (even, ≥ 2), the last cycle's (proposal, evaluation) pairs
 * of itself and then its neighbours, `references` of them.
 */
export function comasReads(
  references: number,
  round: number,
  agent: number,
  neighbours: readonly (readonly number[])[],
): TurnRef[] {
  const N = neighbours.length;
  if (round % 2 === 1) return [{ round: round - 1, agent: evaluatedBy(agent, N) }];
  const authors = [agent, ...neighbours[agent]!.filter((m) => m !== agent)].slice(0, references);
  return authors.flatMap((m) => [
    { round: round - 2, agent: m },
    { round: round - 1, agent: evaluatorOf(m, N) },
  ]);
}

/** Where a judged item sits: its proposal's (round, agent) and the evaluation's, in debate k. */
interface ItemAt {
  readonly round: number;
  readonly author: number;
  readonly evaluator: number;
  readonly debate: number;
}

/** Every (proposal, evaluation) pair of one problem's discussion, in round, evaluator, debate order. */
export function comasItems(record: DiscussionRecord): { items: JudgeItem[]; at: ItemAt[] } {
  const N = record.agents;
  const items: JudgeItem[] = [];
  const at: ItemAt[] = [];
  for (let r = 1; r < record.turns.length; r += 2)
    for (let e = 0; e < N; e++) {
      const t = evaluatedBy(e, N);
      for (let k = 0; k < record.debates; k++) {
        const p = record.turns[r - 1]![t]![k]!;
        const v = record.turns[r]![e]![k]!;
        items.push(
          Object.freeze({
            proposal: Object.freeze({ agent: t, text: p.text, answer: p.answer, key: p.key }),
            evaluation: Object.freeze({ agent: e, text: v.text, answer: v.answer, key: v.key }),
          }),
        );
        at.push({ round: r - 1, author: t, evaluator: e, debate: k });
      }
    }
  return { items, at };
}

/** The judge's scores (1..3 or null) as each proposal's quality (s = (score − 1)/2), checked. */
export async function comasJudgement(judge: Judge, record: DiscussionRecord, tools: JudgeTools): Promise<Judgement> {
  const { items, at } = comasItems(record);
  // Frozen, as every context the framework hands a plugin: a judge cannot change the items it is counted against.
  const result = await judge.score(
    Object.freeze({
      agents: tools.agents,
      equal: tools.equal,
      sample: tools.sample,
      problem: record.problem,
      prompt: record.prompt,
      step: record.step,
      items: Object.freeze(items),
    }),
  );
  const scores = result?.scores;
  const bad =
    !Array.isArray(scores) ||
    scores.length !== items.length ||
    scores.some((s) => s !== null && !(typeof s === 'number' && Number.isFinite(s) && s >= 1 && s <= 3)) ||
    ![result.calls, result.samples].every((c) => Number.isInteger(c) && c >= 0);
  if (bad)
    throw new CorlError(
      'CORL_ERR_JUDGE_OUTPUT',
      `expected the judge to return ${items.length} scores in [1, 3] or null for problem "${record.problem}", and whole counts of calls and samples; got ${JSON.stringify(result)?.slice(0, 120)}`,
      { where: 'interaction.options.judge' },
    );
  const quality: (number | null)[][][] = record.turns.map((row) => row.map((g) => g.map(() => null)));
  at.forEach((p, j) => {
    const s = scores[j]!;
    quality[p.round]![p.author]![p.debate] = s === null ? null : (s - 1) / 2;
  });
  return { quality, calls: result.calls, samples: result.samples };
}

/**
 * CoMAS's rewards from the judged quality s of every proposal: the proposal earns s and the
 * evaluation of it 1 − s (zero-sum). A turn without a verdict, or never judged (a proposal with no
 * evaluation after it, or no judgement at all), earns 0 (the released reward of an unscored pair).
 */
export function comasCredit(d: DebateScores): number[][][] {
  const N = d.agents;
  const rewards = Array.from({ length: d.turns }, () =>
    Array.from({ length: N }, () => new Array<number>(d.debates).fill(0)),
  );
  for (let r = 1; r < d.turns; r += 2)
    for (let e = 0; e < N; e++) {
      const t = evaluatedBy(e, N);
      for (let k = 0; k < d.debates; k++) {
        const s = d.judged?.quality[r - 1]?.[t]?.[k] ?? null;
        if (s === null) continue;
        rewards[r - 1]![t]![k] = s;
        rewards[r]![e]![k] = 1 - s;
      }
    }
  return rewards;
}

/** `corl:comas`: CoMAS's label-free interaction rewards, judged. */
export const comasInteraction = definePlugin({
  manifest: {
    name: 'corl:comas',
    kind: 'interaction',
    description:
      'CoMAS: agents propose, the next agent evaluates each proposal, a judge scores it 1-3; the proposal earns s = (score - 1)/2, its evaluation 1 - s',
    corl: '^0.1.0',
    options: COMAS_OPTIONS_SCHEMA,
  },
  async create(options: ComasOptions, ctx: PluginContext): Promise<Interaction> {
    const judge = await ctx.create('judge', options.judge);
    return {
      rounds: 2 * options.cycles - 1,
      share: options.share,
      validate(agents) {
        if (agents < 2)
          throw new CorlError(
            'CORL_ERR_INTERACTION_AGENTS',
            `expected at least 2 agents for corl:comas, got ${agents}`,
            { where: 'agents', hint: 'an agent cannot evaluate its own proposal: add an agent' },
          );
        const outside = judge.agents?.find((a) => !(Number.isInteger(a) && a >= 0 && a < agents));
        if (outside !== undefined)
          throw new CorlError(
            'CORL_ERR_INTERACTION_AGENTS',
            `expected the judge's agent to be one of the cohort's 0..${agents - 1}, got ${outside}`,
            { where: 'interaction.options.judge.options.agent', hint: 'name an agent of the cohort, or "all"' },
          );
      },
      turn: (round) => (round % 2 === 1 ? 'evaluate' : 'answer'),
      reads: (round, agent, neighbours) => comasReads(options.references, round, agent, neighbours),
      judge: (record, tools) => comasJudgement(judge, record, tools),
      credit: comasCredit,
      close: async () => {
        await judge.close?.();
      },
    };
  },
});
