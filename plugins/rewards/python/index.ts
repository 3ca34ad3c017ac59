export { definePythonReward, pythonReward, type PythonRewardDefinition } from './plugin';
export { HOST_SCRIPT } from './process';
