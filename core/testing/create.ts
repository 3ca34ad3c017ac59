import type { PluginDefinition, PluginKind, PluginKindMap, PluginRegistrar } from '../contracts/plugin';
import type { GroundTruth } from '../contracts/problem';
import type { Task } from '../contracts/task';
import { ConfigValidator, type ConfigIssue } from '../config/validator';
import { CorlError } from '../errors';
import { createRunContainer, registrar } from '../registry/container';
import { instantiate, type InstanceScope } from '../registry/instantiate';
import type { RunServices } from '../registry/scope';
import { registryOf, type PluginRegistry } from '../registry/registry';
import { deepFreeze } from '../contracts/frozen';

/** Where and how a plugin is created outside a config (tests, the contract suites). */
export interface CreateOptions {
  /** The seed handed to the factory (`PluginContext.seed`). Default 0. */
  readonly seed?: number;
  /** The agent index (`PluginContext.agent`), for per-agent plugins such as policies. */
  readonly agent?: number;
  /** Folder relative paths in options are resolved against. Default: the current folder. */
  readonly baseDir?: string;
  /** The plugin module's `register(plugins)`, run first so that plugins it builds on are registered. */
  readonly register?: (plugins: PluginRegistrar) => void | Promise<void>;
  /**
   * The run's label-free services the plugin may be injected (`EQUIVALENCE`, `ANSWER_EXTRACTOR`,
   * `TOPOLOGY`, `DIVERSITY_STRATEGY`, `ADVANTAGE_ESTIMATOR`), handed as a run hands them: as facades
   * of their contract's methods, to whatever the plugin's `inject` or constructor declares.
   */
  readonly services?: LabelFreeServices;
  /**
   * The references a run would hold. Handed as in a run: injected (with `task`) as `GROUND_TRUTH`
   * only into a reward source that declares `readsGroundTruth`; withheld from any other.
   */
  readonly groundTruth?: GroundTruth;
  /** The task a run would hold (`TASK`), on the same terms as `groundTruth`. */
  readonly task?: Task;
  /**
   * Called with each `CORL_ERR_PLUGIN_CAPABILITY` refusal the instance (or one it creates) meets,
   * even one it catches and swallows; the contract suites fail a label-free plugin on any.
   */
  readonly onRefusal?: (refusal: CorlError) => void;
  /** Told what the instance (and each one it creates) is handed: its context and injected dependencies, for leak checks. */
  readonly onHanded?: InstanceScope['onHanded'];
  /** Create from this registry instead of a fresh one holding every built-in. */
  readonly registry?: PluginRegistry;
}

/** The services a run creates before other plugins and may inject into them: none of them leads to a label. */
export type LabelFreeServices = Omit<RunServices, 'task' | 'groundTruth'>;

let builtinsOnce: Promise<PluginRegistry> | undefined;

/** The registry of corl's built-ins (to tell them from a module's own plugins). */
export function builtinRegistry(): Promise<PluginRegistry> {
  builtinsOnce ??= createRunContainer().then(registryOf);
  return builtinsOnce;
}

/** A run-like registry holding the built-ins, the module's plugins and `plugin` itself. */
export async function pluginRegistry(plugin: PluginDefinition, options: CreateOptions = {}): Promise<PluginRegistry> {
  const registry = options.registry ?? registryOf(await createRunContainer());
  if (options.register) {
    const builtins = await builtinRegistry();
    const r = registrar(registry, { builtin: (d) => builtins.holds(d) });
    try {
      await options.register(r.api);
    } finally {
      r.close();
    }
  }
  if (!registry.holds(plugin)) registry.add(plugin); // a different definition under its name is CORL_ERR_PLUGIN_DUPLICATE
  return registry;
}

// Compiling a schema is the expensive part of creating a plugin; one validator per registry and folder.
const validators = new WeakMap<PluginRegistry, Map<string, ConfigValidator>>();

/** The problems `options` has against the plugin's schema (empty when valid); `options` is completed with defaults in place. */
export function optionIssues(
  registry: PluginRegistry,
  plugin: PluginDefinition,
  options: Record<string, unknown>,
  baseDir = process.cwd(),
): ConfigIssue[] {
  const byDir = validators.get(registry) ?? validators.set(registry, new Map()).get(registry)!;
  const validator = byDir.get(baseDir) ?? byDir.set(baseDir, new ConfigValidator(registry, baseDir)).get(baseDir)!;
  return validator.validateOptions(plugin.manifest.kind, plugin.manifest.name, options);
}

/**
 * Validate options the way a config would: defaults applied, nested plugin selections resolved,
 * the result frozen. Invalid options throw CORL_ERR_PLUGIN_OPTIONS listing every problem (its
 * `data.issues` holds them with their paths).
 */
export async function pluginOptions(
  plugin: PluginDefinition,
  options: Readonly<Record<string, unknown>> = {},
  scope: CreateOptions = {},
): Promise<Readonly<Record<string, unknown>>> {
  const registry = await pluginRegistry(plugin, scope);
  return validated(registry, plugin, options, scope.baseDir);
}

function validated(
  registry: PluginRegistry,
  plugin: PluginDefinition,
  options: Readonly<Record<string, unknown>>,
  baseDir?: string,
): Readonly<Record<string, unknown>> {
  const data = structuredClone(options) as Record<string, unknown>;
  const issues = optionIssues(registry, plugin, data, baseDir);
  if (issues.length) {
    const lines = issues.map(
      (i) => `  options.${i.path === '(root)' ? '' : i.path}: ${i.message}${i.hint ? ` (${i.hint})` : ''}`,
    );
    throw new CorlError(
      'CORL_ERR_PLUGIN_OPTIONS',
      `expected valid options for "${plugin.manifest.name}", got ${issues.length} problem${issues.length === 1 ? '' : 's'}:\n${lines.join('\n')}\n`,
      {
        where: issues[0]!.path === '(root)' ? 'options' : `options.${issues[0]!.path}`,
        data: { issues },
      },
    );
  }
  return deepFreeze(data);
}

/**
 * Build a plugin instance exactly as a run does: validated, defaulted, frozen options, a factory
 * call through the same path as `corl train` (its declared dependencies injected from `services`),
 * with a fresh registry that also holds every built-in.
 *
 * ```ts
 * const reward = await createPlugin(myReward, { scale: 2 });
 * const result = await reward.score(rewardContext({ keys: ['4', '5'], supervisors: [['4', '4']] }));
 * ```
 */
export async function createPlugin<K extends PluginKind>(
  plugin: PluginDefinition<K>,
  options: Readonly<Record<string, unknown>> = {},
  scope: CreateOptions = {},
): Promise<PluginKindMap[K]> {
  const registry = await pluginRegistry(plugin, scope);
  const resolved = validated(registry, plugin, options, scope.baseDir);
  return instantiate(
    plugin.manifest.kind,
    { use: plugin.manifest.name, options: resolved },
    {
      registry,
      seed: scope.seed ?? 0,
      agent: scope.agent,
      baseDir: scope.baseDir ?? process.cwd(),
      services: { ...scope.services, groundTruth: scope.groundTruth, task: scope.task },
      onRefusal: scope.onRefusal,
      onHanded: scope.onHanded,
    },
  ) as Promise<PluginKindMap[K]>;
}
