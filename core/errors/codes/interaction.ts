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
});
