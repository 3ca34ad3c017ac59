import { registerAll } from '../../core/plugins/define';
import { inlineTask } from './inline';

export { inlineTask };

/** Registers the built-in tasks. */
export const register = registerAll(inlineTask);
