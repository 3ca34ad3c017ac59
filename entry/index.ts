/**
 * The package's main entry (`import … from 'corl'`): what plugin authors and experiment scripts use.
 * Defining plugins (`definePlugin`, `registerAll`, the contracts they implement, the tokens they may
 * be injected, `CorlError`, seeded randomness, the plurality vote and answer matching, GRPO's math
 * for policies, `RunAppendFile` for metrics sinks), and running
 * experiments from code (`loadConfig`, `train`, `resume`, `compare`, `evaluate`, `pretrain`, with
 * typed results).
 *
 * Importing it changes nothing outside its own modules: no global, no container registration, not
 * even tsyringe is loaded. The built-in plugins are wired into corl's own container (never
 * tsyringe's root) when one of those first runs. The engine's
 * internals are subpaths: `corl/engine` (registry, run containers, atomic files, the error catalog),
 * `corl/tensor` (the tensor IR); the contract suites are `corl/testing`. docs/reference/api.md lists
 * every exported name with its type, and a test fails when it changes unplanned.
 */
import * as api from '../core/api';
import type {
  CompareOptions,
  ComparisonResult,
  ConfigInput,
  EvalSummary,
  EvaluateOptions,
  LoadConfigOptions,
  PretrainOptions,
  PretrainResult,
  ResumeOptions,
  TrainOptions,
  TrainRun,
} from '../core/api';
import type { LoadedConfig } from '../core/config/load';
import { installBuiltins } from './builtins';

// Plugins: definitions and the contracts they implement.
export { definePlugin, fromClass, registerAll, type RegisterFunction } from '../core/registry/define';
export {
  PLUGIN_CONTEXT,
  PLUGIN_KINDS,
  PLUGIN_OPTIONS,
  type InjectedDependencies,
  type JsonSchema,
  type ManifestAnswer,
  type ManifestCommon,
  type ManifestFields,
  type ManifestOf,
  type ManifestQueryContext,
  type NoManifestFields,
  type PluginContext,
  type PluginDefinition,
  type PluginDependencies,
  type PluginKind,
  type PluginKindMap,
  type PluginManifest,
  type PluginModule,
  type PluginRegistrar,
  type PluginSelection,
  type PolicyManifestFields,
  type ResolvedSelection,
  type RewardManifestFields,
  type SamplingLoad,
  type TrustManifestFields,
} from '../core/contracts/plugin';
// The tokens a plugin may declare in `inject` (or `@inject`): the run resolves them for it.
export {
  GROUND_TRUTH,
  MapGroundTruth,
  type GroundTruth,
  type Problem,
  type Reference,
} from '../core/contracts/problem';
export type { Completion, FinishReason } from '../core/contracts/completion';
export { TASK, type NeighbourTurn, type Task, type TaskData } from '../core/contracts/task';
export { ANSWER_EXTRACTOR } from '../core/contracts/answer-extractor';
export { EQUIVALENCE } from '../core/contracts/equivalence';
export { TOPOLOGY } from '../core/contracts/topology';
export { DIVERSITY_STRATEGY } from '../core/contracts/diversity-strategy';
export { ADVANTAGE_ESTIMATOR } from '../core/contracts/advantage-estimator';
export type {
  ContextWindow,
  LossOptions,
  LossType,
  Policy,
  PolicyDescription,
  PretrainBatch,
  SampleRequest,
  SamplingOptions,
  TrainingSample,
  UpdateBatch,
  UpdateResult,
} from '../core/contracts/policy';
export type { AnswerExtractor } from '../core/contracts/answer-extractor';
export type { Equivalence } from '../core/contracts/equivalence';
export type { Topology } from '../core/contracts/topology';
export type {
  AgentAnswers,
  AnswerKeyInput,
  CompletionView,
  RewardContext,
  RewardResult,
  RewardSource,
} from '../core/contracts/reward-source';
export type { AgentView, DiversityStrategy } from '../core/contracts/diversity-strategy';
export type { AdvantageEstimator } from '../core/contracts/advantage-estimator';
export type { MetricsRecord, MetricsRun, MetricsSink } from '../core/contracts/metrics-sink';
export type {
  DebateScores,
  DiscussionRecord,
  DiscussionTurnText,
  Interaction,
  InteractionShare,
  InteractionTurn,
  Judgement,
  TurnRef,
} from '../core/contracts/interaction';
export type {
  Judge,
  JudgedTurn,
  JudgeItem,
  JudgeRequest,
  JudgeResult,
  JudgeSample,
  JudgeTools,
} from '../core/contracts/judge';

