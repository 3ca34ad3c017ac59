import { definePlugin } from '../../core/registry/define';
import type { Topology } from '../../core/contracts/topology';

/** TTRL: every agent is supervised by its own majority vote, S(n) = {n}. */
export const selfTopology = definePlugin({
  manifest: {
    name: 'corl:self',
    kind: 'topology',
    description: 'TTRL self-voting: each agent is rewarded against its own majority answer, S(n) = {n}',
    corl: '^0.1.0',
    options: { type: 'object', properties: {}, additionalProperties: false },
  },
  create(): Topology {
    return {
      selfSupervised: true,
      supervisors: (agent) => [agent],
      validate: () => undefined,
    };
  },
});
