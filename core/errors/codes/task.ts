import { defineCodes } from './spec';

export const TASK_CODES = defineCodes({
  CORL_ERR_TASK_DATA: {
    cause:
      'A task\'s data is unusable: a file is missing, a line is not valid JSON, a required field is absent, ids repeat, a split is empty, the config evaluates on a split the task lacks (eval.split "validation"), or the diversity strategy has no view of a training problem (a rephrasing missing from its variants). `corl validate` reports each of these, as `corl train` does before its first step.',
    fix: 'fix the file at the line given (or the task options); the message names the field',
  },
});
