import { registerAll } from 'corl';
import { exampleDiversity } from './instructions';

export { exampleDiversity };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(exampleDiversity);
