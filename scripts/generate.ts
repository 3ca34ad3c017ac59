// Generates the files that are derived from code: the published config schema, the error reference,
// the config reference and the other references, and the copies of the Python client inlined in each
// trainer adapter (scripts/inline-client.ts). `npm run gen` writes them; test/scripts/generate.test.ts fails when a
// committed copy is stale.
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JsonSchema } from '../core/contracts/plugin';
import { PLUGIN_KINDS } from '../core/contracts/plugin';
import { publishedSchema } from '../core/config/published-schema';
import { rootSchema } from '../core/config/root-schema';
import { serveRootSchema } from '../core/config/serve-schema';
import { ERROR_CODES } from '../core/errors';
import { createRunContainer } from '../core/registry/container';
import { installBuiltins } from '../entry/builtins';
import { PLUGIN_REGISTRY } from '../core/registry/registry';
import { apiReference } from './api-doc';
import { cliReference } from './cli-doc';
import { contractsReference } from './contracts-doc';
import { inlinedAdapters } from './inline-client';

/** The repository root (scripts compile to dist/scripts). */
export const ROOT = path.resolve(__dirname, '..', '..');

/** Every generated file: path relative to the repository root → content. */
export async function generatedFiles(): Promise<Record<string, string>> {
  installBuiltins();
  const container = await createRunContainer();
  const registry = container.resolve(PLUGIN_REGISTRY);
  return {
    'schema/corl.schema.json': JSON.stringify(publishedSchema(registry), null, 2) + '\n',
    'schema/corl-serve.schema.json': JSON.stringify(publishedSchema(registry, serveRootSchema()), null, 2) + '\n',
    'docs/reference/errors.md': errorsReference(),
    'docs/reference/config.md': configReference(registry.all().map((d) => d.manifest)),
    'docs/reference/contracts.md': contractsReference(ROOT),
    'docs/reference/cli.md': cliReference(),
    'docs/reference/api.md': apiReference(ROOT),
    ...inlinedAdapters(ROOT),
  };
}

function errorsReference(): string {
  const out = [
    '# Error codes',
    '',
    '<!-- Generated from core/errors/codes/*.ts by `npm run gen`; do not edit by hand. -->',
    '',
    'Every error corl raises on purpose carries a stable code `CORL_ERR_<AREA>_<PROBLEM>` and a message',
    'of the form "expected X, got Y", followed by what to do. The CLI exits with status 1 on these (2 for',
    'usage errors), `corl serve` answers them as JSON with a 4xx status.',
    '',
  ];
  const areas = new Map<string, string[]>();
  for (const code of Object.keys(ERROR_CODES).sort()) {
    const area = code.split('_')[2]!;
    (areas.get(area) ?? areas.set(area, []).get(area)!).push(code);
  }
  for (const [area, codes] of areas) {
    out.push(`## ${area}`, '');
    for (const code of codes) {
      const spec = ERROR_CODES[code as keyof typeof ERROR_CODES];
      out.push(`### ${code}`, '', `**Cause.** ${spec.cause}`, '', `**Fix.** ${capitalize(spec.fix)}.`, '');
    }
  }
  return out.join('\n');
}

function configReference(
  manifests: readonly {
    name: string;
    kind: string;
    description: string;
    options: JsonSchema;
    readsGroundTruth?: unknown;
  }[],
): string {
  const out = [
    '# Config reference',
    '',
    '<!-- Generated from core/config/root-schema.ts and the plugin manifests by `npm run gen`; do not edit by hand. -->',
    '',
    'A config is one JSON file (comments and trailing commas allowed). Point `$schema` at',
    '`schema/corl.schema.json` for completion in editors. Plugin slots take a name (`"corl:ring"`) or',
    '`{"use": name, "options": {...}}`; `use` may also be a module path relative to the config.',
    '',
    '## Top level',
    '',
  ];
  out.push(...fieldsTable(rootSchema(), ''));
  out.push('', '## Plugins', '');
  for (const kind of PLUGIN_KINDS) {
    const mine = manifests.filter((m) => m.kind === kind);
    if (!mine.length) continue;
    out.push(`### ${kind}`, '');
    for (const m of mine) {
      const gt =
        m.readsGroundTruth === true
          ? ' *Reads ground truth.*'
          : typeof m.readsGroundTruth === 'function'
            ? ' *Reads ground truth when a part does.*'
            : '';
      out.push(`#### \`${m.name}\``, '', `${m.description}.${gt}`, '');
      const rows = fieldsTable(m.options, '');
      out.push(...(rows.length > 2 ? rows : ['No options.']), '');
    }
  }
  return out.join('\n');
}

function fieldsTable(schema: JsonSchema, prefix: string): string[] {
  const rows: string[] = [];
  const walk = (s: JsonSchema, p: string): void => {
    const props = (s.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((s.required as string[] | undefined) ?? []);
    for (const [k, v] of Object.entries(props)) {
      if (k === '$schema') continue;
      const name = p ? `${p}.${k}` : k;
      const def =
        v.default !== undefined && typeof v.default !== 'object'
          ? `\`${JSON.stringify(v.default)}\``
          : Array.isArray(v.default)
            ? `\`${JSON.stringify(v.default)}\``
            : required.has(k)
              ? 'required'
              : '';
      rows.push(`| \`${name}\` | ${typeName(v)} | ${def} | ${String(v.description ?? '').replace(/\|/g, '\\|')} |`);
      if (v.type === 'object' && v.properties) walk(v, name);
      if (v.type === 'array' && (v.items as JsonSchema | undefined)?.properties)
        walk(v.items as JsonSchema, `${name}[]`);
    }
  };
  walk(schema, prefix);
  return rows.length ? ['| field | type | default | description |', '| --- | --- | --- | --- |', ...rows] : [];
}

function typeName(p: JsonSchema): string {
  if (Array.isArray(p.enum)) return p.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (p.corlPlugin) return `${p.corlPlugin as string} plugin`;
  if (Array.isArray(p.anyOf)) return (p.anyOf as JsonSchema[]).map(typeName).join(' \\| ');
  if (p.type === 'array') return `${typeName((p.items as JsonSchema) ?? {})}[]`;
  return String(p.type ?? 'any');
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

async function main(): Promise<void> {
  const files = await generatedFiles();
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(ROOT, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    if (old !== content) {
      fs.writeFileSync(file, content);
      process.stdout.write(`wrote ${rel}\n`);
    }
  }
}

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(String(e?.stack ?? e) + '\n');
    process.exitCode = 1;
  });
}
