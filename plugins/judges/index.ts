import { registerAll } from '../../core/registry/define';
import { judgePrompt, OpenAIJudge, openaiJudge, parseScore, type OpenAIJudgeOptions } from './openai-judge';
import { policyJudge, policyVerdict, type PolicyJudgeOptions } from './policy-judge';

export { judgePrompt, OpenAIJudge, openaiJudge, parseScore, type OpenAIJudgeOptions };
export { policyJudge, policyVerdict, type PolicyJudgeOptions };

/** Registers the built-in judges (nested in `corl:comas`'s options). */
export const register = registerAll(policyJudge, openaiJudge);
