import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { PLUGIN_REGISTRY, PluginRegistry } from './registry';

/** Registers a set of plugins into a run's container (a plugin module's `register`). */
export type BuiltinRegistrar = (container: DependencyContainer) => void | Promise<void>;

/**
 * The token under which an entry point (entry/*.ts) provides corl's built-in plugins. The core
 * never imports the built-ins: `createRunContainer` asks its parent container for them.
 */
export const BUILTIN_PLUGINS: InjectionToken<BuiltinRegistrar> = 'corl.BuiltinPlugins';

let own: DependencyContainer | undefined;
let ownBuiltins: BuiltinRegistrar | undefined;

/**
 * corl's own container: a child of tsyringe's root, made on first use. It is the default parent of
 * run containers and holds the built-ins an entry point provided, so nothing of corl's is ever
 * registered in the root container an application (or a second copy of corl) shares. tsyringe is
 * loaded here rather than when corl is imported: it needs the Reflect metadata polyfill, and the
 * tslib it loads puts its helpers on globalThis.
 */
export function corlContainer(): DependencyContainer {
  if (!own) {
    require('reflect-metadata');
    const { container: root } = require('tsyringe') as typeof import('tsyringe');
    own = root.createChildContainer();
    if (ownBuiltins) own.register(BUILTIN_PLUGINS, { useValue: ownBuiltins });
  }
  return own;
}

/**
 * Make `plugins` the built-ins of every run container created under `parent`, or by default under
 * corl's own container (kept until that container is first made, so providing loads nothing).
 */
export function provideBuiltins(plugins: BuiltinRegistrar, parent?: DependencyContainer): void {
  if (parent) {
    parent.register(BUILTIN_PLUGINS, { useValue: plugins });
    return;
  }
  ownBuiltins = plugins;
  own?.register(BUILTIN_PLUGINS, { useValue: plugins });
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
