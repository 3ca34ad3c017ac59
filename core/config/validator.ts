import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { PLUGIN_KINDS, type JsonSchema, type PluginKind } from '../contracts/plugin';
import { CorlError, isCorlError } from '../errors';
import { loadSelectionModule } from '../registry/load';
import type { PluginRegistry } from '../registry/registry';
import * as fs from 'node:fs';
import { corlRoot, PACKAGE_PREFIX, resolveConfigPath, shippedReference } from '../util/paths';
import { closest } from '../util/text';

/** One problem found while validating a config. */
export interface ConfigIssue {
  /** JSON pointer of the offending value (e.g. `/trainer/steps`). */
  readonly pointer: string;
  /** The same path for humans (e.g. `trainer.steps`). */
  readonly path: string;
  /** "expected X, got Y". */
  readonly message: string;
  /** What to do, when there is something specific to say. */
  readonly hint?: string;
  /** `path` for a path that names nothing (the `corlPath` keyword): a config with only such problems is CORL_ERR_CONFIG_PATH. */
  readonly problem?: 'path';
}

/**
 * Validates configs against the root schema composed with every registered plugin's options
 * schema. Plugin slots use the `corlPlugin` keyword: it turns a bare name into `{use, options}`,
 * looks the name up, applies the plugin's defaults and validates its options (nested slots work
 * the same way, to any depth). All problems are reported at once.
 */
export class ConfigValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(
    private readonly registry: PluginRegistry,
    private readonly baseDir: string,
  ) {
    this.ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: true, allowUnionTypes: true, verbose: true });
    addFormats(this.ajv);
    const self = this;
    this.ajv.addKeyword({
      keyword: 'corlPath',
      schemaType: 'string',
      errors: true,
      validate: function corlPath(want: 'dir' | 'file', data: unknown, _schema: unknown, cxt?: PathSite) {
        const errors = typeof data === 'string' ? checkPath(want, data, self.baseDir, cxt!) : [];
        (corlPath as typeof corlPath & { errors?: ErrorObject[] }).errors = errors;
        return errors.length === 0;
      },
    });
    this.ajv.addKeyword({
      keyword: 'corlPlugin',
      schemaType: 'string',
      modifying: true,
      errors: true,
      validate: function corlPlugin(kind: PluginKind, data: unknown, _schema: unknown, cxt?: SelectionSite) {
        const errors = self.validateSelection(kind, data, cxt!);
        (corlPlugin as typeof corlPlugin & { errors?: ErrorObject[] }).errors = errors;
        return errors.length === 0;
      },
    });
  }

  /** Compile (once) a schema with this validator's keywords. */
  compile(schema: JsonSchema): ValidateFunction {
    return this.ajv.compile(schema);
  }

  /** Validate `data` in place (defaults applied, selections normalized); returns every issue found. */
  validate(schema: JsonSchema | ValidateFunction, data: unknown): ConfigIssue[] {
    const fn = typeof schema === 'function' ? schema : this.compile(schema);
    if (fn(data)) return [];
    return dedupe((fn.errors ?? []).map((e) => toIssue(e, data)));
  }

  /** Validate a plugin's options (outside a config: test kits, `corl serve`); returns the defaulted options. */
  validateOptions(kind: PluginKind, name: string, options: unknown): ConfigIssue[] {
    const def = this.registry.get(kind, name);
    return this.validate(this.pluginValidator(def.manifest.kind, def.manifest.name, def.manifest.options), options);
  }

  private pluginValidator(kind: PluginKind, name: string, schema: JsonSchema): ValidateFunction {
    // names are unique per kind only (an extractor and an equivalence may both be "corl:math")
    const cacheKey = `${kind}\u0000${name}`;
    let fn = this.compiled.get(cacheKey);
    if (!fn) {
      try {
        fn = this.ajv.compile(schema);
      } catch (e) {
        throw new CorlError(
          'CORL_ERR_PLUGIN_INVALID',
          `plugin "${name}": expected a valid JSON Schema for its options, got ${(e as Error).message}`,
          { cause: e },
        );
      }
      this.compiled.set(cacheKey, fn);
    }
    return fn;
  }

  private validateSelection(kind: PluginKind, data: unknown, cxt: SelectionSite): ErrorObject[] {
    const at = cxt.instancePath;
    const fail = (pointer: string, message: string, params: Record<string, unknown> = {}): ErrorObject[] => [
      {
        instancePath: pointer,
        schemaPath: '#/corlPlugin',
        keyword: 'corlPlugin',
        params: { ...params, message },
        message,
      },
    ];
    let sel: { use: string; options: Record<string, unknown> };
    if (typeof data === 'string') {
      sel = { use: data, options: {} };
    } else if (data && typeof data === 'object' && !Array.isArray(data)) {
      const o = data as Record<string, unknown>;
      const extra = Object.keys(o).filter((k) => k !== 'use' && k !== 'options');
      if (extra.length)
        return fail(
          `${at}/${escape(extra[0]!)}`,
          `expected only "use" and "options" in ${article(kind)} selection, got "${extra[0]}"`,
          {
            hint: closest(extra[0]!, ['use', 'options'])
              ? `did you mean "${closest(extra[0]!, ['use', 'options'])}"?`
              : `put plugin settings inside "options"`,
          },
        );
      if (typeof o.use !== 'string' || !o.use)
        return fail(`${at}/use`, `expected "use" to name ${article(kind)} plugin, got ${show(o.use)}`, {
          names: this.registry.names(kind),
        });
      if (
        o.options !== undefined &&
        (typeof o.options !== 'object' || o.options === null || Array.isArray(o.options))
      ) {
        return fail(`${at}/options`, `expected "options" to be an object, got ${show(o.options)}`);
      }
      sel = { use: o.use, options: (o.options as Record<string, unknown>) ?? {} };
    } else {
      return fail(at, `expected ${article(kind)} plugin name or {"use": name, "options": {...}}, got ${show(data)}`, {
        names: this.registry.names(kind),
      });
    }
    if (isModulePath(sel.use)) {
      try {
        sel.use = loadSelectionModule(this.registry, kind, sel.use, this.baseDir);
      } catch (e) {
        if (isCorlError(e)) return fail(`${at}/use`, e.detail, { hint: e.hint });
        throw e;
      }
    }
    if (!this.registry.has(kind, sel.use)) {
      const names = this.registry.names(kind);
      const guess = closest(sel.use, names);
      const other = PLUGIN_KINDS.find((k) => this.registry.has(k, sel.use));
      return fail(
        `${at}${typeof data === 'string' ? '' : '/use'}`,
        `expected ${article(kind)} plugin, one of ${names.map((n) => `"${n}"`).join(', ') || '(none registered)'}; got "${sel.use}"`,
        {
          names,
          hint: other
            ? `"${sel.use}" is ${article(other)} plugin`
            : guess
              ? `did you mean "${guess}"?`
              : 'run `corl list` for every plugin, or add the module that provides it to "plugins"',
        },
      );
    }
    const def = this.registry.get(kind, sel.use);
    cxt.parentData[cxt.parentDataProperty] = sel;
    const fn = this.pluginValidator(def.manifest.kind, def.manifest.name, def.manifest.options);
    if (fn(sel.options)) return [];
    // a path inside an agent's options is named with the agent (the options were validated on their own)
    const who = agentOf(at, cxt.rootData);
    return (fn.errors ?? []).map((e) => {
      const named = e.keyword === 'corlPath' && who && !(e.params as { named?: boolean }).named;
      const message = named ? `${who}${(e.params as { message: string }).message}` : undefined;
      return {
        ...e,
        instancePath: `${at}/options${e.instancePath}`,
        params: { ...e.params, plugin: sel.use, ...(message ? { message, named: true } : {}) },
      };
    });
  }
}

