import type { InjectionToken } from 'tsyringe';
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

/** What every plugin's manifest declares, whatever its kind. */
export interface ManifestCommon<K extends PluginKind = PluginKind> {
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
}

/**
 * A manifest question whose answer may depend on the options: a boolean, or a function of the
 * (validated, defaulted) options. Read once, when the plugin is registered; a function is asked
 * once per options, and must answer a boolean.
 */
export type ManifestAnswer<O> = boolean | ((options: O, ctx: ManifestQueryContext) => boolean);

/** What a reward source's manifest declares beside the common fields: what it reads and needs. */
export interface RewardManifestFields<O> {
  /**
   * Whether it reads ground truth. A function when it depends on the options (e.g. a weighted sum
   * reads ground truth if any part does). Only a source that declares it gets
   * `RewardContext.reference` and may be injected `GROUND_TRUTH`/`TASK`; a `labelFree` run refuses
   * it, and a run using it is reported as supervised.
   */
  readonly readsGroundTruth?: ManifestAnswer<O>;
  /**
   * The former name of `readsGroundTruth`, accepted for one release (removed in corl 0.2): the registry reads it as
   * `readsGroundTruth` (its frozen copy holds only that) and warns once per plugin name, a
   * `DeprecationWarning` with code `CORL_DEP_USES_GROUND_TRUTH`. A manifest that declares both is
   * `CORL_ERR_PLUGIN_INVALID`.
   * @deprecated declare `readsGroundTruth`.
   */
  readonly usesGroundTruth?: ManifestAnswer<O>;
  /**
   * Whether it was made from labelled data although it reads none at run time (a learned verifier
   * trained on ground-truth verdicts). It gets no reference and no ground-truth service, as any
   * label-free source; but a `labelFree` run refuses it, and a run using it is reported as
   * supervised. A function when it depends on the options (composite sources).
   */
  readonly trainedOnLabels?: ManifestAnswer<O>;
  /**
   * Whether each completion's reward depends only on that completion (and the reference), never on
   * the rest of its group. `corl serve` then scores OpenRLHF samples one at a time instead of
   * collecting the K samples of a prompt first. Default false.
   */
  readonly pointwise?: boolean;
  /** Whether completions must carry per-token statistics (entropy, mean log-probability). */
  readonly tokenStats?: ManifestAnswer<O>;
}

/** What a policy's manifest declares beside the common fields. */
export interface PolicyManifestFields<O> {
  /**
   * A lower bound of the bytes it holds outside the JavaScript heap to sample `rows` sequences of
   * up to `maxTokens` new tokens in one call (its caches). Config checks add it to the trainer's own
   * needs and refuse (`CORL_ERR_CONFIG_MEMORY`) a step or an evaluation that cannot fit the
   * machine's memory. Absent: nothing beyond the heap.
   */
  readonly memory?: (options: O, load: SamplingLoad) => number;
}

/** What the manifest of an equivalence or a metrics sink declares beside the common fields. */
export interface TrustManifestFields {
  /**
   * Whether the run may trust it with references or what is measured against them: its author
   * states that it keeps them to itself, as corl's built-ins do (corl cannot check it). Equivalences:
   * it may grade answers against references (`grading`, monitoring, evaluation, a reward source that
   * reads ground truth); one that does not declare it is label-free and never sees a reference.
   * Metrics sinks: it gets evaluation records and the training metrics measured against references
   * (`label/accuracy`, ...); one that does not gets neither. Built-ins are trusted without it.
   */
  readonly readsReferences?: boolean;
}

/** No fields beside the common ones: the manifest of a kind that never sees labels nor declares needs. */
export type NoManifestFields = Record<never, never>;

