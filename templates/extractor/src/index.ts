import { registerAll } from 'corl';
import { exampleExtractor } from './marker';

export { exampleExtractor };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(exampleExtractor);
