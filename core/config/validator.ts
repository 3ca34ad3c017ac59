import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { PLUGIN_KINDS, type JsonSchema, type PluginKind } from '../contracts/plugin';
import { CorlError, isCorlError } from '../errors';
import { loadSelectionModule } from '../registry/load';
import type { PluginRegistry } from '../registry/registry';
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
    return (fn.errors ?? []).map((e) => ({
      ...e,
      instancePath: `${at}/options${e.instancePath}`,
      params: { ...e.params, plugin: sel.use },
    }));
  }
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
  parentData: Record<string | number, unknown>;
  parentDataProperty: string | number;
}

/** The ajv error params toIssue reads: each keyword's own (\`corlPlugin\` sets message, hint and plugin). */
interface IssueParams {
  readonly message: string;
  readonly hint?: string;
  readonly plugin?: string;
  readonly missingProperty: string;
  readonly additionalProperty: string;
  readonly type: string | string[];
  readonly allowedValues: unknown[];
  readonly allowedValue: unknown;
  readonly comparison: string;
  readonly limit: number;
  readonly pattern: string;
}

function toIssue(e: ErrorObject, data: unknown): ConfigIssue {
  const p = e.params as IssueParams;
  const actual = valueAt(data, e.instancePath);
  let pointer = e.instancePath;
  let message: string;
  let hint: string | undefined = p.hint;
  switch (e.keyword) {
    case 'corlPlugin':
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
  return { pointer, path: pointerToPath(pointer), message, hint };
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
