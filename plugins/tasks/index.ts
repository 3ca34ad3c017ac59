import { registerAll } from '../../core/registry/define';
import { arithTask } from './arith';
import { inlineTask } from './inline';
import { jsonlTask } from './jsonl';

export { arithTask, inlineTask, jsonlTask };

/** Registers the built-in tasks. */
export const register = registerAll(arithTask, inlineTask, jsonlTask);
