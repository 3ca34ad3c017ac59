import { registerAll } from '../../core/plugins/define';
import { arithTask } from './arith';
import { inlineTask } from './inline';

export { arithTask, inlineTask };

/** Registers the built-in tasks. */
export const register = registerAll(arithTask, inlineTask);
