import type { InjectionToken } from 'tsyringe';
import type {
  PluginContext,
  PluginDefinition,
  PluginKind,
  PluginKindMap,
  ManifestOf,
  PluginRegistrar,
} from '../contracts/plugin';
import { CorlError } from '../errors';
import { PLUGIN_CLASS } from './registry';

export type { PluginRegistrar } from '../contracts/plugin';

/**
 * Type helper for a plugin definition: infers the kind, the options type and the dependencies. The
 * manifest is that kind's ({@link ManifestOf}): a reward source's may declare what it reads, a
 * policy's its memory, an equivalence's or a metrics sink's whether it is trusted with references,
 * and a field of another kind (a topology's `readsGroundTruth`) does not compile. A factory's dependencies are declared in `inject` (name → token) and handed to `create`, resolved,
 * as its third argument:
 *
 * ```ts
 * export const myReward = definePlugin({
 *   manifest: { name: 'lab:my-reward', kind: 'reward', ... },
 *   inject: { topology: TOPOLOGY },
 *   create(options, ctx, { topology }) { ... },
 * });
 * ```
 */
export function definePlugin<K extends PluginKind, O, D extends Record<string, unknown> = Record<string, never>>(def: {
  manifest: ManifestOf<K, O>;
  inject?: { readonly [P in keyof D]: InjectionToken<D[P]> };
  create(options: O, ctx: PluginContext, deps: Readonly<D>): PluginKindMap[K] | Promise<PluginKindMap[K]>;
}): PluginDefinition<K, O> {
  return def as unknown as PluginDefinition<K, O>;
}

/**
 * Constructor injection: a factory that has the run construct a tsyringe `@injectable()` class, its
 * constructor's `@inject(TOKEN)` parameters resolved by the run (`PLUGIN_OPTIONS`, `PLUGIN_CONTEXT`,
 * `EQUIVALENCE`, or any service its manifest entitles it to; the plugin never holds the container
 * they come from). A class with a `dispose()` method is disposed when the run closes.
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
  const create = (): T => {
    throw new CorlError(
      'CORL_ERR_PLUGIN_CREATE',
      `expected the run to construct ${cls.name || 'the class'} (a fromClass factory is not called directly), got a direct call`,
      { hint: 'create the plugin through a config, or corl/testing createPlugin' },
    );
  };
  Object.defineProperty(create, PLUGIN_CLASS, { value: cls });
  return Object.freeze(create);
}

/** A module's synchronous `register(plugins)`, as {@link registerAll} builds it. */
export type RegisterFunction = (plugins: PluginRegistrar) => void;

/** Build a module's `register(plugins)` from its plugin definitions: `export const register = registerAll(a, b)`. */
export function registerAll(...defs: PluginDefinition[]): RegisterFunction {
  defs.forEach((d, i) => {
    const manifest = (d as { manifest?: unknown } | null)?.manifest;
    if (manifest && typeof manifest === 'object' && typeof (d as { create?: unknown }).create === 'function') return;
    const looksLikeRegistrar = typeof (d as { add?: unknown } | null)?.add === 'function';
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected registerAll's argument ${i + 1} to be a plugin definition ({ manifest, create }), got ${
        looksLikeRegistrar ? 'the registration API' : Array.isArray(d) ? 'an array' : typeof d
      }`,
      {
        hint: 'registerAll(a, b) builds register(plugins) from definitions: export `register: registerAll(a, b)`, or call `registerAll(a, b)(plugins)`',
      },
    );
  });
  return (plugins) => plugins.add(...defs);
}
