import { isBuiltin } from 'node:module';
import * as path from 'node:path';
import type { PluginKind, PluginModule } from '../contracts/plugin';
import { CorlError, errorLine, isCorlError } from '../errors';
import { inputProblem } from '../util/files';
import { registrar } from './container';
import { PluginRegistry } from './registry';

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
  // require.resolve answers a built-in ("fs", "node:fs") with its name, not a file: no plugin is one.
  if (isBuiltin(file)) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_LOAD',
      `expected a plugin module, got "${spec}", a module built into Node.js`,
      {
        hint: 'list the plugin\'s package name or the path of its built .js file in "plugins"',
      },
    );
  }
  // require() reads the file whole and blocks: a FIFO would hang it, /dev/zero never end.
  let problem: string | undefined;
  try {
    problem = inputProblem(file);
  } catch (e) {
    problem = errorLine(e);
  }
  if (problem !== undefined) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_LOAD',
      `expected module "${spec}" to be a JavaScript file, got ${problem} at ${file}`,
      {
        hint: 'point "plugins" at the built .js file of the plugin (or its package), not a pipe, device or folder',
      },
    );
  }
  let mod: { register?: unknown; default?: { register?: unknown } } | null | undefined;
  try {
    mod = require(file);
  } catch (e) {
    throw new CorlError('CORL_ERR_PLUGIN_LOAD', `expected module "${spec}" to load, got ${errorLine(e)}`, {
      cause: e,
    });
  }
  let register: unknown;
  try {
    register = typeof mod?.register === 'function' ? mod.register : mod?.default?.register;
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected module "${spec}" to export register(plugins), got an error: ${errorLine(e)}`,
    );
  }
  if (typeof register !== 'function') {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected module "${spec}" to export register(plugins), got exports ${Object.keys(mod ?? {}).join(', ') || '(none)'}`,
    );
  }
  return { register: register as PluginModule['register'] };
}

function failed(spec: string, e: unknown): CorlError {
  if (isCorlError(e)) {
    // Name the module, so that the config's error points at its entry in "plugins".
    return e.detail.includes(`"${spec}"`)
      ? e
      : new CorlError(e.code, `${e.detail} (module "${spec}")`, {
          where: e.where,
          hint: e.hint,
          data: e.data,
          cause: e,
        });
  }
  return new CorlError(
    'CORL_ERR_PLUGIN_LOAD',
    `expected register(plugins) of "${spec}" to succeed, got ${errorLine(e)}`,
    {
      cause: e,
    },
  );
}

/**
 * Load plugin modules (a config's `plugins`) into a run's registry: each module's `register` runs
 * once, handed the registration API (it can only add definitions, and only until it returns).
 */
export async function loadPluginModules(
  registry: PluginRegistry,
  specs: readonly string[],
  baseDir: string,
): Promise<void> {
  for (const spec of specs) {
    const mod = requireModule(spec, baseDir);
    const r = registrar(registry, { builtin: false, module: spec });
    try {
      await mod.register(r.api);
    } catch (e) {
      throw failed(spec, e);
    } finally {
      r.close();
    }
  }
}

/**
 * A `use` that is a module path: load the module into a scratch registry, require exactly one
 * plugin of `kind`, add everything it registered to the run's registry, and return that plugin's name.
 * Synchronous, because config validation is; such modules must register synchronously.
 */
export function loadSelectionModule(registry: PluginRegistry, kind: PluginKind, spec: string, baseDir: string): string {
  const mod = requireModule(spec, baseDir);
  const local = new PluginRegistry();
  const r = registrar(local, { builtin: false, module: spec });
  let result: unknown;
  try {
    result = mod.register(r.api);
  } catch (e) {
    throw failed(spec, e);
  } finally {
    r.close();
  }
  if (result && typeof (result as Promise<void>).then === 'function') {
    // A rejection would otherwise surface later as an unhandled one.
    (result as Promise<void>).catch(() => undefined);
    throw new CorlError(
      'CORL_ERR_PLUGIN_LOAD',
      `expected register(plugins) of "${spec}" to be synchronous when named by "use", got a promise`,
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
  registry.addAll(local);
  return mine[0]!.manifest.name;
}
