import { registerAll } from '../../core/registry/define';
import { choiceExtractor } from './choice';
import { exactEquivalencePlugin } from './exact';
import { MathEquivalence, mathEquivalence, mathExtractor } from './math';

export { choiceExtractor, exactEquivalencePlugin, MathEquivalence, mathEquivalence, mathExtractor };

/** Registers the built-in answer extractors and equivalences. */
export const register = registerAll(mathExtractor, choiceExtractor, mathEquivalence, exactEquivalencePlugin);
