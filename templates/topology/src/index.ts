import { registerAll } from 'corl';
import { exampleTopology } from './previous-peers';

export { exampleTopology };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(exampleTopology);
