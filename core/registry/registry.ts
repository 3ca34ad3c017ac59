import semver from 'semver';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { CorlError } from '../errors';
import type { PluginDefinition, PluginKind } from '../contracts/plugin';
import { PLUGIN_KINDS } from '../contracts/plugin';
import { CORL_VERSION } from '../version';

const NAME = /^[a-z0-9][a-z0-9-]*:[a-z0-9][a-z0-9._-]*$/;

/**
 * The one registry of every plugin kind. A run owns one (in its child container); a duplicate name
 * within a kind or an unknown name is a coded error. Names are unique per kind, so an extractor and
 * an equivalence may both be called `corl:math`.
 */
export class PluginRegistry {
  private readonly byName = new Map<string, PluginDefinition>();

  private static key(kind: PluginKind, name: string): string {
    return `${kind}\u0000${name}`;
  }

  /** Add a plugin. Throws on a malformed manifest, a duplicate name, or an unsupported corl version. */
  add(definition: PluginDefinition): void {
    const m = definition?.manifest;
    if (!m || typeof definition.create !== 'function') {
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        'expected a plugin definition {manifest, create}, got ' + describe(definition),
      );
    }
    if (typeof m.name !== 'string' || !NAME.test(m.name)) {
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        `expected a plugin name like "scope:name" (lowercase), got ${JSON.stringify(m.name)}`,
      );
    }
    if (!PLUGIN_KINDS.includes(m.kind)) {
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        `plugin "${m.name}": expected kind one of ${PLUGIN_KINDS.join(', ')}, got ${JSON.stringify(m.kind)}`,
      );
    }
    if (!m.options || typeof m.options !== 'object' || m.options.type !== 'object') {
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        `plugin "${m.name}": expected an options JSON Schema of type "object", got ${describe(m.options)}`,
      );
    }
    if (typeof m.corl !== 'string' || !semver.validRange(m.corl)) {
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        `plugin "${m.name}": expected a semver range in manifest.corl, got ${JSON.stringify(m.corl)}`,
      );
    }
    if (!semver.satisfies(CORL_VERSION, m.corl, { includePrerelease: true })) {
      throw new CorlError(
        'CORL_ERR_PLUGIN_VERSION',
        `plugin "${m.name}" supports corl ${m.corl}, got corl ${CORL_VERSION}`,
        {
          hint: 'install a version of the plugin built for this corl, or widen its manifest.corl range',
        },
      );
    }
    const key = PluginRegistry.key(m.kind, m.name);
    const existing = this.byName.get(key);
    if (existing) {
      if (existing === definition) return; // registering the same module twice is harmless
      throw new CorlError(
        'CORL_ERR_PLUGIN_DUPLICATE',
        `expected a unique ${m.kind} plugin name, got a second "${m.name}"`,
      );
    }
    this.byName.set(key, definition);
  }

  /** The plugin of `kind` named `name`; an unknown name lists the names that exist. */
  get<K extends PluginKind>(kind: K, name: string): PluginDefinition<K> {
    const d = this.byName.get(PluginRegistry.key(kind, name));
    if (!d) {
      const names = this.names(kind);
      const elsewhere = PLUGIN_KINDS.find((k) => this.byName.has(PluginRegistry.key(k, name)));
      const other = elsewhere ? ` ("${name}" is a ${elsewhere} plugin)` : '';
      throw new CorlError(
        'CORL_ERR_PLUGIN_UNKNOWN',
        `expected ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} plugin, one of ${names.map((n) => `"${n}"`).join(', ') || '(none registered)'}; got "${name}"${other}`,
        {
          data: { kind, names },
        },
      );
    }
    return d as PluginDefinition<K>;
  }

  /** Whether a plugin of that kind and name is registered. */
  has(kind: PluginKind, name: string): boolean {
    return this.byName.has(PluginRegistry.key(kind, name));
  }

  /** Names of every plugin of a kind, sorted. */
  names(kind: PluginKind): string[] {
    return [...this.byName.values()]
      .filter((d) => d.manifest.kind === kind)
      .map((d) => d.manifest.name)
      .sort();
  }

  /** Every registered plugin, sorted by kind then name. */
  all(): PluginDefinition[] {
    return [...this.byName.values()].sort(
      (a, b) =>
        PLUGIN_KINDS.indexOf(a.manifest.kind) - PLUGIN_KINDS.indexOf(b.manifest.kind) ||
        a.manifest.name.localeCompare(b.manifest.name),
    );
  }
}

/** Injection token of the run's {@link PluginRegistry}. */
export const PLUGIN_REGISTRY: InjectionToken<PluginRegistry> = 'corl.PluginRegistry';

/** The registry of a container; creates and registers an empty one if the container has none of its own. */
export function registryOf(container: DependencyContainer): PluginRegistry {
  if (!container.isRegistered(PLUGIN_REGISTRY, true)) {
    container.register(PLUGIN_REGISTRY, { useValue: new PluginRegistry() });
  }
  return container.resolve(PLUGIN_REGISTRY);
}

function describe(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (typeof v === 'object') return Array.isArray(v) ? 'an array' : 'an object without the expected fields';
  return `${typeof v} ${JSON.stringify(v)}`;
}