/**
 * The fields each kind's manifest declares beside {@link ManifestCommon}: reward sources what they
 * read (ground truth, labels) and need (pointwise, token statistics), policies their memory,
 * equivalences and metrics sinks whether they are trusted with references; the other kinds none.
 * A field of another kind is a compile error in a manifest written in TypeScript, and
 * `CORL_ERR_PLUGIN_INVALID` naming the field when a plugin is registered.
 */
export interface ManifestFields<O> {
  /** A task declares nothing more. */
  task: NoManifestFields;
  /** A policy may declare `memory`. */
  policy: PolicyManifestFields<O>;
  /** A reward source declares what it reads and needs. */
  reward: RewardManifestFields<O>;
  /** A topology declares nothing more. */
  topology: NoManifestFields;
  /** A diversity strategy declares nothing more. */
  diversity: NoManifestFields;
  /** An extractor declares nothing more. */
  extractor: NoManifestFields;
  /** An equivalence may declare `readsReferences`. */
  equivalence: TrustManifestFields;
  /** An advantage estimator declares nothing more. */
  advantage: NoManifestFields;
  /** A metrics sink may declare `readsReferences`. */
  metrics: TrustManifestFields;
  /** An interaction declares nothing more. */
  interaction: NoManifestFields;
  /** A judge declares nothing more. */
  judge: NoManifestFields;
}

/** The manifest of one kind: the common fields and that kind's own ({@link ManifestFields}). */
export type ManifestOf<K extends PluginKind, O = Record<string, unknown>> = ManifestCommon<K> & ManifestFields<O>[K];

/**
 * Static facts about a plugin, read before it is created: the common fields and those of its kind.
 * For one kind it is {@link ManifestOf} that kind; for several (the default, every kind) it is the
 * union of their manifests, told apart by `kind`.
 */
export type PluginManifest<K extends PluginKind = PluginKind, O = Record<string, unknown>> = K extends PluginKind
  ? ManifestOf<K, O>
  : never;

/** The manifest fields each kind declares beside the common ones, as the registry checks them. */
export const MANIFEST_FIELDS = {
  task: [],
  policy: ['memory'],
  reward: ['readsGroundTruth', 'usesGroundTruth', 'trainedOnLabels', 'pointwise', 'tokenStats'],
  topology: [],
  diversity: [],
  extractor: [],
  equivalence: ['readsReferences'],
  advantage: [],
  metrics: ['readsReferences'],
  interaction: [],
  judge: [],
} as const satisfies { readonly [K in PluginKind]: readonly (keyof ManifestFields<unknown>[K])[] };

/** One sampling call's size, as {@link PolicyManifestFields.memory} is asked about it. */
export interface SamplingLoad {
  /** Sequences sampled at once (prompts × samples per prompt). */
  readonly rows: number;
  /** New tokens per sequence, at most. */
  readonly maxTokens: number;
}

/** Lets a manifest query ask about nested selections (used by composite plugins). */
export interface ManifestQueryContext {
  /** Whether the selection (already resolved) reads ground truth. */
  readsGroundTruth(selection: ResolvedSelection): boolean;
  /**
   * The same question under its former name, kept for one release (removed in corl 0.2).
   * @deprecated ask `readsGroundTruth`.
   */
  usesGroundTruth(selection: ResolvedSelection): boolean;
  /** Whether the selection (already resolved) was trained on labels (`trainedOnLabels`). */
  trainedOnLabels(selection: ResolvedSelection): boolean;
  /** Whether the selection needs token statistics. */
  tokenStats(selection: ResolvedSelection): boolean;
}

/**
 * What a plugin's factory receives besides its options and its declared dependencies. Frozen, and
 * nothing reachable from it leads to a label, a container or the registry: no container is ever
 * handed to a plugin (its dependencies are resolved for it, see {@link PluginDefinition.inject}).
 */
