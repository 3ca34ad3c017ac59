import { defineCodes } from './spec';

export const TASK_CODES = defineCodes({
  CORL_ERR_TASK_DATA: {
    cause:
      "A task's data is unusable: a file is missing, a line is not valid JSON, a required field is absent, ids repeat, or a split is empty.",
    fix: 'fix the file at the line given (or the task options); the message names the field',
  },
});
