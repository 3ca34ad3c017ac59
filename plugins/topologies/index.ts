import { registerAll } from '../../core/registry/define';
import { adjacencyTopology } from './adjacency';
import { completeTopology } from './complete';
import { ringTopology } from './ring';
import { selfTopology } from './self';

export { adjacencyTopology, completeTopology, ringTopology, selfTopology };

/** Registers the built-in topologies. */
export const register = registerAll(selfTopology, ringTopology, completeTopology, adjacencyTopology);
