import type { DependencyContainer } from 'tsyringe';
import type { PluginContext, PluginDefinition, PluginKind, PluginKindMap, PluginManifest } from '../contracts/plugin';
import { PLUGIN_CONTEXT, PLUGIN_OPTIONS } from '../contracts/plugin';
import { registryOf } from './registry';

/** Type helper for a plugin definition: infers the kind and the options type. */
export function definePlugin<K extends PluginKind, O>(def: {
  manifest: PluginManifest<K, O>;
  create(options: O, ctx: PluginContext): PluginKindMap[K] | Promise<PluginKindMap[K]>;
}): PluginDefinition<K, O> {
  return def;
}

/**
 * Factory for a tsyringe-injectable class: the instance is resolved from a child of the run's
 * container in which `PLUGIN_OPTIONS` and `PLUGIN_CONTEXT` are registered, so the constructor can
 * `@inject(PLUGIN_OPTIONS)` its options and any shared service (equivalence, ground truth...).
 */
export function fromClass<T>(cls: new (...args: any[]) => T): (options: unknown, ctx: PluginContext) => T {
  return (options, ctx) => {
    const child = ctx.container.createChildContainer();
    child.register(PLUGIN_OPTIONS, { useValue: options as Record<string, unknown> });
    child.register(PLUGIN_CONTEXT, { useValue: ctx });
    return child.resolve(cls);
  };
}

/** A module's synchronous `register(container)`, as {@link registerAll} builds it. */
export type RegisterFunction = (container: DependencyContainer) => void;

/** Build a module's `register(container)` from its plugin definitions. */
export function registerAll(...defs: PluginDefinition<any, any>[]): RegisterFunction {
  return (container) => {
    const registry = registryOf(container);
    for (const d of defs) registry.add(d);
  };
}
