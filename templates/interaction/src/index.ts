import { registerAll } from 'corl';
import { exampleInteraction, outcomeCredit } from './outcome-credit';

export { exampleInteraction, outcomeCredit };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(exampleInteraction);