/** "agent 1 (beta): " for a pointer into `agents[1]` of a config, else "". */
function agentOf(pointer: string, root: unknown): string {
  const index = /^\/agents\/(\d+)(\/|$)/.exec(pointer)?.[1];
  if (index === undefined) return '';
  const named = (root as { agents?: { name?: unknown }[] } | null)?.agents?.[Number(index)]?.name;
  return `agent ${index}${typeof named === 'string' ? ` (${named})` : ''}: `;
}

/** Where ajv found a path: its pointer and the whole config (for the agent's name). */
interface PathSite {
  instancePath: string;
  rootData: unknown;
}

/**
 * The `corlPath` keyword: the string names an existing folder (`dir`) or file (`file`), relative to
 * the config's folder or as a package reference. The error names the agent whose options hold it
 * and the resolved path; every such path of a config is checked, so all are reported at once.
 */
function checkPath(want: 'dir' | 'file', ref: string, baseDir: string, site: PathSite): ErrorObject[] {
  const who = agentOf(site.instancePath, site.rootData);
  const fail = (message: string, hint?: string): ErrorObject[] => [
    {
      instancePath: site.instancePath,
      schemaPath: '#/corlPath',
      keyword: 'corlPath',
      params: { message: who + message, hint, problem: 'path' },
      message: who + message,
    },
  ];
  let resolved: string;
  try {
    resolved = resolveConfigPath(ref, baseDir);
  } catch (e) {
    if (isCorlError(e)) return fail(e.detail, e.hint);
    throw e;
  }
  const stat = fs.statSync(resolved, { throwIfNoEntry: false });
  if (stat && (want === 'dir' ? stat.isDirectory() : stat.isFile())) return [];
  const shipped = ref.startsWith(PACKAGE_PREFIX) ? undefined : shippedReference(ref);
  return fail(
    `expected ${want === 'dir' ? 'a folder' : 'a file'} at ${resolved}, got ${stat ? (stat.isDirectory() ? 'a folder' : 'a file') : 'nothing'}`,
    shipped
      ? `corl ships this model: write "${shipped}", which resolves wherever corl is installed`
      : ref.startsWith(PACKAGE_PREFIX)
        ? `a package reference names a path inside the installed package; corl's models are in ${corlRoot()}/models`
        : `relative paths are resolved from the config's folder, ${baseDir}`,
  );
}

