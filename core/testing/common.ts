import assert from 'node:assert/strict';
import type { JsonSchema, PluginDefinition, PluginKind, PluginKindMap, PluginRegistrar } from '../contracts/plugin';
import { MANIFEST_FIELDS, PLUGIN_KINDS } from '../contracts/plugin';
import { CorlError, isCorlError } from '../errors';
import { createRunContainer } from '../registry/container';
import { PluginRegistry, registryOf } from '../registry/registry';
import { createPlugin, pluginOptions, pluginRegistry, type CreateOptions, type LabelFreeServices } from './create';
import { labelChecks } from './leaks';
import { resolveRunner, type SuiteOptions, type TestBody } from './runner';

/** One named check of a contract: run it under any test framework, or call `run()` directly. */
export interface Check {
  readonly title: string;
  readonly run: TestBody;
}

/** A bad option set and, optionally, the field its error must name. */
export interface InvalidOptions {
  readonly options: Readonly<Record<string, unknown>>;
  /** Dotted path the error must point at (e.g. `threshold`); default: any. */
  readonly field?: string;
}

/** Inputs every kind's suite takes. */
export interface KitOptions extends SuiteOptions {
  /** Valid options to test with (defaults are applied). Required when the schema has required fields. Default `{}`. */
  readonly options?: Readonly<Record<string, unknown>>;
  /** More valid option sets; every behavioural check runs once per set, after `options`. */
  readonly optionSets?: readonly Readonly<Record<string, unknown>>[];
  /**
   * Options that must be refused with a coded error: by the schema (CORL_ERR_PLUGIN_OPTIONS naming
   * the field) or by the factory (any CorlError). A wrong-typed value for each top-level option and
   * an unknown option are always tried as well.
   */
  readonly invalidOptions?: readonly InvalidOptions[];
  /** Top-level options that are optional on purpose and have no default (their absence means something). */
  readonly optionalWithoutDefault?: readonly string[];
  /** The module's `register(plugins)`: checked to register this plugin (and nothing else there), and run before instances are created. */
  readonly register?: (plugins: PluginRegistrar) => void | Promise<void>;
  /** Seed handed to the factory. Default 11. */
  readonly seed?: number;
  /** Folder relative paths in options are resolved against. */
  readonly baseDir?: string;
  /** The run's label-free services an instance may be injected (as a run hands them: facades of their methods). */
  readonly services?: LabelFreeServices;
}

/** The option sets a suite runs its behavioural checks with. */
export function optionSetsOf(kit: KitOptions): Readonly<Record<string, unknown>>[] {
  return [kit.options ?? {}, ...(kit.optionSets ?? [])];
}

