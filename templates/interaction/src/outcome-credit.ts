import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { CorlError, definePlugin, type DebateScores, type Interaction } from 'corl';

/** Options of the interaction: a JSON Schema, which corl validates and defaults a config's options against before `create` runs. */
const OUTCOME_CREDIT_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    rounds: { type: 'integer', minimum: 1, maximum: 8, default: 1, description: 'discussion rounds after round 0' },
    share: { enum: ['answer', 'solution'], default: 'answer', description: "quote neighbours' answers or whole solutions" },
    weight: { type: 'number', minimum: 0, maximum: 1, default: 0.5, description: "share of a turn's reward taken from its agent's final-round score" },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options type, derived from the schema (json-schema-to-ts), so the two cannot drift. */
export type OutcomeCreditOptions = FromSchema<typeof OUTCOME_CREDIT_OPTIONS_SCHEMA>;

/**
 * The reward of every turn, rewards[t][a][k] = (1 − w)·v(t, a, k) + w·v(T − 1, a, k): its own verifier
 * score mixed with the score its agent ends the debate with, so a turn that leads to a right final
 * answer earns part of the credit even when it was wrong itself. Pure: same scores, same rewards.
 */
export function outcomeCredit(o: OutcomeCreditOptions, d: DebateScores): number[][][] {
  const last = d.scores[d.turns - 1]!;
  return d.scores.map((round) =>
    round.map((perDebate, a) => perDebate.map((v, k) => (1 - o.weight) * v + o.weight * last[a]![k]!)),
  );
}

/** A debate (agents read their neighbours' previous turns) credited by the debate's outcome. */
export const exampleInteraction = definePlugin({
  manifest: {
    name: 'example:interaction',
    kind: 'interaction',
    description: "A debate whose turns earn their own verifier score mixed with their agent's final-round score",
    corl: '^0.1.0',
    options: OUTCOME_CREDIT_OPTIONS_SCHEMA,
  },
  create(options: OutcomeCreditOptions): Interaction {
    return {
      rounds: options.rounds,
      share: options.share,
      validate(agents, neighbours) {
        if (agents < 2)
          throw new CorlError('CORL_ERR_INTERACTION_AGENTS', `expected at least 2 agents for example:interaction, got ${agents}`, {
            where: 'agents',
            hint: 'a discussion needs someone to read: add an agent',
          });
        neighbours.forEach((nb, i) => {
          if (!nb.some((m) => m !== i))
            throw new CorlError('CORL_ERR_INTERACTION_AGENTS', `expected agent ${i} to read a neighbour other than itself, got ${nb.length ? 'only itself' : 'none'}`, {
              where: 'topology',
              hint: 'use a topology that links agents ("corl:ring", "corl:complete")',
            });
        });
      },
      credit: (scores) => outcomeCredit(options, scores),
    };
  },
});
