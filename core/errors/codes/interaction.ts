import { defineCodes } from './spec';

export const INTERACTION_CODES = defineCodes({
  CORL_ERR_INTERACTION_AGENTS: {
    cause:
      'The interaction protocol cannot run with this cohort: too few agents, or an agent whose topology gives it no neighbour to read.',
    fix: 'add agents (a debate needs at least 2) or choose a topology that gives every agent a neighbour ("corl:complete", "corl:ring")',
  },
  CORL_ERR_INTERACTION_CONTEXT: {
    cause:
      "A discussion round's prompt cannot fit the policy's context: even with every neighbour's turn shortened to its answer, prompt plus maxTokens exceed the window.",
    fix: 'lower trainer.sampling.maxTokens (or eval.sampling.maxTokens), use fewer neighbours (another topology), or a policy with a longer context',
  },
  CORL_ERR_INTERACTION_OUTPUT: {
    cause: "An interaction's credit returned rewards of the wrong shape or a non-finite reward.",
    fix: 'return rewards[round][agent][debate] with the shape of the scores it was given, every value finite',
  },
  CORL_ERR_JUDGE_OPTIONS: {
    cause:
      "A judge's options contradict each other or a field corl sets (e.g. corl:openai-judge's extraBody naming model or messages).",
    fix: 'set that field through its own option and remove it from extraBody',
  },
  CORL_ERR_JUDGE_OUTPUT: {
    cause:
      'A judge returned a number of scores other than the number of items it was given, a score outside 1..3, or counts of calls and samples that are not whole numbers.',
    fix: 'return one score per item, each in [1, 3] or null (no verdict), and whole, non-negative calls and samples',
  },
});
