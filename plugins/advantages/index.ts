import { registerAll } from '../../core/registry/define';
import { drGrpoAdvantage, grpoAdvantage, rlooAdvantage } from './grpo';

export { drGrpoAdvantage, grpoAdvantage, rlooAdvantage };

/** Registers the built-in advantage estimators. */
export const register = registerAll(grpoAdvantage, drGrpoAdvantage, rlooAdvantage);
