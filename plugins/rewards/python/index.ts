export { pythonReward } from './plugin';
export { HOST_SCRIPT } from './process';
