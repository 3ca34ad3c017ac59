// The experiment API the package's main entry re-exports: train, resume, compare, evaluate,
// pretrain and loadConfig,
// with typed results, for scripts that run corl without its command line.
export { loadConfig, isLoaded, type ConfigInput, type LoadConfigOptions } from './config';
export { train, resume, type TrainOptions, type ResumeOptions, type TrainRun } from './train';
export { compare, type CompareOptions, type ComparisonResult, type DesignOptions } from './compare';
export { evaluate, type EvaluateOptions, type EvalAgentSummary, type EvalSummary } from './evaluate';
export { pretrain, type PretrainOptions, type PretrainResult } from './pretrain';
