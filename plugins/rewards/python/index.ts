export { definePythonReward, type PythonRewardDefinition, type PythonRuntimeOptions } from './define';
export { pythonReward } from './plugin';
export { HOST_SCRIPT } from './process';
