import type { DependencyContainer } from 'tsyringe';
import type { PluginDefinition, PluginKind, PluginKindMap } from '../contracts/plugin';
import type { GroundTruth } from '../contracts/problem';
import type { Task } from '../contracts/task';
import { ConfigValidator, type ConfigIssue } from '../config/validator';
import { CorlError } from '../errors';
import { createRunContainer } from '../registry/container';
import { instantiate } from '../registry/instantiate';
import { registryOf, type PluginRegistry } from '../registry/registry';
import { deepFreeze } from '../util/fs';

/** Where and how a plugin is created outside a config (tests, the contract suites). */
export interface CreateOptions {
  /** The seed handed to the factory (`PluginContext.seed`). Default 0. */
  readonly seed?: number;
  /** The agent index (`PluginContext.agent`), for per-agent plugins such as policies. */
  readonly agent?: number;
  /** Folder relative paths in options are resolved against. Default: the current folder. */
  readonly baseDir?: string;
  /** The plugin module's `register(container)`, run first so that plugins it builds on are registered. */
  readonly register?: (container: DependencyContainer) => void | Promise<void>;
  /**
   * Register services in the run-like container before the plugin is created. That container is the
   * parent of the plugin's own one, so whatever is registered here is visible to every plugin
   * (unlike a run, where the parent holds only the registry): for ground truth use `groundTruth`.
   */
  readonly setup?: (container: DependencyContainer) => void | Promise<void>;
  /**
   * The references a run would hold. Handed as in a run: registered (with `task`) as `GROUND_TRUTH`
   * only in the container of a reward source that declares `usesGroundTruth`; withheld from any other.
   */
  readonly groundTruth?: GroundTruth;
  /** The task a run would hold (`TASK`), on the same terms as `groundTruth`. */
  readonly task?: Task;
  /**
   * Called with each `CORL_ERR_PLUGIN_CAPABILITY` refusal the instance (or one it creates) meets,
   * even one it catches and swallows; the reward suite fails a label-free source on any.
   */
  readonly onRefusal?: (refusal: CorlError) => void;
  /** Create inside this container instead of a fresh run container with every built-in registered. */
  readonly container?: DependencyContainer;
}

/** A run-like container holding the built-ins, the module's plugins and `plugin` itself. */
export async function pluginContainer(
  plugin: PluginDefinition,
  options: CreateOptions = {},
): Promise<{ container: DependencyContainer; registry: PluginRegistry }> {
  const container = options.container ?? (await createRunContainer());
  if (options.register) await options.register(container);
  const registry = registryOf(container);
  registry.add(plugin); // the same definition twice is harmless; a different one with its name is CORL_ERR_PLUGIN_DUPLICATE
  if (options.setup) await options.setup(container);
  return { container, registry };
}

// Compiling a schema is the expensive part of creating a plugin; one validator per registry and folder.
const validators = new WeakMap<PluginRegistry, Map<string, ConfigValidator>>();

/** The problems `options` has against the plugin's schema (empty when valid); `options` is completed with defaults in place. */
export function optionIssues(
  registry: PluginRegistry,
  container: DependencyContainer,
  plugin: PluginDefinition,
  options: Record<string, unknown>,
  baseDir = process.cwd(),
): ConfigIssue[] {
  const byDir = validators.get(registry) ?? validators.set(registry, new Map()).get(registry)!;
  const validator =
    byDir.get(baseDir) ?? byDir.set(baseDir, new ConfigValidator(registry, container, baseDir)).get(baseDir)!;
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
  const { container, registry } = await pluginContainer(plugin, scope);
  return validated(registry, container, plugin, options, scope.baseDir);
}

function validated(
  registry: PluginRegistry,
  container: DependencyContainer,
  plugin: PluginDefinition,
  options: Readonly<Record<string, unknown>>,
  baseDir?: string,
): Readonly<Record<string, unknown>> {
  const data = structuredClone(options) as Record<string, unknown>;
  const issues = optionIssues(registry, container, plugin, data, baseDir);
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
 * call through the same path as `corl train`, in a fresh container that also holds every built-in.
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
  const { container, registry } = await pluginContainer(plugin, scope);
  const resolved = validated(registry, container, plugin, options, scope.baseDir);
  return instantiate(
    plugin.manifest.kind,
    { use: plugin.manifest.name, options: resolved },
    {
      container,
      registry,
      seed: scope.seed ?? 0,
      agent: scope.agent,
      baseDir: scope.baseDir ?? process.cwd(),
      services: { groundTruth: scope.groundTruth, task: scope.task },
      onRefusal: scope.onRefusal,
    },
  ) as Promise<PluginKindMap[K]>;
}
