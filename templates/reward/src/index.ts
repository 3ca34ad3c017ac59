import { registerAll } from 'corl';
import { exampleReward } from './agreement';

export { exampleReward };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(exampleReward);
