import { registerAll } from '../../core/registry/define';
import {
  comasCredit,
  comasInteraction,
  comasItems,
  comasJudgement,
  comasReads,
  evaluatedBy,
  evaluatorOf,
  type ComasOptions,
} from './comas';
import { debateInteraction, debateCredit, type DebateOptions } from './debate';

export { debateInteraction, debateCredit, type DebateOptions };
export {
  comasCredit,
  comasInteraction,
  comasItems,
  comasJudgement,
  comasReads,
  evaluatedBy,
  evaluatorOf,
  type ComasOptions,
};

/** Registers the built-in interaction protocols. */
export const register = registerAll(debateInteraction, comasInteraction);
