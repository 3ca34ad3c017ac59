import { defineCodes } from './spec';

export const GRPO_CODES = defineCodes({
  CORL_ERR_GRPO_NONFINITE: {
    cause:
      'A reward, advantage or log-probability given to the GRPO math is NaN or infinite. corl never propagates such values silently.',
    fix: 'find the plugin that produced it (the message names the sequence and token); rewards must be finite numbers',
  },
  CORL_ERR_GRPO_SHAPE: {
    cause:
      'Arrays given to the GRPO math do not line up (log-probabilities of different lengths, advantages not one per sequence).',
    fix: 'pass one advantage per sequence and equally long per-token arrays',
  },
});
