import * as path from 'node:path';
import type { PluginKind } from '../contracts/plugin';
import { CorlError } from '../errors';

/** The templates `create-corl-plugin` has, in the order it lists them: one per plugin kind, and a reward written in Python. */
export const TEMPLATE_KINDS = [
  'reward',
  'python-reward',
  'topology',
  'diversity',
  'extractor',
  'policy',
  'task',
  'interaction',
  'judge',
] as const;

/** A kind with a template. */
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

/** The plugin kind a template makes (`python-reward` makes a reward). */
export function templatePluginKind(kind: TemplateKind): PluginKind {
  return kind === 'python-reward' ? 'reward' : kind;
}

/** What every template calls itself; the scaffolder replaces these literal strings (no templating engine). */
export function templateTokens(kind: TemplateKind): { packageName: string; pluginName: string; identifier: string } {
  return {
    packageName: `example-corl-${kind}`,
    pluginName: `example:${kind}`,
    identifier: `example${kind.split('-').map(capitalize).join('')}`,
  };
}

const PLUGIN_NAME = /^[a-z0-9][a-z0-9-]*:[a-z0-9][a-z0-9._-]*$/;
// npm's rules for new package names: lowercase, URL-safe, no leading dot or underscore, 214 characters at most.
const PACKAGE_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/** Check a kind; the error lists the kinds there are templates for. */
export function checkKind(kind: string | undefined): TemplateKind {
  if (kind === undefined || !(TEMPLATE_KINDS as readonly string[]).includes(kind)) {
    throw new CorlError(
      'CORL_ERR_SCAFFOLD_KIND',
      `expected --kind to be one of ${TEMPLATE_KINDS.join(', ')}; got ${kind === undefined ? 'none' : JSON.stringify(kind)}`,
      {
        where: '--kind',
        data: { kinds: [...TEMPLATE_KINDS] },
      },
    );
  }
  return kind as TemplateKind;
}

/** Check a plugin name: `scope:name`, lowercase, and not in the `corl:` scope that built-ins use. */
export function checkPluginName(name: string): string {
  if (!PLUGIN_NAME.test(name)) {
    throw new CorlError(
      'CORL_ERR_SCAFFOLD_NAME',
      `expected a plugin name "scope:name" of lowercase letters, digits, "-", "." and "_" (e.g. "lab:length-penalty"), got ${JSON.stringify(name)}`,
      { where: '--name' },
    );
  }
  if (name.startsWith('corl:')) {
    throw new CorlError(
      'CORL_ERR_SCAFFOLD_NAME',
      `expected a scope of your own (the "corl:" scope is reserved for built-in plugins), got ${JSON.stringify(name)}`,
      {
        where: '--name',
        hint: `use e.g. "lab:${name.slice(5)}"`,
      },
    );
  }
  return name;
}

/** Check an npm package name. */
export function checkPackageName(name: string): string {
  if (name.length > 214 || !PACKAGE_NAME.test(name)) {
    throw new CorlError(
      'CORL_ERR_SCAFFOLD_NAME',
      `expected an npm package name (lowercase letters, digits, "-", ".", "_", "~", optionally @scope/), got ${JSON.stringify(name)}`,
      { where: '--package' },
    );
  }
  return name;
}

/** The package name a folder suggests (its base name, lowercased and made URL-safe), or undefined when nothing usable is left. */
export function packageNameFor(dir: string): string | undefined {
  const base = path
    .basename(path.resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9-._~]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return base && PACKAGE_NAME.test(base) ? base : undefined;
}

/** The plugin name a package name suggests: `local:<name without scope>`. */
export function pluginNameFor(packageName: string): string {
  const bare = packageName
    .replace(/^@[^/]+\//, '')
    .replace(/^[^a-z0-9]+/, '')
    .replace(/[^a-z0-9._-]/g, '-');
  return `local:${bare || 'plugin'}`;
}

/** The exported identifier of a plugin: the camel-cased name after the scope plus the kind, e.g. `lengthPenaltyReward` (`lab:vote-reward` gives `voteReward`). */
export function identifierFor(pluginName: string, kind: TemplateKind): string {
  const words = pluginName
    .slice(pluginName.indexOf(':') + 1)
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let id = words.map((w, i) => (i === 0 ? w : capitalize(w))).join('');
  if (!/^[a-z]/.test(id)) id = `plugin${capitalize(id)}`;
  const made = templatePluginKind(kind);
  return id === made || id.endsWith(capitalize(made)) ? id : `${id}${capitalize(made)}`;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
