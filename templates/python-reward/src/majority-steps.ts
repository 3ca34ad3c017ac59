import * as path from 'node:path';
import { definePythonReward } from 'corl';

/**
 * reward.py's `reward_func` as a named corl reward plugin. corl runs it in a Python process of its
 * own (the interpreter is the config's `python` option, default python3) and calls it once per
 * group of completions, as TRL calls a reward function.
 */
export const examplePythonReward = definePythonReward({
  name: 'example:python-reward',
  description: 'Majority agreement with checked steps (a TRL reward function in Python)',
  // dist/src/majority-steps.js → the package root, where reward.py sits
  module: path.join(__dirname, '..', '..', 'reward.py'),
});