// What a plugin's code uses.
export { CorlError, isCorlError, type CorlErrorDetails } from '../core/errors/error';
export type { ErrorCode } from '../core/errors/codes';
export { Rng, mixSeed } from '../core/util/rng';
export { pluralityVote, type VoteCluster, type VoteOutcome } from '../core/voting/plurality';
export { matches, matchesAtOnce } from '../core/voting/match';
export * as grpo from '../core/grpo';
export { RunAppendFile, type AppendRun } from '../core/util/run-append';
/** Atomic writes (temporary file, fsync, rename): what a policy's `save` writes its checkpoint with. */
export { writeFileAtomic, writeJsonAtomic } from '../core/util/fs';
export { CORL_VERSION } from '../core/version';
/** A named reward plugin backed by a Python function (the built-in corl:python with its module fixed in code). */
export {
  definePythonReward,
  type PythonRewardDefinition,
  type PythonRuntimeOptions,
} from '../plugins/rewards/python/define';

// Experiments from code.
export type { CorlConfig } from '../core/config/types';
export type { LoadedConfig } from '../core/config/load';
export type { AgentOutcome, TrainResult } from '../core/trainer/trainer';
export type { ResultRow } from '../core/report/html';
export type { PairResult, PrimaryMetric } from '../core/report/paired';
export type { Interval, Outcome } from '../core/stats/paired';
export type {
  CompareOptions,
  ComparisonResult,
  ConfigInput,
  DesignOptions,
  EvalAgentSummary,
  EvalSummary,
  EvaluateOptions,
  LoadConfigOptions,
  PretrainOptions,
  PretrainResult,
  ResumeOptions,
  TrainOptions,
  TrainRun,
} from '../core/api';
export type { AgentScores } from '../core/trainer/evaluate';

/**
 * Load a config: read and parse a file (JSON with comments) or copy a config object, apply
 * `overrides`, validate it against the schema and every plugin's options (one
 * CORL_ERR_CONFIG_INVALID listing every problem, with line and column for a file), apply defaults
 * and freeze it, as `corl validate` and `corl train` do.
 */
export function loadConfig(config: ConfigInput, options?: LoadConfigOptions): Promise<LoadedConfig> {
  installBuiltins();
  return api.loadConfig(config, options);
}

/**
 * Train a cohort on a config exactly as `corl train` does (the same run directory, metrics,
 * checkpoints and report); resolves with each agent's held-out pass@1 before and after and every
 * metrics record. `signal` stops it after the current step, resumable with {@link resume}.
 */
export function train(config: ConfigInput, options?: TrainOptions): Promise<TrainRun> {
  installBuiltins();
  return api.train(config, options);
}

/** Continue a run from its last checkpoint (with `steps`: up to that many), as `corl train --resume` does. */
export function resume(runDir: string, options?: ResumeOptions): Promise<TrainRun> {
  installBuiltins();
  return api.resume(runDir, options);
}

/**
 * Run config files over seeds and decide between them exactly as `corl compare` does (the same
 * folder, runs, table, paired verdicts and report); resolves with the rows and the pairs. Calling it
 * again with the same `out` continues an interrupted comparison.
 */
export function compare(configs: readonly string[], options?: CompareOptions): Promise<ComparisonResult> {
  installBuiltins();
  return api.compare(configs, options);
}

/**
 * Evaluate a config's policies on its held-out split or a benchmark file (`data`) exactly as
 * `corl eval` does: pass@1 and maj@K per agent, budget-fair ensembles, the agreement of every pair,
 * and with `out` the per-problem rows and summary.json.
 */
export function evaluate(config: ConfigInput, options?: EvaluateOptions): Promise<EvalSummary> {
  installBuiltins();
  return api.evaluate(config, options);
}

/**
 * Pretrain a config's policies on its task's worked solutions exactly as `corl pretrain` does,
 * saving a checkpoint per agent in `out` that a config then starts from.
 */
export function pretrain(config: ConfigInput, options: PretrainOptions): Promise<PretrainResult[]> {
  installBuiltins();
  return api.pretrain(config, options);
}
