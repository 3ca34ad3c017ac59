import type { Command } from 'commander';
import * as fs from 'node:fs';
import type { JsonSchema, PluginKind } from '../../contracts/plugin';
import { PLUGIN_KINDS } from '../../contracts/plugin';
import { CorlError } from '../../errors';
import { loadConfig } from '../../config/load';
import { createRunContainer } from '../../registry/container';
import { loadPluginModules } from '../../registry/load';
import { PLUGIN_REGISTRY, type PluginRegistry } from '../../registry/registry';
import { pickConfig } from '../config-arg';

interface ListFlags {
  config?: string;
  plugin?: string[];
  json?: boolean;
}

/** `corl list`: every plugin by kind, with its description and options. */
export function listCommand(program: Command): void {
  program
    .command('list')
    .description('list plugins by kind with one-line descriptions and their options')
    .argument('[kind]', `only this kind: ${PLUGIN_KINDS.join(', ')}`)
    .argument('[config]', 'the same as -c <file> (alone, in place of the kind, too)')
    .option('-c, --config <file>', 'also load the plugin modules a config lists')
    .option('--plugin <module...>', 'also load these plugin modules')
    .option('--json', 'machine-readable output (manifests with option schemas)')
    .action(async (kindArg: string | undefined, config: string | undefined, flags: ListFlags) => {
      // `corl list <config>`: a lone argument that is no kind but names a JSON file is the config
      const lone = kindArg !== undefined && config === undefined && !PLUGIN_KINDS.includes(kindArg as PluginKind);
      const isConfig = lone && (/\.jsonc?$/i.test(kindArg) || fs.existsSync(kindArg));
      const kind = isConfig ? undefined : kindArg;
      flags.config = pickConfig(isConfig ? kindArg : config, flags.config, 'corl list');
      if (kind !== undefined && !PLUGIN_KINDS.includes(kind as PluginKind)) {
        throw new CorlError('CORL_ERR_CLI_USAGE', `expected a kind, one of ${PLUGIN_KINDS.join(', ')}; got "${kind}"`, {
          where: 'kind',
        });
      }
      let registry: PluginRegistry;
      if (flags.config) {
        registry = (await loadConfig(flags.config)).registry;
      } else {
        const container = await createRunContainer();
        registry = container.resolve(PLUGIN_REGISTRY);
        await loadPluginModules(registry, flags.plugin ?? [], process.cwd());
      }
      const defs = registry.all().filter((d) => !kind || d.manifest.kind === kind);
      if (flags.json) {
        process.stdout.write(
          JSON.stringify(
            defs.map(({ manifest: m }) => ({
              ...m,
              readsGroundTruth:
                m.kind !== 'reward'
                  ? false
                  : typeof m.readsGroundTruth === 'function'
                    ? 'depends on options'
                    : (m.readsGroundTruth ?? false),
              tokenStats: undefined,
            })),
            null,
            2,
          ) + '\n',
        );
        return;
      }
      process.stdout.write(renderList(defs.map((d) => d.manifest)));
    });
}

/** Human-readable listing: kind headings, then each plugin and its options with types and defaults. */
export function renderList(
  manifests: readonly {
    name: string;
    kind: PluginKind;
    description: string;
    options: JsonSchema;
    readsGroundTruth?: unknown;
  }[],
): string {
  const lines: string[] = [];
  for (const kind of PLUGIN_KINDS) {
    const mine = manifests.filter((m) => m.kind === kind);
    if (!mine.length) continue;
    lines.push(`${kind}:`);
    for (const m of mine) {
      const gt =
        m.readsGroundTruth === true
          ? ' [reads ground truth]'
          : typeof m.readsGroundTruth === 'function'
            ? ' [reads ground truth if a part does]'
            : '';
      lines.push(`  ${m.name}${gt}  ${m.description}`);
      const props = (m.options.properties ?? {}) as Record<string, Record<string, unknown>>;
      const required = new Set((m.options.required as string[] | undefined) ?? []);
      for (const [key, p] of Object.entries(props)) {
        const def =
          p.default !== undefined ? ` = ${JSON.stringify(p.default)}` : required.has(key) ? ' (required)' : '';
        lines.push(`      ${key}: ${typeName(p)}${def}${p.description ? `  ${p.description as string}` : ''}`);
      }
    }
    lines.push('');
  }
  return lines.join('\n');
}

function typeName(p: Record<string, unknown>): string {
  if (Array.isArray(p.enum)) return p.enum.map((v) => JSON.stringify(v)).join('|');
  if (p.corlPlugin) return `${p.corlPlugin as string} plugin`;
  if (Array.isArray(p.anyOf)) return (p.anyOf as Record<string, unknown>[]).map(typeName).join('|');
  if (p.type === 'array') return `${typeName((p.items as Record<string, unknown>) ?? {})}[]`;
  if (Array.isArray(p.type)) return p.type.join('|');
  return (p.type as string) ?? 'any';
}
