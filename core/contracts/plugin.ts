import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { AdvantageEstimator } from './advantage-estimator';
import type { AnswerExtractor } from './answer-extractor';
import type { DiversityStrategy } from './diversity-strategy';
import type { Equivalence } from './equivalence';
import type { Interaction } from './interaction';
import type { Judge } from './judge';
import type { MetricsSink } from './metrics-sink';
import type { Policy } from './policy';
import type { RewardSource } from './reward-source';
import type { Task } from './task';
import type { Topology } from './topology';

/** What each plugin kind produces. */
export interface PluginKindMap {
  /** Where problems come from (`task` in a config). */
  task: Task;
  /** A model that samples and trains (`agents[].policy`, one per agent). */
  policy: Policy;
  /** Rewards for one agent's completions to one problem (`reward`). */
  reward: RewardSource;
  /** Who supervises whom (`topology`). */
  topology: Topology;
  /** Each agent's view of a problem (`diversity`). */
  diversity: DiversityStrategy;
  /** Final answer out of a completion (`extractor`). */
  extractor: AnswerExtractor;
  /** Canonical answer keys and answer equality (`equivalence`). */
  equivalence: Equivalence;
  /** Rewards to advantages (`advantage`). */
  advantage: AdvantageEstimator;
  /** An extra destination for metrics (`metrics[]`). */
  metrics: MetricsSink;
  /** Multi-round discussion between agents and the credit of each turn (`interaction`). */
  interaction: Interaction;
  /** A judge of proposals and their evaluations, nested in an interaction's options (`corl:comas`). */
  judge: Judge;
}

/** The kinds of plugin corl knows. */
export type PluginKind = keyof PluginKindMap;

/** Every plugin kind, in the order `corl list` shows them. */
export const PLUGIN_KINDS: readonly PluginKind[] = [
  'task',
  'policy',
  'reward',
  'topology',
  'diversity',
  'extractor',
  'equivalence',
  'advantage',
  'metrics',
  'interaction',
  'judge',
];

/** A JSON Schema (draft 2020-12) object. */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * A config's choice of implementation: a registered name (`"corl:ring"`), or `{use, options}`.
 * `use` may also be a module path (`./my-reward.js`), which is loaded and must register exactly one
 * plugin of the expected kind.
 */
export type PluginSelection = string | { readonly use: string; readonly options?: Readonly<Record<string, unknown>> };

/** The resolved form of a selection after validation: a name and its complete, frozen options. */
export interface ResolvedSelection {
  /** The registered plugin name (a module path in the config is resolved to the name it registered). */
  readonly use: string;
  /** The plugin's options, validated against its schema, defaults applied, frozen. */
  readonly options: Readonly<Record<string, unknown>>;
}

/** Static facts about a plugin, read before it is created. */
export interface PluginManifest<K extends PluginKind = PluginKind, O = Record<string, unknown>> {
  /** Unique name, `scope:name` (built-ins use `corl:`), e.g. `corl:ring`. */
  readonly name: string;
  /** What it provides. */
  readonly kind: K;
  /** One line for `corl list` and the docs. */
  readonly description: string;
  /** Semver range of corl versions it supports, e.g. `^0.1.0`. */
  readonly corl: string;
  /** JSON Schema of its options: an object schema with defaults and `additionalProperties: false`. */
  readonly options: JsonSchema;
  /**
   * Whether it reads ground truth (reward sources; other kinds never receive it). A function when
   * it depends on the options (e.g. a weighted sum uses ground truth if any part does). Only a
   * source that declares it gets `RewardContext.reference` and `GROUND_TRUTH`/`TASK` in its
   * container; a `labelFree` run refuses it, and a run using it is reported as supervised.
   */
  readonly usesGroundTruth?: boolean | ((options: O, ctx: ManifestQueryContext) => boolean);
  /**
   * Reward sources: whether it was made from labelled data although it reads none at run time (a
   * learned verifier trained on ground-truth verdicts). It gets no reference and no ground-truth
   * service, as any label-free source; but a `labelFree` run refuses it, and a run using it is
   * reported as supervised. A function when it depends on the options (composite sources).
   */
  readonly trainedOnLabels?: boolean | ((options: O, ctx: ManifestQueryContext) => boolean);
  /**
   * Reward sources: whether each completion's reward depends only on that completion (and the
   * reference), never on the rest of its group. `corl serve` then scores OpenRLHF samples one at a
   * time instead of collecting the K samples of a prompt first. Default false.
   */
  readonly pointwise?: boolean;
  /** Whether completions must carry per-token statistics (entropy, mean log-probability). */
  readonly tokenStats?: boolean | ((options: O, ctx: ManifestQueryContext) => boolean);
}