function isModulePath(use: string): boolean {
  return use.startsWith('./') || use.startsWith('../') || use.startsWith('/') || /\.(c|m)?js$/.test(use);
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** JSON pointer → `a.b[0].c`. */
export function pointerToPath(pointer: string): string {
  if (!pointer) return '(root)';
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}

function valueAt(data: unknown, pointer: string): unknown {
  let v: unknown = data;
  for (const seg of pointer.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  const s = JSON.stringify(v);
  return `${typeof v} ${s.length > 60 ? s.slice(0, 57) + '...' : s}`;
}

/** Where ajv found a selection: its pointer, and the parent object the resolved selection replaces it in. */
interface SelectionSite {
  instancePath: string;
  rootData: unknown;
  parentData: Record<string | number, unknown>;
  parentDataProperty: string | number;
}

/** The ajv error params toIssue reads: each keyword's own (\`corlPlugin\` sets message, hint and plugin). */
interface IssueParams {
  readonly message: string;
  readonly hint?: string;
  readonly plugin?: string;
  readonly problem?: 'path';
  readonly missingProperty: string;
  readonly additionalProperty: string;
  readonly type: string | string[];
  readonly allowedValues: unknown[];
  readonly allowedValue: unknown;
  readonly comparison: string;
  readonly limit: number;
  readonly pattern: string;
}

/** ajv's errors for `data` as config issues ("expected X, got Y" at a JSON pointer), deduplicated: for other JSON files corl validates (plans). */
export function schemaIssues(errors: readonly ErrorObject[], data: unknown): ConfigIssue[] {
  return dedupe(errors.map((e) => toIssue(e, data)));
}

function toIssue(e: ErrorObject, data: unknown): ConfigIssue {
  const p = e.params as IssueParams;
  const actual = valueAt(data, e.instancePath);
  let pointer = e.instancePath;
  let message: string;
  let hint: string | undefined = p.hint;
  switch (e.keyword) {
    case 'corlPlugin':
    case 'corlPath':
      message = p.message;
      break;
    case 'additionalProperties': {
      pointer = `${e.instancePath}/${escape(p.additionalProperty)}`;
      const allowed = Object.keys((e.parentSchema as JsonSchema | undefined)?.properties ?? {});
      message = `unknown field "${p.additionalProperty}"; expected one of ${allowed.map((a) => `"${a}"`).join(', ') || '(no fields)'}`;
      const guess = closest(p.additionalProperty, allowed);
      if (guess) hint = `did you mean "${guess}"?`;
      break;
    }
    case 'required':
      pointer = `${e.instancePath}/${escape(p.missingProperty)}`;
      message = `expected field "${p.missingProperty}", got nothing`;
      break;
    case 'type':
      message = `expected ${Array.isArray(p.type) ? p.type.join(' or ') : p.type}, got ${show(actual)}`;
      break;
    case 'enum':
      message = `expected one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${show(actual)}`;
      break;
    case 'const':
      message = `expected ${JSON.stringify(p.allowedValue)}, got ${show(actual)}`;
      break;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      message = `expected a number ${p.comparison} ${p.limit}, got ${show(actual)}`;
      break;
    case 'minItems':
    case 'maxItems':
      message = `expected ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${p.limit} item(s), got ${Array.isArray(actual) ? actual.length : show(actual)}`;
      break;
    case 'minLength':
    case 'maxLength':
      message = `expected a string of ${e.keyword === 'minLength' ? 'at least' : 'at most'} ${p.limit} character(s), got ${show(actual)}`;
      break;
    case 'pattern':
      message = `expected a string matching ${p.pattern}, got ${show(actual)}`;
      break;
    default:
      message = `expected a value that ${e.message ?? 'matches the schema'}, got ${show(actual)}`;
  }
  if (p.plugin && !hint) hint = `see the options of "${p.plugin}" with \`corl list\``;
  return { pointer, path: pointerToPath(pointer), message, hint, ...(p.problem ? { problem: p.problem } : {}) };
}

function dedupe(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  // anyOf/oneOf branches repeat themselves; keep the first of each (pointer, message).
  return issues.filter((i) => {
    const k = `${i.pointer}\u0000${i.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function article(kind: string): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}
