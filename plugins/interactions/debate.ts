// MAPoRL's debate (arXiv 2502.18439; credit as in the released code's score_rule and bonus_rule,
// chanwoo-park-official/MAPoRL, trl/trl/trainer/utils_multi_unified.py): each turn is rewarded by its
// verifier score plus a discounted share of later rounds' scores, plus the α incentives (all 0 by default).
// docs/algorithms/maporl.md works the formulas through.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { DebateScores, Interaction } from '../../core/contracts/interaction';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { mean } from '../../core/util/mean';

/** The options schema of `corl:debate`. */
const DEBATE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    /** Discussion rounds after round 0. */
    rounds: {
      type: 'integer',
      minimum: 1,
      maximum: 16,
      default: 2,
      description: "discussion rounds after round 0 (MAPoRL's 3-turn runs: 2)",
    },
    /** Quote neighbours' answers only, or their whole solutions. */
    share: {
      enum: ['answer', 'solution'],
      default: 'solution',
      description: "quote each neighbour's previous answer only, or its whole solution (cut to the context)",
    },
    /** Which later scores count toward a turn's reward (the released `rule_horizon`). */
    horizon: {
      enum: ['discounted_sum', 'last', 'current'],
      default: 'discounted_sum',
      description: "later scores a turn is credited with: discounted sum to the last round, the last round's, or none",
    },
    /** Whose later scores count: every agent's mean, or the agent's own (the released `rule_agent_share`). */
    agentShare: {
      enum: ['all', 'individual'],
      default: 'all',
      description: "later rounds count every agent's mean score (all) or the agent's own (individual)",
    },
    /** γ of the discounted sum (the released `rule_discount`). */
    discount: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: 0.3,
      description: 'discount gamma of later rounds',
    },
    /** The released `alpha` list: [α0, α1, α2, α3] (docs/algorithms/maporl.md, "Incentives"). */
    alpha: {
      type: 'array',
      items: { type: 'number' },
      minItems: 4,
      maxItems: 4,
      default: [0, 0, 0, 0],
      description:
        'incentives [a0, a1, a2, a3]: a0 changing with the neighbours, a1 against them, a2/a3 swaying the neighbours (docs/algorithms/maporl.md)',
    },
    /** A score above it reads as a right answer, below it as a wrong one (the released bonus_rule's 0.5). */
    threshold: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: 0.5,
      description: 'a verifier score above it is a right answer, below it a wrong one (incentives only)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** Options of `corl:debate`, derived from its schema (a four-number `alpha` is a tuple). */
export type DebateOptions = FromSchema<
  typeof DEBATE_OPTIONS_SCHEMA,
  { deserialize: [{ pattern: { type: 'array'; minItems: 4; maxItems: 4 }; output: [number, number, number, number] }] }
>;

/**
 * The rewards of every turn of one problem's debates from the verifier's scores (see
 * {@link Interaction.credit}): `score + bonus` of docs/algorithms/maporl.md.
 */
export function debateCredit(o: DebateOptions, d: DebateScores): number[][][] {
  const T = d.turns;
  const N = d.agents;
  const v = (t: number, a: number, k: number): number => d.scores[t]![a]![k]!;
  // "Others" of agent i: the neighbours it read (its own earlier turn is counted separately).
  const others = d.neighbours.map((nb, i) => nb.filter((m) => m !== i));
  // Those who read agent i: whose next turn its turn can sway.
  const readers = Array.from({ length: N }, (_, i) =>
    others.map((nb, m) => (nb.includes(i) ? m : -1)).filter((m) => m >= 0),
  );
  const right = (x: number): boolean => x > o.threshold;
  const wrong = (x: number): boolean => x < o.threshold;
  const [a0, a1, a2, a3] = o.alpha;

  const score = (t: number, i: number, k: number): number => {
    const all = (tt: number): number =>
      mean(
        Array.from({ length: N }, (_, a) => v(tt, a, k)),
        NaN,
      );
    if (o.horizon === 'current') return o.agentShare === 'all' ? all(t) : v(t, i, k);
    if (o.horizon === 'last') return o.agentShare === 'all' ? all(T - 1) : v(T - 1, i, k);
    let num = v(t, i, k);
    let den = 1;
    for (let tt = t + 1; tt < T; tt++) {
      const g = o.discount ** (tt - t);
      num += g * (o.agentShare === 'all' ? all(tt) : v(tt, i, k));
      den += g;
    }
    return num / den;
  };

  const bonus = (t: number, i: number, k: number): number => {
    let b = 0;
    const own = v(t, i, k);
    if (t > 0 && others[i]!.length > 0) {
      const before = v(t - 1, i, k);
      const seen = mean(
        others[i]!.map((m) => v(t - 1, m, k)),
        NaN,
      );
      if (right(before) && wrong(own)) {
        if (right(seen)) b -= a1;
        else if (wrong(seen)) b -= a0;
      }
      if (wrong(before) && right(own)) {
        if (wrong(seen)) b += a1;
        else if (right(seen)) b += a0;
      }
    }
    if (t < T - 1 && readers[i]!.length > 0) {
      const now = mean(
        readers[i]!.map((m) => v(t, m, k)),
        NaN,
      );
      const next = mean(
        readers[i]!.map((m) => v(t + 1, m, k)),
        NaN,
      );
      if (right(next) && wrong(now)) {
        if (right(own)) b -= a3;
        else if (wrong(own)) b -= a2;
      }
      if (wrong(next) && right(now)) {
        if (wrong(own)) b += a3;
        else if (right(own)) b += a2;
      }
    }
    return b;
  };

  return Array.from({ length: T }, (_, t) =>
    Array.from({ length: N }, (_, i) => Array.from({ length: d.debates }, (_, k) => score(t, i, k) + bonus(t, i, k))),
  );
}

/** `corl:debate`: MAPoRL's multi-agent debate with its credit assignment. */
export const debateInteraction = definePlugin({
  manifest: {
    name: 'corl:debate',
    kind: 'interaction',
    description:
      "MAPoRL debate: agents answer, then read their neighbours' answers and answer again; each turn earns its verifier score plus a discounted share of later rounds' (γ = 0.3)",
    corl: '^0.1.0',
    options: DEBATE_OPTIONS_SCHEMA,
  },
  create(options: DebateOptions): Interaction {
    return {
      rounds: options.rounds,
      share: options.share,
      validate(agents, neighbours) {
        if (agents < 2)
          throw new CorlError(
            'CORL_ERR_INTERACTION_AGENTS',
            `expected at least 2 agents for corl:debate, got ${agents}`,
            {
              where: 'agents',
              hint: 'a debate needs someone to read: add an agent',
            },
          );
        neighbours.forEach((nb, i) => {
          if (!nb.some((m) => m !== i))
            throw new CorlError(
              'CORL_ERR_INTERACTION_AGENTS',
              `expected agent ${i} to have a neighbour other than itself for corl:debate, got ${nb.length ? `only itself` : 'none'}`,
              { where: 'topology', hint: 'use a topology that links agents ("corl:complete", "corl:ring")' },
            );
        });
      },
      credit: (scores) => debateCredit(options, scores),
    };
  },
});
