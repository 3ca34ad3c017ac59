import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { CorlError, definePlugin, type Topology } from 'corl';

/** Options of the topology: a JSON Schema, which corl validates and defaults a config's options against before `create` runs. */
const PREVIOUS_PEERS_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    peers: { type: 'integer', minimum: 1, default: 1, description: 'supervisors per agent: 1 is the Co-RL ring, N - 1 every peer' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options type, derived from the schema (json-schema-to-ts), so the two cannot drift. */
export type PreviousPeersOptions = FromSchema<typeof PREVIOUS_PEERS_OPTIONS_SCHEMA>;

/**
 * Each agent is supervised by the `peers` agents before it in a ring, nearest first (the teacher):
 * S(n) = [n−1, n−2, …, n−peers] mod N. With `peers: 1` this is Co-RL's ring; an agent never
 * supervises itself, so a cohort needs more than `peers` agents.
 */
export const exampleTopology = definePlugin({
  manifest: {
    name: 'example:topology',
    kind: 'topology',
    description: 'Each agent is supervised by the `peers` agents before it in a ring, nearest first',
    corl: '^0.1.0',
    options: PREVIOUS_PEERS_OPTIONS_SCHEMA,
  },
  create(options: PreviousPeersOptions): Topology {
    const validate = (agents: number): void => {
      if (agents <= options.peers) {
        throw new CorlError('CORL_ERR_CONFIG_TOPOLOGY', `expected more than ${options.peers} agent(s) for example:topology with peers = ${options.peers} (an agent never supervises itself), got ${agents}`, {
          where: 'topology.options.peers',
          hint: `add agents, or lower peers to at most ${Math.max(agents - 1, 1)}`,
        });
      }
    };
    return {
      selfSupervised: false,
      validate,
      supervisors(agent, agents) {
        validate(agents);
        return Array.from({ length: options.peers }, (_, i) => (((agent - 1 - i) % agents) + agents) % agents);
      },
    };
  },
});
