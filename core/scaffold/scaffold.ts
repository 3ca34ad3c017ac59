import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../errors';
import {
  callerNpmVersion,
  corlDependency,
  corlInstallAt,
  needsNpmrc,
  NPMRC,
  type CorlChoice,
  type CorlInstall,
} from '../util/npm';
import { CORL_VERSION } from '../version';

export {
  callerNpmVersion,
  corlDependency,
  installedFrom,
  needsNpmrc,
  NPM_ALLOW_SCRIPTS,
  NPMRC,
  parseCorlChoice,
  type CorlChoice,
  type CorlInstall,
} from '../util/npm';
import {
  checkKind,
  checkPackageName,
  checkPluginName,
  identifierFor,
  templateTokens,
  type TemplateKind,
} from './names';

/** How the generated package gets its build and test tools. */
export type Toolchain = 'link' | 'registry';

/** What {@link scaffold} needs; the CLI fills it from flags and prompts. */
export interface ScaffoldOptions {
  /** Target folder (created if missing). */
  readonly dir: string;
  readonly kind: TemplateKind;
  /** Plugin name, `scope:name`. */
  readonly name: string;
  /** npm package name of the generated package. */
  readonly packageName: string;
  /** One-line description (package.json and the manifest keep the template's when absent). */
  readonly description?: string;
  /** Write into a non-empty folder. */
  readonly force?: boolean;
  /**
   * How the package depends on corl, decided by {@link corlDependency} as for `corl init`. Default:
   * where the scaffolding corl came from (its checkout or the tarball npm installed it from, as
   * `file:`, which works offline; `^<version>` when it came from the registry). `file`: this corl's
   * files; `registry`: `^<version>`; `{ tarball }`: `file:<that tarball>`; `{ spec }`: as given.
   */
  readonly corl?: CorlChoice;
  /**
   * `link`: the build and test tools are `file:` links to the copies corl itself was built with (a
   * checkout with its dependencies installed; nothing is downloaded, versions match corl's exactly).
   * `registry`: the template's semver ranges, fetched by npm. Default: `link` when possible.
   */
  readonly toolchain?: Toolchain;
  /** The corl installation (default: the one this code belongs to). */
  readonly install?: CorlInstall;
  /**
   * Version of the npm that will install the package (default: the npm running this process, from
   * its user agent; unknown when plain `node` runs the scaffolder). Decides whether `.npmrc` is written.
   */
  readonly npmVersion?: string;
}

/** What was generated. */
export interface ScaffoldResult {
  readonly dir: string;
  /** Files written, relative to `dir`, sorted. */
  readonly files: readonly string[];
  readonly toolchain: Toolchain;
  /** Tools that could not be linked and kept their registry range (link mode only). */
  readonly unlinked: readonly string[];
  /** The commands to run next. */
  readonly next: readonly string[];
  /** The dependency spec written for corl. */
  readonly corlSpec: string;
  /** Whether `.npmrc` (onnxruntime-node-install=skip) was written, for an npm without `allowScripts`. */
  readonly npmrc: boolean;
}

/** The corl installation this module belongs to (dist/core/scaffold → the package root). */
export function thisInstall(): CorlInstall {
  return corlInstallAt(path.resolve(__dirname, '..', '..', '..'), CORL_VERSION);
}

/** Folder of the template of `kind` in an installation. */
export function templateDir(install: CorlInstall, kind: TemplateKind): string {
  return path.join(install.root, 'templates', kind);
}

// Files are renamed on the way out: npm drops .gitignore from published packages, so templates ship _gitignore.
const RENAMES: Readonly<Record<string, string>> = { _gitignore: '.gitignore', _npmrc: '.npmrc' };
const SKIP = new Set(['node_modules', 'dist', 'runs', 'package-lock.json']);
const TEXT = /\.(ts|js|json|jsonl|md|txt|yml|yaml)$|^_gitignore$|^_npmrc$|^\.mocharc\.json$/;

function listFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const r = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(dir, r));
    else if (entry.isFile()) out.push(r);
  }
  return out.sort();
}

/** The devDependency spec of each tool in link mode: a `file:` link to the copy corl resolves. */
export function linkedTools(
  install: CorlInstall,
  tools: readonly string[],
): { specs: Record<string, string>; missing: string[] } {
  const specs: Record<string, string> = {};
  const missing: string[] = [];
  for (const tool of tools) {
    try {
      const pkg = require.resolve(`${tool}/package.json`, { paths: [install.root] });
      specs[tool] = `file:${fs.realpathSync(path.dirname(pkg))}`;
    } catch {
      missing.push(tool);
    }
  }
  return { specs, missing };
}

/** Replace every occurrence of the template's names by the plugin's. */
export function rewriteNames(text: string, kind: TemplateKind, o: { name: string; packageName: string }): string {
  const t = templateTokens(kind);
  return text
    .split(t.packageName)
    .join(o.packageName)
    .split(t.pluginName)
    .join(o.name)
    .split(t.identifier)
    .join(identifierFor(o.name, kind));
}

