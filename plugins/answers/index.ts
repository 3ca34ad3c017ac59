import { registerAll } from '../../core/plugins/define';
import { mathEquivalence, mathExtractor } from './math';

export { mathEquivalence, mathExtractor };

/** Registers the built-in answer extractors and equivalences. */
export const register = registerAll(mathExtractor, mathEquivalence);
