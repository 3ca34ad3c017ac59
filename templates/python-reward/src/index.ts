import { registerAll } from 'corl';
import { examplePythonReward } from './majority-steps';

export { examplePythonReward };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(examplePythonReward);
