import type { JsonSchema, PluginKind } from '../contracts/plugin';
import { PLUGIN_KINDS } from '../contracts/plugin';
import type { PluginRegistry } from '../registry/registry';
import { PACKAGE_PREFIX, PACKAGE_REF_PATTERN } from '../util/paths';
import { rootSchema } from './root-schema';

/**
 * The schema editors use (schema/corl.schema.json): the root schema with every `corlPlugin` slot
 * expanded into "a registered name, or {use, options} whose options match that plugin's schema".
 * Generated from the registry by `npm run gen`; a test fails when the file is stale. With the serve
 * root schema it is schema/corl-serve.schema.json, for `corl serve` configs.
 */
export function publishedSchema(registry: PluginRegistry, root: JsonSchema = rootSchema()): JsonSchema {
  const defs: Record<string, unknown> = {};
  for (const kind of PLUGIN_KINDS) {
    const plugins = registry.all().filter((d) => d.manifest.kind === kind);
    const names = plugins.map((d) => d.manifest.name);
    for (const d of plugins)
      defs[`options:${d.manifest.name}`] = expand({ description: d.manifest.description, ...d.manifest.options });
    const nameSchema = names.length
      ? {
          anyOf: [
            { enum: names, description: 'a registered plugin' },
            { type: 'string', description: 'a plugin from a module in "plugins", or a module path' },
          ],
        }
      : { type: 'string' };
    defs[`selection:${kind}`] = {
      anyOf: [
        nameSchema,
        {
          type: 'object',
          required: ['use'],
          properties: { use: nameSchema, options: { type: 'object' } },
          additionalProperties: false,
          ...(plugins.length
            ? {
                allOf: plugins.map((d) => ({
                  if: { properties: { use: { const: d.manifest.name } } },
                  then: { properties: { options: { $ref: `#/$defs/options:${d.manifest.name}` } } },
                })),
              }
            : {}),
        },
      ],
    };
  }
  const expanded = expand(root) as Record<string, unknown>;
  return { ...expanded, $defs: defs };
}

function expand(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(expand);
  if (!schema || typeof schema !== 'object') return schema;
  const o = schema as Record<string, unknown>;
  if (typeof o.corlPlugin === 'string') {
    const { corlPlugin, ...rest } = o;
    return { ...rest, $ref: `#/$defs/selection:${corlPlugin as PluginKind}` };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    // a path checked at validation: for editors, a plain path or a well-formed package reference
    if (k === 'corlPath') out.pattern = `^(?!${PACKAGE_PREFIX})|${PACKAGE_REF_PATTERN}`;
    else out[k] = expand(v);
  }
  return out;
}
