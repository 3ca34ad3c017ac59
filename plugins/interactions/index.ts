import { registerAll } from '../../core/registry/define';
import { debateInteraction, debateCredit, type DebateOptions } from './debate';

export { debateInteraction, debateCredit, type DebateOptions };

/** Registers the built-in interaction protocols. */
export const register = registerAll(debateInteraction);
