import semver from 'semver';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { CorlError, errorLine, isCorlError } from '../errors';
import { deepFreeze } from '../contracts/frozen';
import type {
  JsonSchema,
  ManifestQueryContext,
  PluginDefinition,
  PluginDependencies,
  PluginKind,
  PluginManifest,
  ResolvedSelection,
} from '../contracts/plugin';
import { MANIFEST_FIELDS, PLUGIN_KINDS } from '../contracts/plugin';
import { closest } from '../util/text';
import { CORL_VERSION } from '../version';

const NAME = /^[a-z0-9][a-z0-9-]*:[a-z0-9][a-z0-9._-]*$/;

/** Where a definition came from: corl's built-ins (an entry point's), or a plugin module. */
export interface PluginOrigin {
  /** Registered by corl's own built-ins: trusted with references where a manifest question says so (grading). */
  readonly builtin: boolean;
}

/** One manifest question whose answer may depend on the options. */
export type ManifestQuestion = 'readsGroundTruth' | 'trainedOnLabels' | 'tokenStats';

/**
 * The one registry of every plugin kind. A run owns one; a duplicate name within a kind or an
 * unknown name is a coded error. Names are unique per kind, so an extractor and an equivalence may
 * both be called `corl:math`.
 *
 * A definition is read once, when it is added: the registry keeps a frozen copy of its manifest
 * (options schema cloned and frozen) and of its factory, so a getter that answers differently on
 * each read, or a definition changed afterwards, changes nothing. A manifest question answered by a
 * function of the options is asked once per plugin and options; every later asking gets that answer.
 */
export class PluginRegistry {
  private readonly byName = new Map<string, PluginDefinition>();
  private readonly originals = new Map<string, object>();
  private readonly builtins = new Set<string>();
  private readonly answers = new Map<string, boolean>();

  private static key(kind: PluginKind, name: string): string {
    return `${kind}\u0000${name}`;
  }

  /** Add a plugin. Throws on a malformed or unreadable manifest, a duplicate name, or an unsupported corl version. */
  add(definition: PluginDefinition, origin: PluginOrigin = { builtin: false }): void {
    const frozen = snapshot(definition);
    const m = frozen.manifest;
    const key = PluginRegistry.key(m.kind, m.name);
    const existing = this.originals.get(key);
    if (existing) {
      if (existing === definition) return; // registering the same module twice is harmless
      throw new CorlError(
        'CORL_ERR_PLUGIN_DUPLICATE',
        `expected a unique ${m.kind} plugin name, got a second "${m.name}"`,
      );
    }
    this.byName.set(key, frozen);
    this.originals.set(key, definition);
    if (origin.builtin) this.builtins.add(key);
  }

  /** Add every definition of `other` (with its origin), as if registered here. */
  addAll(other: PluginRegistry): void {
    for (const [key, def] of other.byName) {
      const original = other.originals.get(key)!;
      const existing = this.originals.get(key);
      if (existing === original) continue;
      if (existing) {
        throw new CorlError(
          'CORL_ERR_PLUGIN_DUPLICATE',
          `expected a unique ${def.manifest.kind} plugin name, got a second "${def.manifest.name}"`,
        );
      }
      this.byName.set(key, def);
      this.originals.set(key, original);
      if (other.builtins.has(key)) this.builtins.add(key);
    }
  }

  /** Whether `definition` (the object given to `add`) is the one registered under its kind and name. */
  holds(definition: PluginDefinition): boolean {
    for (const original of this.originals.values()) if (original === definition) return true;
    return false;
  }

  /** Whether the plugin was registered by corl's built-ins. */
  isBuiltin(kind: PluginKind, name: string): boolean {
    return this.builtins.has(PluginRegistry.key(kind, name));
  }