/** A label for an option set in failure messages. */
export function label(options: Readonly<Record<string, unknown>>): string {
  const s = JSON.stringify(options);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

// One registry per (plugin, module) holds the built-ins, the module's plugins and the plugin; every
// instance is created from it, so instances share the compiled schemas but nothing else.
const bases = new WeakMap<PluginDefinition, Map<unknown, Promise<PluginRegistry>>>();

function baseRegistry(plugin: PluginDefinition, register: KitOptions['register']): Promise<PluginRegistry> {
  const byModule = bases.get(plugin) ?? bases.set(plugin, new Map()).get(plugin)!;
  let base = byModule.get(register);
  if (!base) {
    base = pluginRegistry(plugin, { register });
    base.catch(() => byModule.delete(register));
    byModule.set(register, base);
  }
  return base;
}

/** Validate options for a kit as a config would (defaults applied, frozen); CORL_ERR_PLUGIN_OPTIONS when invalid. */
export async function kitOptions(
  plugin: PluginDefinition,
  kit: KitOptions,
  options: Readonly<Record<string, unknown>>,
): Promise<{ options: Readonly<Record<string, unknown>>; registry: PluginRegistry }> {
  const registry = await baseRegistry(plugin, kit.register);
  return { options: await pluginOptions(plugin, options, { registry, baseDir: kit.baseDir }), registry };
}

/** Create an instance for a kit, with its seed, base folder, module and services. */
export async function kitCreate<K extends PluginKind>(
  plugin: PluginDefinition<K>,
  kit: KitOptions,
  options: Readonly<Record<string, unknown>>,
  extra: CreateOptions = {},
): Promise<PluginKindMap[K]> {
  return createPlugin(plugin, options, {
    seed: kit.seed ?? 11,
    baseDir: kit.baseDir,
    registry: extra.registry ?? (await baseRegistry(plugin, kit.register)),
    services: { ...kit.services, ...extra.services },
    agent: extra.agent,
    groundTruth: extra.groundTruth,
    task: extra.task,
    onRefusal: extra.onRefusal,
    onHanded: extra.onHanded,
  });
}

/** Throw a coded setup error when a suite is handed a plugin of another kind. */
export function expectKind(plugin: PluginDefinition, kind: PluginKind): void {
  if (!plugin?.manifest || plugin.manifest.kind !== kind) {
    throw new CorlError(
      'CORL_ERR_TESTING_SETUP',
      `expected a ${kind} plugin definition, got ${plugin?.manifest ? `the ${plugin.manifest.kind} plugin "${plugin.manifest.name}"` : String(plugin)}`,
    );
  }
}

/** Register a suite's checks with the runner under one `describe`. */
export function suite(kind: PluginKind, plugin: PluginDefinition, kit: SuiteOptions, checks: readonly Check[]): void {
  const runner = resolveRunner(kit.runner);
  runner.describe(kit.title ?? `${plugin.manifest.name} satisfies the ${kind} contract`, () => {
    for (const c of checks) runner.it(c.title, c.run);
  });
}

/** A wrong-typed value for a property schema, or undefined when the schema allows anything. */
export function wrongValue(schema: JsonSchema): unknown {
  if (schema.corlPlugin) return 42;
  if (Array.isArray(schema.enum)) return '\u0000not-one-of-the-allowed-values';
  if (schema.const !== undefined) return typeof schema.const === 'string' ? 12345 : '\u0000not-the-constant';
  const types = Array.isArray(schema.type)
    ? (schema.type as string[])
    : typeof schema.type === 'string'
      ? [schema.type]
      : [];
  if (types.length === 0) return undefined;
  if (!types.includes('string')) return 'not-a-' + types.join('-or-');
  if (!types.includes('number') && !types.includes('integer')) return 12345;
  if (!types.includes('object')) return { unexpected: true };
  return undefined;
}

/** Every object schema inside `schema` that declares properties, with its path (arrays' item schemas excluded). */
function objectSchemas(
  schema: JsonSchema,
  path: string,
  out: { path: string; schema: JsonSchema }[] = [],
): { path: string; schema: JsonSchema }[] {
  if (schema.properties && typeof schema.properties === 'object') {
    out.push({ path, schema });
    for (const [k, v] of Object.entries(schema.properties as Record<string, JsonSchema>))
      objectSchemas(v, path ? `${path}.${k}` : k, out);
  }
  return out;
}

/** The checks every plugin kind shares: manifest, options schema, valid and invalid options, registration, labels. */
export function commonChecks(kind: PluginKind, plugin: PluginDefinition, kit: KitOptions): Check[] {
  const m = plugin.manifest;
  const checks: Check[] = [
    {
      title: 'has a well-formed manifest (scope:name, kind, one-line description, a corl range this corl satisfies)',
      run: async () => {
        assert.equal(m.kind, kind, `manifest.kind should be "${kind}"`);
        assert.ok(PLUGIN_KINDS.includes(m.kind));
        new PluginRegistry().add(plugin); // name pattern, schema type, semver range and version, the kind's own fields, as corl checks them
        assert.equal(typeof m.description, 'string', 'manifest.description should be a string');
        assert.ok(m.description.trim().length > 0, 'manifest.description should not be empty');
        assert.ok(
          !m.description.includes('\n'),
          'manifest.description should be one line (it is shown by `corl list`)',
        );
        if (m.name.startsWith('corl:')) {
          const builtins = registryOf(await createRunContainer());
          assert.ok(
            builtins.holds(plugin),
            `the "corl:" scope is reserved for corl's built-in plugins; rename "${m.name}" (e.g. "lab:${m.name.slice(5)}")`,
          );
        }
      },
    },
    {
      title: 'declares its options as a JSON Schema object with defaults and additionalProperties: false',
      run: async () => {
        const schema = m.options;
        assert.equal(schema.type, 'object', 'manifest.options.type should be "object"');
        const optional = new Set(kit.optionalWithoutDefault ?? []);
        for (const { path, schema: s } of objectSchemas(schema, '')) {
          assert.equal(
            s.additionalProperties,
            false,
            `${path ? `options.${path}` : 'manifest.options'} should set additionalProperties: false, so that typos are errors`,
          );
          const required = new Set((s.required as string[] | undefined) ?? []);
          // Fields of an object without a default are only filled in when the user gives the object.
          if (path && s.default === undefined) continue;
          for (const [k, p] of Object.entries(s.properties as Record<string, JsonSchema>)) {
            const full = path ? `${path}.${k}` : k;
            if (required.has(k) || optional.has(full)) continue;
            assert.ok(
              p.default !== undefined,
              `option "${full}" should have a default (or be required, or be listed in optionalWithoutDefault when its absence means something)`,
            );
          }
        }
        // Compiles under ajv's strict draft 2020-12 mode (unknown keywords and bad defaults are errors).
        try {
          await kitOptions(plugin, kit, kit.options ?? {});
        } catch (e) {
          if (isCorlError(e, 'CORL_ERR_PLUGIN_INVALID')) assert.fail(e.message);
          if (!isCorlError(e, 'CORL_ERR_PLUGIN_OPTIONS')) throw e;
        }
      },
    },
    {
      title: 'accepts the given options and completes them with its defaults',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          let resolved: Readonly<Record<string, unknown>>;
          try {
            resolved = (await kitOptions(plugin, kit, options)).options;
          } catch (e) {
            const required = (m.options.required as string[] | undefined) ?? [];
            assert.fail(
              `options ${label(options)} should be valid${required.length && !kit.options ? ` (the schema requires ${required.join(', ')}: pass them as the suite's \`options\`)` : ''}: ${(e as Error).message}`,
            );
          }
          for (const [k, p] of Object.entries((m.options.properties ?? {}) as Record<string, JsonSchema>)) {
            if (p.default !== undefined && options[k] === undefined)
              assert.ok(k in resolved, `default of option "${k}" should be applied`);
          }
          assert.ok(Object.isFrozen(resolved), 'resolved options are frozen');
        }
      },
    },
    {
      title: 'refuses bad options with a coded error naming the field',
      run: async () => {
        const base = kit.options ?? {};
        const cases: InvalidOptions[] = [
          { options: { ...base, corlKitUnknownOption: true }, field: 'corlKitUnknownOption' },
        ];
        for (const [k, p] of Object.entries((m.options.properties ?? {}) as Record<string, JsonSchema>)) {
          const bad = wrongValue(p);
          if (bad !== undefined) cases.push({ options: { ...base, [k]: bad }, field: k });
        }
        cases.push(...(kit.invalidOptions ?? []));
        for (const c of cases) {
          let error: unknown;
          try {
            await kitCreate(plugin, kit, c.options);
          } catch (e) {
            error = e;
          }
          assert.ok(error !== undefined, `options ${label(c.options)} should be refused`);
          assert.ok(
            isCorlError(error),
            `options ${label(c.options)} should be refused with a coded CorlError, got ${String((error as Error)?.stack ?? error)}`,
          );
          assert.ok(
            (error as CorlError).code !== 'CORL_ERR_PLUGIN_CREATE',
            `options ${label(c.options)} should be refused with a coded error of the plugin's own (e.g. CORL_ERR_PLUGIN_OPTIONS naming the option); the factory threw a plain Error, which corl wrapped: ${(error as CorlError).message}`,
          );
          if (c.field && Array.isArray(error.data?.issues)) {
            const issues = (error.data?.issues ?? []) as { path: string }[];
            assert.ok(
              issues.some(
                (i) => i.path === c.field || i.path.startsWith(`${c.field}.`) || i.path.startsWith(`${c.field}[`),
              ),
              `the error for ${label(c.options)} should name "${c.field}", got: ${error.detail}`,
            );
          } else if (c.field) {
            assert.ok(
              error.message.includes(c.field),
              `the error (its place or message) for ${label(c.options)} should name "${c.field}", got: ${error.message}`,
            );
          }
        }
      },
    },
  ];
  checks.push(...labelChecks(kind, plugin, kit));
  return checks;
}

