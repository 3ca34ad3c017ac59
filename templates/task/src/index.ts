import { registerAll } from 'corl';
import { exampleTask } from './jsonl';

export { exampleTask };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(exampleTask);
