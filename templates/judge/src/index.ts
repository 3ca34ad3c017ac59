import { registerAll } from 'corl';
import { checkWork, exampleJudge, stepCheckScore, writtenSteps } from './step-check';

export { checkWork, exampleJudge, stepCheckScore, writtenSteps };

/** What corl calls when a config lists this package in `plugins`: registers every plugin it provides. */
export const register = registerAll(exampleJudge);
