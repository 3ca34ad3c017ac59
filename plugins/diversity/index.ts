import { registerAll } from '../../core/registry/define';
import { noDiversity } from './none';
import { rephraseDiversity } from './rephrase';

export { noDiversity, rephraseDiversity };

/** Registers the built-in diversity strategies. */
export const register = registerAll(noDiversity, rephraseDiversity);
