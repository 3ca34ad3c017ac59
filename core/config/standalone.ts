// Plugins made outside a run: checking graders on one's data (`corl answers`), deciding which wrong
// answers are the same (`corl agreement`), rebuilding a finished run's task (`corl report --pack`).
// A fresh container with the built-ins (and any plugin modules named), each selection's options
// validated and defaulted as a config's are, then created by the composition root.
import type { PluginKind, PluginKindMap } from '../contracts/plugin';
import { CorlError } from '../errors';
import { createRunContainer } from '../registry/container';
import { instantiate } from '../registry/instantiate';
import { loadPluginModules } from '../registry/load';
import { registryOf, type PluginRegistry } from '../registry/registry';
import { ConfigValidator } from './validator';

/** A registry of the built-ins and of `modules` (resolved against `baseDir`), for {@link standalonePlugin}. */
export async function standaloneRegistry(modules: readonly string[], baseDir: string): Promise<PluginRegistry> {
  const registry = registryOf(await createRunContainer());
  await loadPluginModules(registry, modules, baseDir);
  return registry;
}

/** Where a standalone plugin's errors point, and what it is seeded and resolved with. */
export interface StandaloneScope {
  readonly baseDir: string;
  /** Default 0. */
  readonly seed?: number;
  /** What an error creating the plugin names (a flag, a config field). */
  readonly where: string;
  /** What an error in its options names (default: `where`). */
  readonly optionsWhere?: string;
}

/**
 * Create plugin `use` of `kind` with `options` (defaults applied in place): an unknown plugin is its
 * registry error, options against its schema a CORL_ERR_PLUGIN_OPTIONS listing every problem.
 */
export async function standalonePlugin<K extends PluginKind>(
  registry: PluginRegistry,
  kind: K,
  selection: { readonly use: string; readonly options: Record<string, unknown> },
  scope: StandaloneScope,
): Promise<PluginKindMap[K]> {
  const { use, options } = selection;
  registry.get(kind, use);
  const issues = new ConfigValidator(registry, scope.baseDir).validateOptions(kind, use, options);
  if (issues.length)
    throw new CorlError(
      'CORL_ERR_PLUGIN_OPTIONS',
      `expected valid options for "${use}", got ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { where: scope.optionsWhere ?? scope.where },
    );
  return instantiate(kind, { use, options }, { registry, seed: scope.seed ?? 0, baseDir: scope.baseDir }, scope.where);
}
