import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer, type InjectionToken } from 'tsyringe';
import { PLUGIN_REGISTRY, PluginRegistry } from './registry';

/** Registers a set of plugins into a run's container (a plugin module's `register`). */
export type BuiltinRegistrar = (container: DependencyContainer) => void | Promise<void>;

/**
 * The token under which an entry point (entry/*.ts) provides corl's built-in plugins. The core
 * never imports the built-ins: `createRunContainer` asks its parent container for them.
 */
export const BUILTIN_PLUGINS: InjectionToken<BuiltinRegistrar> = 'corl.BuiltinPlugins';

let own: DependencyContainer | undefined;

/**
 * corl's own container: a child of tsyringe's root, made on first use. It is the default parent of
 * run containers and where entry points provide the built-ins, so nothing of corl's is ever
 * registered in the root container an application (or a second copy of corl) shares.
 */
export function corlContainer(): DependencyContainer {
  return (own ??= rootContainer.createChildContainer());
}

/** Make `plugins` the built-ins of every run container created under `parent` (corl's own container by default). */
export function provideBuiltins(plugins: BuiltinRegistrar, parent: DependencyContainer = corlContainer()): void {
  parent.register(BUILTIN_PLUGINS, { useValue: plugins });
}

/**
 * A fresh child container for one run (or one test): its own registry with the built-in plugins
 * (when an entry point provided them) registered through the same `register(container)` path
 * outside modules take. Nothing is shared with other runs; throw it away when done.
 */
export async function createRunContainer(
  parent: DependencyContainer = corlContainer(),
  options: { builtins?: boolean } = {},
): Promise<DependencyContainer> {
  const child = parent.createChildContainer();
  child.register(PLUGIN_REGISTRY, { useValue: new PluginRegistry() });
  if (options.builtins !== false && parent.isRegistered(BUILTIN_PLUGINS, true))
    await parent.resolve(BUILTIN_PLUGINS)(child);
  return child;
}
