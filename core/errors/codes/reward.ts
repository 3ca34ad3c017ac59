import { defineCodes } from './spec';

/**
 * Errors of the reward pipeline (core/reward), the same in `corl train`, `corl serve` and
 * `corl eval`: one code per kind of failure, whichever program met it.
 */
export const REWARD_CODES = defineCodes({
  CORL_ERR_REWARD_OUTPUT: {
    cause:
      'A reward source returned something its contract does not allow: `score` not `{ rewards }` with one finite number per completion (or a `label`/`ownLabel` that is not a string or null, or `metrics` that are not numbers), or `answerKeys` not one string or null per completion. `corl train` stops (what was written before stays intact); `corl serve` answers the request with HTTP 500 and keeps running.',
    fix: 'fix the reward plugin so it keeps the RewardSource contract (docs/reference/contracts.md); `corl/testing` has a contract suite for reward sources',
  },
  CORL_ERR_REWARD_FAILED: {
    cause:
      "The reward path threw an error of its own (one without a corl code; a coded error keeps its code): the reward source's `score` or `answerKeys`, or the run's extractor or equivalence while keying a group. `corl train` stops with metrics and checkpoints written before intact; `corl serve` answers the request with HTTP 500 and keeps running.",
    fix: "read the plugin's message and fix the plugin or its options; `corl train --resume DIR` then continues from the last checkpoint, and `corl serve` scores the client's retry",
  },
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
