import { registerAll } from '../../core/plugins/define';
import { transformerPolicy } from './transformer';

/** Registers the built-in policies. */
export const register = registerAll(transformerPolicy);
