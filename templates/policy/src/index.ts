import { registerAll } from 'corl';
import { examplePolicy } from './bigram';

export { examplePolicy };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(examplePolicy);
