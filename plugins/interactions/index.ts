import { registerAll } from '../../core/registry/define';
import { comasInteraction } from './comas';
import { debateInteraction } from './debate';

export { debateInteraction, debateCredit, type DebateOptions } from './debate';
export {
  comasCredit,
  comasInteraction,
  comasItems,
  comasJudgement,
  comasReads,
  evaluatedBy,
  evaluatorOf,
  type ComasOptions,
} from './comas';

/** Registers the built-in interaction protocols. */
export const register = registerAll(debateInteraction, comasInteraction);