  /**
   * The manifest's answer to `question` for a selection: its boolean, or its function's answer for
   * these options, asked once and remembered for the life of the registry (same options, same
   * answer). A function that throws or answers anything but a boolean is CORL_ERR_PLUGIN_INVALID.
   */
  answer(
    kind: PluginKind,
    selection: ResolvedSelection,
    question: ManifestQuestion,
    ctx: ManifestQueryContext,
  ): boolean {
    const m: PluginManifest<PluginKind, never> = this.get(kind, selection.use).manifest;
    // only reward sources declare these; the registry refused them on any other kind
    const v = m.kind === 'reward' ? m[question] : undefined;
    if (typeof v !== 'function') return v === true;
    const memo = `${PluginRegistry.key(kind, selection.use)}\u0000${question}\u0000${canonicalJson(selection.options)}`;
    const known = this.answers.get(memo);
    if (known !== undefined) return known;
    let got: unknown;
    try {
      // validated against this plugin's own schema: they are its options
      got = (v as (o: unknown, q: ManifestQueryContext) => unknown)(selection.options, ctx);
    } catch (e) {
      if (isCorlError(e)) throw e;
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        `expected manifest.${question} of "${selection.use}" to answer true or false for its options, got an error: ${errorLine(e)}`,
        { hint: `fix the plugin's manifest.${question} (a boolean, or a function of the options that returns one)` },
      );
    }
    if (typeof got !== 'boolean') {
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        `expected manifest.${question} of "${selection.use}" to answer true or false for its options, got ${describe(got)}`,
        { hint: `fix the plugin's manifest.${question} (a boolean, or a function of the options that returns one)` },
      );
    }
    this.answers.set(memo, got);
    return got;
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

/** Read one property once; a getter that throws is a coded error naming it. */
function read(obj: object, key: string, what: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (e) {
    throw new CorlError('CORL_ERR_PLUGIN_INVALID', `expected ${what} to be readable, got an error: ${errorLine(e)}`, {
      hint: 'give the manifest plain values (or functions of the options for readsGroundTruth, trainedOnLabels, tokenStats)',
    });
  }
}

const QUESTIONS = ['readsGroundTruth', 'trainedOnLabels', 'tokenStats'] as const;
const FLAGS = ['pointwise', 'readsReferences'] as const;
const COMMON = ['name', 'kind', 'description', 'corl', 'options'];
const PLURAL: Partial<Record<PluginKind, string>> = {
  reward: 'reward sources',
  policy: 'policies',
  equivalence: 'equivalences',
  metrics: 'metrics sinks',
};

/** Every manifest field of some kind, with the kinds that declare it (`readsReferences`: equivalence, metrics). */
const KINDS_OF_FIELD: ReadonlyMap<string, readonly PluginKind[]> = (() => {
  const out = new Map<string, PluginKind[]>();
  for (const k of PLUGIN_KINDS)
    for (const f of MANIFEST_FIELDS[k] as readonly string[]) out.set(f, [...(out.get(f) ?? []), k]);
  return out;
})();

/**
 * The fields of `kind` beside the common ones, once the manifest is known to declare no other: a
 * field of another kind (a topology's `readsGroundTruth`, present even as `false` or a getter) or a
 * field no kind has (a misspelt `trainedOnLabel`) is CORL_ERR_PLUGIN_INVALID naming it, rather than
 * a declaration corl would silently ignore.
 */
