import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { definePlugin } from '../../core/registry/define';
import type { Topology } from '../../core/contracts/topology';
import { CorlError } from '../../core/errors';

const RING_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    direction: {
      enum: ['backward', 'forward'],
      default: 'backward',
      description: 'backward: n is supervised by n-1 (the paper); forward: by n+1',
    },
    order: {
      type: 'array',
      items: { type: 'integer', minimum: 0 },
      default: [],
      description: 'cyclic order of agents; empty means 0..N-1',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type RingOptions = FromSchema<typeof RING_OPTIONS_SCHEMA>;

/**
 * Co-RL's ring. With the released code's three-agent peer lists (A: B, C; B: C, A; C: A, B)
 * rewarded against the first peer, supervision runs round a ring; this plugin exposes exactly that
 * teacher as the only supervisor, so an agent never contributes to its own target.
 */
export const ringTopology = definePlugin({
  manifest: {
    name: 'corl:ring',
    kind: 'topology',
    description: 'Co-RL ring: agent n is rewarded against the majority answer of its predecessor, S(n) = {n-1 mod N}',
    corl: '^0.1.0',
    options: RING_OPTIONS_SCHEMA,
  },
  create(options: RingOptions): Topology {
    const validate = (agents: number): void => {
      if (agents < 2) {
        throw new CorlError(
          'CORL_ERR_CONFIG_TOPOLOGY',
          `expected at least 2 agents for corl:ring (an agent must never supervise itself), got ${agents}`,
          {
            where: 'topology',
            hint: 'add a second agent to `agents`, or use "corl:self" (TTRL) for a single agent',
          },
        );
      }
      if (options.order.length > 0) {
        const sorted = [...options.order].sort((a, b) => a - b);
        if (sorted.length !== agents || sorted.some((v, i) => v !== i)) {
          throw new CorlError(
            'CORL_ERR_CONFIG_TOPOLOGY',
            `expected topology.options.order to be a permutation of 0..${agents - 1}, got [${options.order.join(', ')}]`,
            {
              where: 'topology.options.order',
            },
          );
        }
      }
    };
    return {
      selfSupervised: false,
      validate,
      supervisors(agent, agents) {
        validate(agents);
        const order = options.order.length ? options.order : [...Array(agents).keys()];
        const pos = order.indexOf(agent);
        const step = options.direction === 'backward' ? -1 : 1;
        return [order[(pos + step + agents) % agents]!];
      },
    };
  },
});
