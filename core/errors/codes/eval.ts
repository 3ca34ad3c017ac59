import { defineCodes } from './spec';

export const EVAL_CODES = defineCodes({
  CORL_ERR_EVAL_INPUT: {
    cause:
      'An evaluation output given to `corl agreement` is unusable: the file is missing or empty, a line is not JSON, or a row lacks `id`, `correct`, `keys`, `majority` or `majCorrect`.',
    fix: 'pass per-agent files written by `corl eval --out <dir>` (one row per problem); the message names the file and line',
  },
  CORL_ERR_EVAL_MISMATCH: {
    cause:
      'The two evaluation outputs given to `corl agreement` do not answer the same problems: an id is in one file only, or repeats within a file.',
    fix: "evaluate both models on the same data (same file, same --limit), pass one agent's file each, or add --intersect to compare the shared problems only",
  },
});
