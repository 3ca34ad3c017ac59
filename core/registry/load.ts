import * as path from 'node:path';
import type { DependencyContainer } from 'tsyringe';
import type { PluginKind, PluginModule } from '../contracts/plugin';
import { CorlError, isCorlError } from '../errors';
import { PLUGIN_REGISTRY, PluginRegistry, type PluginRegistry as Registry } from './registry';

/** Resolve a module specifier the way a config means it: paths relative to the config's folder, else a package name. */
export function resolveModule(spec: string, baseDir: string): string {
  const isPath = spec.startsWith('.') || path.isAbsolute(spec);
  try {
    return isPath
      ? require.resolve(path.resolve(baseDir, spec))
      : require.resolve(spec, { paths: [baseDir, process.cwd()] });
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_LOAD',
      `expected a loadable module, got "${spec}" which cannot be found${isPath ? ` (looked for ${path.resolve(baseDir, spec)})` : ''}`,
      {
        hint: isPath
          ? 'check the path (it is relative to the config file) and build the plugin first'
          : `install it (npm install ${spec}) or give a path`,
        cause: e,
      },
    );
  }
}

function requireModule(spec: string, baseDir: string): PluginModule {
  const file = resolveModule(spec, baseDir);
  let mod: { register?: unknown; default?: { register?: unknown } } | null | undefined;
  try {
    mod = require(file);
  } catch (e) {
    throw new CorlError('CORL_ERR_PLUGIN_LOAD', `expected module "${spec}" to load, got ${(e as Error).message}`, {
      cause: e,
    });
  }
  const register =
    typeof mod?.register === 'function'
      ? (mod.register as PluginModule['register'])
      : typeof mod?.default?.register === 'function'
        ? (mod.default.register as PluginModule['register'])
        : undefined;
  if (!register) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected module "${spec}" to export register(container), got exports ${Object.keys(mod ?? {}).join(', ') || '(none)'}`,
    );
  }
  return { register };
}

/** Load plugin modules (a config's `plugins`) into a run container: each module's register(container) runs once. */
export async function loadPluginModules(
  container: DependencyContainer,
  specs: readonly string[],
  baseDir: string,
): Promise<void> {
  for (const spec of specs) {
    const mod = requireModule(spec, baseDir);
    try {
      await mod.register(container);
    } catch (e) {
      if (isCorlError(e)) throw e;
      throw new CorlError(
        'CORL_ERR_PLUGIN_LOAD',
        `expected register(container) of "${spec}" to succeed, got ${(e as Error).message}`,
        { cause: e },
      );
    }
  }
}

/**
 * A `use` that is a module path: load the module into a scratch registry, require exactly one
 * plugin of `kind`, add everything it registered to the run's registry, and return that plugin's name.
 * Synchronous, because config validation is; such modules must register synchronously.
 */
export function loadSelectionModule(
  registry: Registry,
  container: DependencyContainer,
  kind: PluginKind,
  spec: string,
  baseDir: string,
): string {
  const mod = requireModule(spec, baseDir);
  const scratch = container.createChildContainer();
  const local = new PluginRegistry();
  scratch.register(PLUGIN_REGISTRY, { useValue: local });
  let result: unknown;
  try {
    result = mod.register(scratch);
  } catch (e) {
    if (isCorlError(e)) throw e;
    throw new CorlError(
      'CORL_ERR_PLUGIN_LOAD',
      `expected register(container) of "${spec}" to succeed, got ${(e as Error).message}`,
      { cause: e },
    );
  }
  if (result && typeof (result as Promise<void>).then === 'function') {
    throw new CorlError(
      'CORL_ERR_PLUGIN_LOAD',
      `expected register(container) of "${spec}" to be synchronous when named by "use", got a promise`,
      {
        hint: 'list the module in "plugins" and refer to its plugin by name instead',
      },
    );
  }
  const mine = local.all().filter((d) => d.manifest.kind === kind);
  if (mine.length !== 1) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected module "${spec}" to register exactly one ${kind} plugin, got ${mine.length}${mine.length ? ` (${mine.map((d) => d.manifest.name).join(', ')})` : ''}`,
      {
        hint: 'list the module in "plugins" and select its plugin by name',
      },
    );
  }
  for (const d of local.all()) registry.add(d);
  return mine[0]!.manifest.name;
}
