import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { PluginDefinition, PluginRegistrar } from '../contracts/plugin';
import { CorlError } from '../errors';
import { PLUGIN_REGISTRY, PluginRegistry, type PluginOrigin } from './registry';

/** Registers a set of plugins through the registration API (a plugin module's `register`). */
export type BuiltinRegistrar = (plugins: PluginRegistrar) => void | Promise<void>;

/**
 * The token under which an entry point (entry/*.ts) provides corl's built-in plugins. The core
 * never imports the built-ins: `createRunContainer` asks its parent container for them.
 */
export const BUILTIN_PLUGINS: InjectionToken<BuiltinRegistrar> = 'corl.BuiltinPlugins';

/** tsyringe's root container, tsyringe loaded (with the Reflect metadata polyfill it requires) on first use. */
function rootContainer(): DependencyContainer {
  require('reflect-metadata');
  return (require('tsyringe') as typeof import('tsyringe')).container;
}

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
    own = rootContainer().createChildContainer();
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

/** Who registers through a registration API: corl's built-ins (or, for test helpers, whichever definitions are theirs), and the module. */
export interface RegistrarOrigin {
  /** True for the built-ins; a test of each definition where a module may hand over built-ins (corl/testing's kits). */
  readonly builtin: PluginOrigin['builtin'] | ((definition: PluginDefinition) => boolean);
  readonly module?: string;
}

/**
 * The registration API a module's `register` is handed: a frozen object whose one method adds
 * definitions to `registry`, and nothing with a path back to it. `close()` ends it: a module that
 * kept the API and adds later gets CORL_ERR_PLUGIN_INVALID. Only the built-ins may use the `corl:` scope.
 */
export function registrar(registry: PluginRegistry, origin: RegistrarOrigin): { api: PluginRegistrar; close(): void } {
  let open = true;
  const api: PluginRegistrar = Object.freeze({
    add(...definitions: PluginDefinition[]): void {
      if (!open) {
        throw new CorlError(
          'CORL_ERR_PLUGIN_INVALID',
          `expected ${origin.module ? `module "${origin.module}"` : 'a module'} to add plugins while its register() runs, got a call after it returned`,
          { hint: 'add every definition inside register(plugins) (awaited when it is async)' },
        );
      }
      for (const d of definitions) {
        const builtin = typeof origin.builtin === 'function' ? origin.builtin(d) : origin.builtin;
        if (!builtin) reserveScope(d);
        registry.add(d, { builtin });
      }
    },
  });
  return {
    api,
    close: () => {
      open = false;
    },
  };
}

/** A module other than corl's built-ins may not register under the `corl:` scope (it would pass for a built-in). */
function reserveScope(definition: PluginDefinition): void {
  let name: unknown;
  try {
    name = definition?.manifest?.name;
  } catch {
    return; // the registry reports the unreadable manifest
  }
  if (typeof name === 'string' && name.startsWith('corl:')) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected a plugin name outside the "corl:" scope, which corl's built-ins use, got "${name}"`,
      { hint: `rename it with a scope of your own, e.g. "lab:${name.slice(5)}"` },
    );
  }
}

/**
 * A container that sees nothing registered anywhere else: each plugin instance gets one, holding
 * only what its manifest entitles it to, so nothing registered in another container (tsyringe's
 * global one, the run's with its registry) is reachable from it, even by a factory tsyringe hands
 * the container to or a class's `@inject` parameters. The plugin itself is never handed it.
 *
 * tsyringe makes containers only as children, so this is a child of an empty container of corl's
 * whose ancestors are hidden through tsyringe's public methods alone: `isRegistered` answers for
 * this container only, and `resolve`/`resolveAll` of a token registered only in an ancestor fail as
 * tsyringe fails an unregistered token (tsyringe resolves a class's parameters through them too).
 */
export function isolatedContainer(): DependencyContainer {
  sealedParent ??= rootContainer().createChildContainer();
  return hideAncestors(sealedParent.createChildContainer());
}

let sealedParent: DependencyContainer | undefined;

function hideAncestors(c: DependencyContainer): DependencyContainer {
  const { isRegistered, resolve, resolveAll } = c;
  const inherited = (token: InjectionToken<unknown>): boolean =>
    !isRegistered.call(c, token, false) && isRegistered.call(c, token, true);
  const unregistered = (token: InjectionToken<unknown>): Error =>
    new Error(
      `Attempted to resolve unregistered dependency token: "${typeof token === 'function' ? token.name : String(token)}"`,
    );
  // tsyringe calls both as (token, context, isOptional): an optional token it does not hold is
  // `undefined` (resolve) or `[]` (resolveAll), as for a token registered nowhere.
  const guarded =
    (method: (...args: never[]) => unknown, none: () => unknown) =>
    (token: InjectionToken<unknown>, ...rest: unknown[]): unknown => {
      if (inherited(token)) {
        if (rest[1] === true) return none();
        throw unregistered(token);
      }
      return Reflect.apply(method, c, [token, ...rest]);
    };
  Object.defineProperties(c, {
    isRegistered: { value: (token: InjectionToken<unknown>) => isRegistered.call(c, token, false) },
    resolve: { value: guarded(resolve, () => undefined) },
    resolveAll: { value: guarded(resolveAll, () => []) },
  });
  return c;
}

/**
 * A fresh child container for one run (or one test), holding its own registry with the built-in
 * plugins (when an entry point provided them), registered through the same registration API
 * outside modules get. Host-side only: no plugin is ever handed it. Throw it away when done.
 */
export async function createRunContainer(
  parent: DependencyContainer = corlContainer(),
  options: { builtins?: boolean } = {},
): Promise<DependencyContainer> {
  const child = parent.createChildContainer();
  const registry = new PluginRegistry();
  child.register(PLUGIN_REGISTRY, { useValue: registry });
  if (options.builtins !== false && parent.isRegistered(BUILTIN_PLUGINS, true)) {
    const r = registrar(registry, { builtin: true });
    try {
      await parent.resolve(BUILTIN_PLUGINS)(r.api);
    } finally {
      r.close();
    }
  }
  return child;
}
