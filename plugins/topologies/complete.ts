import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { definePlugin } from '../../core/registry/define';
import type { Topology } from '../../core/contracts/topology';
import { CorlError } from '../../core/errors';

const COMPLETE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    self: {
      type: 'boolean',
      default: false,
      description: 'include the agent itself (self + peers); false: peers only',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type CompleteOptions = FromSchema<typeof COMPLETE_OPTIONS_SCHEMA>;

/**
 * Everyone supervises everyone: S(n) = {m ≠ n} (union of peers), or every agent with `self`
 * (self + peers). Peers are listed from the predecessor backwards, n−1, n−2, ... (the released code's
 * teacher-first order), so `rule: "teacher"` of corl:vote gives the ring. With corl:vote's `pool`
 * rule this is the pooled vote, with `majority` the strict majority over peers' labels.
 */
export const completeTopology = definePlugin({
  manifest: {
    name: 'corl:complete',
    kind: 'topology',
    description:
      'Every agent is supervised by all the others (union of peers), or by all agents itself included (self + peers)',
    corl: '^0.1.0',
    options: COMPLETE_OPTIONS_SCHEMA,
  },
  create(options: CompleteOptions): Topology {
    const validate = (agents: number): void => {
      if (!Number.isInteger(agents) || agents < (options.self ? 1 : 2)) {
        throw new CorlError(
          'CORL_ERR_CONFIG_TOPOLOGY',
          `expected at least ${options.self ? 1 : 2} agents for corl:complete${options.self ? '' : ' without self'}, got ${agents}`,
          {
            where: 'topology',
            hint: options.self ? 'add an agent' : 'add a second agent, or set topology.options.self to true',
          },
        );
      }
    };
    return {
      selfSupervised: options.self,
      validate,
      supervisors(agent, agents) {
        validate(agents);
        const peers: number[] = [];
        for (let d = 1; d < agents; d++) peers.push((agent - d + agents) % agents);
        return options.self ? [agent, ...peers] : peers;
      },
    };
  },
});
