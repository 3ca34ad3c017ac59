import { defineCodes } from './spec';

export const PLAN_CODES = defineCodes({
  CORL_ERR_PLAN_INVALID: {
    cause:
      'A comparison plan (`corl compare --plan`) is not valid JSON, misses a field, has one of the wrong type, or names a pair, look or boundary that cannot be run.',
    fix: 'fix each field listed (the plan format is in docs/guide/statistics.md); a plan that was committed before its runs must not be edited: write a new one',
  },
  CORL_ERR_PLAN_CONFIG_CHANGED: {
    cause:
      "A config file named by the plan no longer has the sha256 the plan recorded, or a run's config differs from it: the runs would not be the ones planned.",
    fix: 'restore the config as it was when the plan was written (git checkout <plan commit> -- <config>), or write a new plan for the new config',
  },
  CORL_ERR_PLAN_MISMATCH: {
    cause:
      'The comparison folder or the command line disagrees with the plan: other configs, another plan recorded in the folder, or flags the plan fixes (seeds, steps, pairs).',
    fix: 'run the plan alone (`corl compare --plan <plan> --out <folder>`), in a folder of its own',
  },
});
