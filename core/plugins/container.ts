import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { register as registerBuiltins } from '../../plugins';
import { PLUGIN_REGISTRY, PluginRegistry } from './registry';

/**
 * A fresh child container for one run (or one test): its own registry with every built-in plugin
 * registered through the same `register(container)` path outside modules take. Nothing is shared
 * with other runs; throw it away when done.
 */
export async function createRunContainer(parent: DependencyContainer = rootContainer, options: { builtins?: boolean } = {}): Promise<DependencyContainer> {
  const child = parent.createChildContainer();
  child.register(PLUGIN_REGISTRY, { useValue: new PluginRegistry() });
  if (options.builtins !== false) await registerBuiltins(child);
  return child;
}
