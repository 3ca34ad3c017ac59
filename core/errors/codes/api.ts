import { defineCodes } from './spec';

export const API_CODES = defineCodes({
  CORL_ERR_API_OPTIONS: {
    cause:
      "A function of corl's public API (`train`, `resume`, `compare`, `evaluate`, `pretrain`, `loadConfig`) was called with an argument or option of the wrong type or value, or with options that contradict each other.",
    fix: "pass what the function's type declares (docs/reference/api.md); the error names the argument or option",
  },
});
