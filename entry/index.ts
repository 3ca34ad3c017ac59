/** The package's main entry (`require('corl')`): the core API, with the built-in plugins wired in. */
import { installBuiltins } from './builtins';

installBuiltins();

export * from '../core';
/** A named reward plugin backed by a Python function (the built-in corl:python with its module fixed in code). */
export {
  definePythonReward,
  type PythonRewardDefinition,
  type PythonRuntimeOptions,
} from '../plugins/rewards/python/define';