function ownFields(manifest: object, kind: PluginKind, name: string): ReadonlySet<string> {
  const own = new Set<string>(MANIFEST_FIELDS[kind]);
  let keys: string[];
  const declared = new Set<string>();
  try {
    keys = Object.keys(manifest);
    for (const f of KINDS_OF_FIELD.keys()) if (f in manifest) declared.add(f);
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected the manifest of "${name}" to list its fields, got an error: ${errorLine(e)}`,
      {
        hint: 'give the manifest as a plain object',
      },
    );
  }
  const article = (k: string) => (/^[aeiou]/.test(k) ? 'an' : 'a');
  for (const f of declared) {
    if (own.has(f)) continue;
    const kinds = KINDS_OF_FIELD.get(f)!;
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected the manifest of the ${kind} "${name}" to declare only a ${kind}'s fields, got manifest.${f}, which only ${kinds.map((k) => PLURAL[k] ?? `${k}s`).join(' and ')} declare`,
      {
        hint: own.size
          ? `remove ${f}: ${article(kind)} ${kind}'s manifest declares ${COMMON.join(', ')} and ${[...own].join(', ')}`
          : `remove ${f}: ${article(kind)} ${kind}'s manifest declares ${COMMON.join(', ')}, nothing more`,
      },
    );
  }
  for (const key of keys) {
    if (COMMON.includes(key) || KINDS_OF_FIELD.has(key)) continue;
    const near = closest(key, [...COMMON, ...own]);
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected the manifest of the ${kind} "${name}" to declare only known fields (${[...COMMON, ...own].join(', ')}), got manifest.${key}`,
      { hint: near ? `did you mean ${near}?` : `remove ${key} from the manifest` },
    );
  }
  return own;
}

/**
 * A frozen copy of a definition, each field read exactly once: the manifest's values (the options
 * schema cloned as plain data), its questions (booleans or functions of the options), the factory
 * and the declared dependencies. Nothing of the original is read again.
 */
function snapshot(definition: PluginDefinition): PluginDefinition {
  if (!definition || (typeof definition !== 'object' && typeof definition !== 'function')) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      'expected a plugin definition {manifest, create}, got ' + describe(definition),
    );
  }
  const manifest = read(definition, 'manifest', "the definition's manifest");
  const create = read(definition, 'create', "the definition's create");
  const inject = read(definition, 'inject', "the definition's inject");
  if (!manifest || typeof manifest !== 'object' || typeof create !== 'function') {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      'expected a plugin definition {manifest, create}, got ' + describe(definition),
    );
  }
  let owner = '';
  const field = (key: string) => read(manifest, key, `manifest.${key}${owner}`);
  const name = field('name');
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected a plugin name like "scope:name" (lowercase), got ${describe(name)}`,
    );
  }
  owner = ` of "${name}"`;
  const where = (key: string) => `manifest.${key} of "${name}"`;
  const kind = field('kind');
  if (!PLUGIN_KINDS.includes(kind as PluginKind)) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `plugin "${name}": expected kind one of ${PLUGIN_KINDS.join(', ')}, got ${describe(kind)}`,
    );
  }
  const description = field('description');
  if (typeof description !== 'string') {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected ${where('description')} to be a string, got ${describe(description)}`,
    );
  }
  const options = plainSchema(field('options'), name);
  const corl = field('corl');
  if (typeof corl !== 'string' || !semver.validRange(corl)) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `plugin "${name}": expected a semver range in manifest.corl, got ${describe(corl)}`,
    );
  }
  if (!semver.satisfies(CORL_VERSION, corl, { includePrerelease: true })) {
    throw new CorlError('CORL_ERR_PLUGIN_VERSION', `plugin "${name}" supports corl ${corl}, got corl ${CORL_VERSION}`, {
      hint: 'install a version of the plugin built for this corl, or widen its manifest.corl range',
    });
  }
  const copy: Record<string, unknown> = { name, kind, description, corl, options };
  const own = ownFields(manifest, kind as PluginKind, name);
  const legacy = own.has('usesGroundTruth') ? field('usesGroundTruth') : undefined;
  for (const q of QUESTIONS) {
    if (!own.has(q)) continue;
    let v = field(q);
    if (q === 'readsGroundTruth' && legacy !== undefined) {
      if (v !== undefined) {
        throw new CorlError(
          'CORL_ERR_PLUGIN_INVALID',
          `expected ${where('readsGroundTruth')} alone, got it and manifest.usesGroundTruth, its former name`,
          { hint: 'remove usesGroundTruth and keep readsGroundTruth' },
        );
      }
      v = legacy;
    }
    if (v !== undefined && typeof v !== 'boolean' && typeof v !== 'function') {
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        `expected ${where(q)} to be a boolean or a function of the options, got ${describe(v)}`,
      );
    }
    if (v !== undefined) copy[q] = v;
  }
  for (const f of FLAGS) {
    if (!own.has(f)) continue;
    const v = field(f);
    if (v !== undefined && typeof v !== 'boolean') {
      throw new CorlError('CORL_ERR_PLUGIN_INVALID', `expected ${where(f)} to be a boolean, got ${describe(v)}`);
    }
    if (v !== undefined) copy[f] = v;
  }
  const memory = own.has('memory') ? field('memory') : undefined;
  if (memory !== undefined && typeof memory !== 'function') {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected ${where('memory')} to be a function of the options and a sampling load, got ${describe(memory)}`,
    );
  }
  if (memory !== undefined) copy.memory = memory;
  if (legacy !== undefined) deprecatedName(name);
  const deps = dependencies(inject, name);
  const factory = create as PluginDefinition['create'];
  const frozenCreate: PluginDefinition['create'] = (o, ctx, d) => factory.call(definition, o, ctx, d);
  const cls = classOf(factory);
  if (cls) Object.defineProperty(frozenCreate, PLUGIN_CLASS, { value: cls });
  return Object.freeze({
    manifest: Object.freeze(copy) as unknown as PluginDefinition['manifest'],
    ...(deps ? { inject: deps } : {}),
    create: Object.freeze(frozenCreate),
  });
}

