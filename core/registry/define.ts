import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { PluginContext, PluginDefinition, PluginKind, PluginKindMap, PluginManifest } from '../contracts/plugin';
import { CorlError } from '../errors';
import { registryOf } from './registry';

/** Type helper for a plugin definition: infers the kind and the options type. */
export function definePlugin<K extends PluginKind, O>(def: {
  manifest: PluginManifest<K, O>;
  create(options: O, ctx: PluginContext): PluginKindMap[K] | Promise<PluginKindMap[K]>;
}): PluginDefinition<K, O> {
  return def;
}

/**
 * Factory for a tsyringe `@injectable()` class: the instance is resolved from the plugin's own
 * container, so its constructor can `@inject(PLUGIN_OPTIONS)` its options, `@inject(PLUGIN_CONTEXT)`
 * its context and `@inject(EQUIVALENCE)` (or any service its manifest entitles it to). A class with
 * a `dispose()` method is disposed with the container when the run closes.
 *
 * ```ts
 * @injectable()
 * class MySink implements MetricsSink {
 *   constructor(@inject(PLUGIN_OPTIONS) private readonly options: MyOptions) {}
 *   write(record: MetricsRecord) { ... }
 * }
 * export const mySink = definePlugin({ manifest: { ... }, create: fromClass(MySink) });
 * ```
 */
export function fromClass<T>(cls: new (...args: never[]) => T): (options: unknown, ctx: PluginContext) => T {
  // tsyringe fills the constructor's parameters itself, whatever their types: its token takes any constructor.
  return (_options, ctx) => ctx.container.resolve(cls as InjectionToken<T>);
}

/** A module's synchronous `register(container)`, as {@link registerAll} builds it. */
export type RegisterFunction = (container: DependencyContainer) => void;

/** Build a module's `register(container)` from its plugin definitions. */
export function registerAll(...defs: PluginDefinition[]): RegisterFunction {
  defs.forEach((d, i) => {
    const manifest = (d as { manifest?: unknown } | null)?.manifest;
    if (manifest && typeof manifest === 'object' && typeof (d as { create?: unknown }).create === 'function') return;
    const looksLikeContainer = typeof (d as { resolve?: unknown } | null)?.resolve === 'function';
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected registerAll's argument ${i + 1} to be a plugin definition ({ manifest, create }), got ${
        looksLikeContainer ? 'a container' : Array.isArray(d) ? 'an array' : typeof d
      }`,
      {
        hint: 'registerAll(a, b) builds register(container) from definitions: export `register: registerAll(a, b)`, or call `registerAll(a, b)(container)`',
      },
    );
  });
  return (container) => {
    const registry = registryOf(container);
    for (const d of defs) registry.add(d);
  };
}