/** Lets a manifest query ask about nested selections (used by composite plugins). */
export interface ManifestQueryContext {
  /** Whether the selection (already resolved) uses ground truth. */
  usesGroundTruth(selection: ResolvedSelection): boolean;
  /** Whether the selection (already resolved) was trained on labels (`trainedOnLabels`). */
  trainedOnLabels(selection: ResolvedSelection): boolean;
  /** Whether the selection needs token statistics. */
  tokenStats(selection: ResolvedSelection): boolean;
}

/**
 * What a plugin's factory receives besides its options. Frozen. Everything reachable from it is
 * what the plugin's manifest entitles it to: ground truth only when a reward source declares
 * `usesGroundTruth`, never the task's data otherwise, never another agent's policy.
 */
export interface PluginContext extends ManifestQueryContext {
  /**
   * This instance's own child container: `PLUGIN_OPTIONS`, `PLUGIN_CONTEXT`, the run's label-free
   * services created before it (`ANSWER_EXTRACTOR`, `EQUIVALENCE`, `TOPOLOGY`, `DIVERSITY_STRATEGY`,
   * `ADVANTAGE_ESTIMATOR`, as facades of their contract's methods) and, for a reward source that
   * declares `usesGroundTruth`, `GROUND_TRUTH` and `TASK`. Handed as a frozen view without a
   * `parent`: resolving a token it does not hold (ground truth, the task, the registry, a policy),
   * `reset()`, or an `@inject` of such a token throws `CORL_ERR_PLUGIN_CAPABILITY`. It is disposed
   * when the run closes.
   */
  readonly container: DependencyContainer;
  /** The seed of the run, plus the agent index for per-agent plugins. */
  readonly seed: number;
  /** The agent index for per-agent plugins (policies), undefined for run-wide ones. */
  readonly agent?: number;
  /** Folder that relative paths in options are resolved against (the config file's folder). */
  readonly baseDir: string;
  /**
   * Create a nested plugin from an already validated selection (for composite plugins), in its own
   * container. A plugin that does not declare `usesGroundTruth` cannot create a task or a reward
   * source that does (`CORL_ERR_PLUGIN_CAPABILITY`). The creator closes what it creates.
   */
  create<K extends PluginKind>(kind: K, selection: ResolvedSelection): Promise<PluginKindMap[K]>;
}

/**
 * A plugin: its manifest and the factory that builds an instance from validated options. `O` is its
 * options type; the default `never` stands for a plugin of any options (every definition is
 * assignable to it), whose `create` takes only options validated against its own schema.
 */
export interface PluginDefinition<K extends PluginKind = PluginKind, O = never> {
  /** Static facts: name, kind, options schema, corl range, ground-truth and token-statistics needs. */
  readonly manifest: PluginManifest<K, O>;
  /** Build an instance. Options are complete (defaults applied) and frozen. */
  create(options: O, ctx: PluginContext): PluginKindMap[K] | Promise<PluginKindMap[K]>;
}

/**
 * What every plugin module exports: `register(container)` adds its plugins to the registry found in
 * the container. Nothing is registered by importing a module.
 */
export interface PluginModule {
  /** Add the module's plugins to the registry of `container` (use `registerAll(...)`); may be async when listed in `plugins`. */
  register(container: DependencyContainer): void | Promise<void>;
}

/** Injection token of the instance's options (validated, defaulted, frozen), in every plugin's own container. */
export const PLUGIN_OPTIONS: InjectionToken<Readonly<Record<string, unknown>>> = 'corl.PluginOptions';
/** Injection token of the instance's {@link PluginContext}, in every plugin's own container. */
export const PLUGIN_CONTEXT: InjectionToken<PluginContext> = 'corl.PluginContext';