function checkTarget(dir: string, force: boolean): void {
  if (!fs.existsSync(dir)) return;
  const stat = fs.statSync(dir);
  if (!stat.isDirectory())
    throw new CorlError('CORL_ERR_SCAFFOLD_TARGET', `expected a folder to create the plugin in, got a file at ${dir}`, {
      where: dir,
      hint: 'pick another path',
    });
  const entries = fs.readdirSync(dir);
  if (entries.length > 0 && !force) {
    throw new CorlError(
      'CORL_ERR_SCAFFOLD_TARGET',
      `expected an empty or new folder, got ${dir} with ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', ...' : ''})`,
      { where: dir },
    );
  }
}

/**
 * Generate a plugin package: copy `templates/<kind>/` (renaming `_gitignore` and friends), replace
 * the template's package name, plugin name and identifier by the given ones, and point its
 * package.json at this corl and a toolchain. Nothing is installed.
 */
export function scaffold(o: ScaffoldOptions): ScaffoldResult {
  const kind = checkKind(o.kind);
  checkPluginName(o.name);
  checkPackageName(o.packageName);
  const install = o.install ?? thisInstall();
  const dir = path.resolve(o.dir);
  checkTarget(dir, o.force === true);
  const from = templateDir(install, kind);
  if (!fs.existsSync(path.join(from, 'package.json'))) {
    throw new CorlError(
      'CORL_ERR_SCAFFOLD_TEMPLATE',
      `expected the ${kind} template at ${from}, got ${fs.existsSync(from) ? 'a folder without package.json' : 'nothing'}`,
      { where: from },
    );
  }
  const sources = listFiles(from);
  const pkg = JSON.parse(fs.readFileSync(path.join(from, 'package.json'), 'utf8')) as {
    [field: string]: unknown;
    name?: string;
    description?: string;
    devDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const tools = Object.keys(pkg.devDependencies ?? {}).filter((d) => d !== 'corl');
  const wanted: Toolchain = o.toolchain ?? (install.checkout ? 'link' : 'registry');
  const linked = wanted === 'link' ? linkedTools(install, tools) : { specs: {}, missing: [] };
  const toolchain: Toolchain = wanted === 'link' && Object.keys(linked.specs).length > 0 ? 'link' : 'registry';

  const corlSpec = corlDependency(install, o.corl);

  const written: string[] = [];
  fs.mkdirSync(dir, { recursive: true });
  for (const rel of sources) {
    const base = path.posix.basename(rel);
    const outRel = path.posix.join(path.posix.dirname(rel), RENAMES[base] ?? base).replace(/^\.\//, '');
    const target = path.join(dir, outRel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (rel === 'package.json') {
      pkg.name = o.packageName;
      if (o.description) pkg.description = o.description;
      pkg.devDependencies = { ...pkg.devDependencies, corl: corlSpec };
      if (toolchain === 'link') Object.assign(pkg.devDependencies, linked.specs);
      if (pkg.peerDependencies?.corl !== undefined) pkg.peerDependencies.corl = `^${install.version}`;
      fs.writeFileSync(target, JSON.stringify(pkg, null, 2) + '\n');
    } else if (TEXT.test(base)) {
      let text = rewriteNames(fs.readFileSync(path.join(from, rel), 'utf8'), kind, o);
      if (o.description && /^src\/[^/]+\.ts$/.test(rel)) text = replaceDescription(text, o.description);
      fs.writeFileSync(target, text);
    } else {
      fs.copyFileSync(path.join(from, rel), target);
    }
    written.push(outRel);
  }
  const npmrc = needsNpmrc('npmVersion' in o ? o.npmVersion : callerNpmVersion());
  if (npmrc && !written.includes('.npmrc')) {
    fs.writeFileSync(path.join(dir, '.npmrc'), NPMRC);
    written.push('.npmrc');
  }
  const shown = path.relative(process.cwd(), dir) || '.';
  return {
    dir,
    files: written.sort(),
    toolchain,
    unlinked: toolchain === 'link' ? linked.missing : [],
    next: [`cd ${/\s/.test(shown) ? JSON.stringify(shown) : shown}`, 'npm install', 'npm test', 'npm run train'],
    corlSpec,
    npmrc,
  };
}

/**
 * Put the description into the manifest's `description:` line: the first one after `manifest: {`, so
 * that the options schema's descriptions above it stay as they are. Single- or double-quoted.
 */
function replaceDescription(text: string, description: string): string {
  const quoted = `'${description.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, ' ')}'`;
  // a manifest, or the definition of a Python reward (definePythonReward({ name, description, ... }))
  const at = ['manifest: {', 'definePythonReward({'].map((m) => text.indexOf(m)).find((i) => i >= 0) ?? -1;
  if (at < 0) return text;
  const tail = text
    .slice(at)
    .replace(/(\n\s*description: )(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")/, (_m, head: string) => `${head}${quoted}`);
  return text.slice(0, at) + tail;
}
