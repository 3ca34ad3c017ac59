import { defineCodes } from './spec';

export const ANSWERS_CODES = defineCodes({
  CORL_ERR_ANSWERS_SYMBOLIC: {
    cause:
      'The symbolic equivalence worker could not start (the compute engine failed to load, or the worker died before answering anything, three times in a row).',
    fix: 'check that @cortex-js/compute-engine is installed (`npm ls @cortex-js/compute-engine`), or set the equivalence option `symbolic: false`',
  },
  CORL_ERR_ANSWERS_INPUT: {
    cause:
      'A line given to `corl answers extract` or `corl answers equal` is not a JSON object with the expected string fields.',
    fix: 'give one JSON object per line: {"text": "..."} for extract, {"a": "...", "b": "..."} for equal; the line number is in the message',
  },
});
