import { defineCodes } from './spec';

export const POLICY_CODES = defineCodes({
  CORL_ERR_POLICY_CANNOT_TRAIN: {
    cause: 'A training run (or `corl pretrain`) uses a policy that only samples, such as a remote server backend.',
    fix: 'use a trainable policy (`corl:transformer`) for training, or `corl serve` to hand rewards to an external trainer',
  },
  CORL_ERR_POLICY_OUTPUT: {
    cause:
      'A policy returned a malformed result: the wrong number of completions, token arrays of different lengths, or non-finite log-probabilities.',
    fix: 'fix the policy plugin; `corl/testing` has a contract suite that catches this',
  },
  CORL_ERR_POLICY_CHECKPOINT: {
    cause:
      'A checkpoint is missing files, is corrupt, or was written by a model with another architecture or tokenizer.',
    fix: 'point at a complete checkpoint of the same architecture; nothing was loaded',
  },
});
