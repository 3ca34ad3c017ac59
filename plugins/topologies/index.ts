import { registerAll } from '../../core/plugins/define';
import { ringTopology } from './ring';
import { selfTopology } from './self';

export { ringTopology, selfTopology };

/** Registers the built-in topologies. */
export const register = registerAll(selfTopology, ringTopology);