/** Deep equality with a readable failure. */
export function sameTranscript(a: unknown, b: unknown, what: string): void {
  assert.deepEqual(a, b, `${what} should be the same for two instances built with the same options and seed`);
}

/** Assert a value is a finite number. */
export function finite(v: unknown, what: string): void {
  assert.ok(typeof v === 'number' && Number.isFinite(v), `${what} should be a finite number, got ${String(v)}`);
}

/** Run `f`; return its error, or fail when it does not throw. */
export async function thrown(f: () => unknown, what: string): Promise<unknown> {
  try {
    await f();
  } catch (e) {
    return e;
  }
  assert.fail(`${what} should throw`);
}

/** The check that a kind which never receives references does not declare ground truth; `why` says what it sees. */
export function labelFreeCheck(kind: PluginKind, plugin: PluginDefinition, why: string): Check {
  return {
    title: `is label-free: its manifest declares none of a reward source's fields, what it reads among them (${kind}s never receive references)`,
    run: () => {
      const declared = MANIFEST_FIELDS.reward.filter((f) => f in plugin.manifest);
      assert.deepEqual(declared, [], `${why} (only reward sources declare ${MANIFEST_FIELDS.reward.join(', ')})`);
    },
  };
}

/**
 * The check that `probe` gives the same transcript from two instances of every option set, and from
 * the first when asked again (`what` names the answers in a failure).
 */
export function repeatableCheck<K extends PluginKind>(
  title: string,
  plugin: PluginDefinition<K>,
  kit: KitOptions,
  probe: (instance: PluginKindMap[K]) => unknown,
  what: string,
): Check {
  return {
    title,
    run: async () => {
      for (const options of optionSetsOf(kit)) {
        const a = await kitCreate(plugin, kit, options);
        const b = await kitCreate(plugin, kit, options);
        const first = probe(a);
        sameTranscript(first, probe(b), `${what} for ${label(options)}`);
        assert.deepEqual(probe(a), first, `${label(options)}: asking again should give the same ${what}`);
      }
    },
  };
}