export interface PluginContext extends ManifestQueryContext {
  /** The seed of the run, plus the agent index for per-agent plugins. */
  readonly seed: number;
  /** The agent index for per-agent plugins (policies), undefined for run-wide ones. */
  readonly agent?: number;
  /** Folder that relative paths in options are resolved against (the config file's folder). */
  readonly baseDir: string;
  /**
   * Create a nested plugin from an already validated selection (for composite plugins), exactly as
   * the run creates its own: its dependencies resolved for it by the run. A plugin that does not
   * declare `readsGroundTruth` cannot create a task or a reward source that does
   * (`CORL_ERR_PLUGIN_CAPABILITY`). The creator closes what it creates.
   */
  create<K extends PluginKind>(kind: K, selection: ResolvedSelection): Promise<PluginKindMap[K]>;
}

/**
 * The dependencies a plugin declares, by the name its factory reads them under: each value is an
 * injection token the run resolves before calling `create` (`EQUIVALENCE`, `ANSWER_EXTRACTOR`,
 * `TOPOLOGY`, `DIVERSITY_STRATEGY`, `ADVANTAGE_ESTIMATOR`, `PLUGIN_OPTIONS`, `PLUGIN_CONTEXT`; and
 * `GROUND_TRUTH`, `TASK` for a reward source that declares `readsGroundTruth`). A token the plugin
 * is not entitled to, or that the run has not created yet, is `CORL_ERR_PLUGIN_CAPABILITY`.
 */
export type PluginDependencies = { readonly [name: string]: InjectionToken<unknown> };

/** What `inject` declares, resolved: the same names, each with its service. Frozen. */
export type InjectedDependencies = Readonly<Record<string, unknown>>;

/**
 * A plugin: its manifest and the factory that builds an instance from validated options. `O` is its
 * options type; the default `never` stands for a plugin of any options (every definition is
 * assignable to it), whose `create` takes only options validated against its own schema.
 *
 * Dependencies are injected, never looked up: a factory declares them in `inject` and receives them
 * resolved as its third argument (factory injection); an `@injectable()` class made a factory with
 * `fromClass` receives them through its constructor's `@inject(TOKEN)` parameters (constructor
 * injection). The registry keeps a frozen copy of the definition, read once when it is added.
 */
export interface PluginDefinition<K extends PluginKind = PluginKind, O = never> {
  /** Static facts: name, kind, options schema, corl range, ground-truth and token-statistics needs. */
  readonly manifest: PluginManifest<K, O>;
  /** The dependencies `create` receives as its third argument, each resolved by the run. */
  readonly inject?: PluginDependencies;
  /**
   * Build an instance. Options are complete (defaults applied) and frozen; `deps` holds what `inject`
   * declares, resolved and frozen (the run always passes it; it is optional only for direct calls in tests).
   */
  create(options: O, ctx: PluginContext, deps?: InjectedDependencies): PluginKindMap[K] | Promise<PluginKindMap[K]>;
}

/**
 * What a plugin module's `register` is handed: it can only add plugin definitions, and only while
 * `register` runs. Frozen; nothing reachable from it leads to the registry or a container.
 */
export interface PluginRegistrar {
  /** Add plugin definitions (a malformed one, a duplicate name or the reserved `corl:` scope is a coded error). */
  add(...definitions: PluginDefinition[]): void;
}

/**
 * What every plugin module exports: `register(plugins)` adds its plugins through the API it is
 * handed (`plugins.add(...)`, or `export const register = registerAll(a, b)`). Nothing is
 * registered by importing a module.
 */
export interface PluginModule {
  /** Add the module's plugins; may be async when the module is listed in `plugins`. */
  register(plugins: PluginRegistrar): void | Promise<void>;
}

/** Injection token of the instance's options (validated, defaulted, frozen), for constructor injection. */
export const PLUGIN_OPTIONS: InjectionToken<Readonly<Record<string, unknown>>> = 'corl.PluginOptions';
/** Injection token of the instance's {@link PluginContext}, for constructor injection. */
export const PLUGIN_CONTEXT: InjectionToken<PluginContext> = 'corl.PluginContext';