const warnedLegacy = new Set<string>();

/** A manifest that declares `usesGroundTruth`, the former name of `readsGroundTruth`: warned once per plugin name and process. */
function deprecatedName(name: string): void {
  if (warnedLegacy.has(name)) return;
  warnedLegacy.add(name);
  process.emitWarning(
    `plugin "${name}" declares manifest.usesGroundTruth, the former name of readsGroundTruth: corl reads it as readsGroundTruth for this release and refuses it from corl 0.2; rename it in the manifest`,
    { type: 'DeprecationWarning', code: 'CORL_DEP_USES_GROUND_TRUTH' },
  );
}

/** The options schema as frozen plain data (no getters, functions or proxies survive the copy). */
function plainSchema(schema: unknown, name: string): JsonSchema {
  let copy: unknown;
  try {
    copy = structuredClone(schema);
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `plugin "${name}": expected an options JSON Schema of plain data, got one that cannot be copied: ${errorLine(e)}`,
    );
  }
  if (!copy || typeof copy !== 'object' || Array.isArray(copy) || (copy as JsonSchema).type !== 'object') {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `plugin "${name}": expected an options JSON Schema of type "object", got ${describe(copy)}`,
    );
  }
  return deepFreeze(copy as JsonSchema);
}

/** The declared dependencies, copied: a frozen map of names to injection tokens. */
function dependencies(inject: unknown, name: string): PluginDependencies | undefined {
  if (inject === undefined) return undefined;
  if (!inject || typeof inject !== 'object' || Array.isArray(inject)) {
    throw new CorlError(
      'CORL_ERR_PLUGIN_INVALID',
      `expected "inject" of "${name}" to map names to injection tokens, got ${describe(inject)}`,
    );
  }
  const out: Record<string, InjectionToken<unknown>> = {};
  for (const key of Object.keys(inject)) {
    const token = read(inject, key, `inject.${key} of "${name}"`);
    if (typeof token !== 'string' && typeof token !== 'symbol' && typeof token !== 'function') {
      throw new CorlError(
        'CORL_ERR_PLUGIN_INVALID',
        `expected inject.${key} of "${name}" to be an injection token (e.g. EQUIVALENCE), got ${describe(token)}`,
      );
    }
    out[key] = token as InjectionToken<unknown>;
  }
  return Object.freeze(out);
}

/** Property of a factory made by `fromClass`: the class the run constructs with its dependencies. */
export const PLUGIN_CLASS: unique symbol = Symbol.for('corl.PluginClass');

/** The `@injectable()` class behind a factory made by `fromClass`, if it is one. */
export function classOf(create: unknown): (new (...args: never[]) => unknown) | undefined {
  const cls = typeof create === 'function' ? (create as unknown as Record<symbol, unknown>)[PLUGIN_CLASS] : undefined;
  return typeof cls === 'function' ? (cls as new (...args: never[]) => unknown) : undefined;
}

/** JSON with object keys sorted: the same options give the same text whatever order their keys were written in. */
function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, (x as Record<string, unknown>)[k]]),
        )
      : x,
  );
}

function describe(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (typeof v === 'object') return Array.isArray(v) ? 'an array' : 'an object without the expected fields';
  return `${typeof v} ${JSON.stringify(v)}`;
}
