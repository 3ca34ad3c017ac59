import { defineCodes } from './spec';

export const REWARD_CODES = defineCodes({
  CORL_ERR_REWARD_TOKEN_STATS: {
    cause:
      'An intrinsic reward (corl:intrinsic, or a corl:weighted part that is one) received completions without per-token statistics, or with statistics of the wrong length or non-finite values.',
    fix: "use a policy that supports `tokenStats` (per-token entropy and mean vocabulary log-probability); the trainer asks for them because the reward's manifest declares `tokenStats`",
  },
  CORL_ERR_REWARD_OPTIONS: {
    cause:
      'A reward source was given options that its schema accepts but that cannot work (an invalid regular expression, weights that are all zero, a code task without test inputs).',
    fix: 'fix the option named in the message',
  },
  CORL_ERR_REWARD_VERIFIER: {
    cause:
      "A learned verifier (corl:learned-verifier) cannot be used: its folder, its verifier.json or the checkpoint it names is missing, malformed or corrupt, a verdict-head checkpoint's tokenizer has no single token for a verdict (Y, N), or a problem does not fit the verifier model's context.",
    fix: 'point `checkpoint` (relative to the config file) at a folder made as models/README.md ("verifiers/") says: a verifier.json written by `scripts/verifier.js fit`, or a verdict-head checkpoint written by `corl pretrain`; or use a model with a larger context',
  },
});
