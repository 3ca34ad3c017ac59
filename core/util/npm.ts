// What installing corl with npm needs to know: which npm skips onnxruntime-node's CUDA download by
// itself ("allowScripts"), the .npmrc line for one that does not, where an installed corl came from,
// and the one decision of how a new project depends on corl (corlDependency). Used by
// create-corl-plugin and \`corl init\`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as semver from 'semver';
import { CorlError } from '../errors';

/**
 * The first npm seen to honour the template's `"allowScripts": { "onnxruntime-node": false }`: it
 * skips that package's postinstall (a CUDA download from NuGet on Linux x64) without any `.npmrc`.
 * Checked with npm 11.19.1; older releases ignore the field and run the script.
 */
export const NPM_ALLOW_SCRIPTS = '11.19.1';

/** The `.npmrc` for an npm that ignores `allowScripts`; onnxruntime-node's install script reads the setting. */
export const NPMRC = [
  '# onnxruntime-node, a dependency of corl, downloads CUDA libraries from NuGet after it installs on Linux',
  '# x64 unless told to skip; corl uses the CPU build inside the package. npm >= 11.19 skips that script',
  '# through "allowScripts" in package.json instead, and warns "Unknown project config" about this line:',
  '# delete this file once everyone installing the package has such an npm.',
  'onnxruntime-node-install=skip',
  '',
].join('\n');

/** The npm release running this process, read from npm's user agent (`npm/11.19.1 node/v20.20.2 ...`). */
export function callerNpmVersion(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return /^npm\/(\d+\.\d+\.\d+)/.exec(env.npm_config_user_agent ?? '')?.[1];
}

/** Whether a package installed by this npm needs the `.npmrc` skip (unknown npm: yes). */
export function needsNpmrc(npmVersion: string | undefined): boolean {
  return npmVersion === undefined || semver.valid(npmVersion) === null || semver.lt(npmVersion, NPM_ALLOW_SCRIPTS);
}

/**
 * The local tarball a package under node_modules was installed from, read from npm's lockfiles: the
 * hidden one (`<project>/node_modules/.package-lock.json`, which npm also writes for `npx` and global
 * installs) or the project's `package-lock.json`, whose `packages["node_modules/<name>"].resolved` is
 * `file:<path relative to the project>` for a tarball. Undefined when none is recorded or it is gone.
 */
export function installedFrom(root: string): string | undefined {
  const real = fs.realpathSync(root);
  const parts = real.split(path.sep);
  // Every project folder above a node_modules segment, nearest first (nested installs, then the top).
  for (let i = parts.lastIndexOf('node_modules'); i > 0; i = parts.lastIndexOf('node_modules', i - 1)) {
    const project = parts.slice(0, i).join(path.sep) || path.sep;
    const key = parts.slice(i).join('/');
    for (const lock of [
      path.join(project, 'node_modules', '.package-lock.json'),
      path.join(project, 'package-lock.json'),
    ]) {
      let resolved: unknown;
      try {
        resolved = (JSON.parse(fs.readFileSync(lock, 'utf8')) as { packages?: Record<string, { resolved?: unknown }> })
          .packages?.[key]?.resolved;
      } catch {
        continue;
      }
      if (typeof resolved !== 'string' || !resolved.startsWith('file:') || !TARBALL.test(resolved)) continue;
      const file = path.resolve(project, resolved.slice('file:'.length));
      if (fs.existsSync(file)) return file;
    }
  }
  return undefined;
}

/** A tarball's file name. */
export const TARBALL = /\.(tgz|tar\.gz|tar)$/;

/** A corl installation a new project (a `corl init` lab, a `create-corl-plugin` package) is made by. */
export interface CorlInstall {
  /** Root folder of the package (holds package.json, dist/, templates/). */
  readonly root: string;
  /** Whether it is a checkout (a development copy) rather than a package installed under node_modules. */
  readonly checkout: boolean;
  /** The corl version. */
  readonly version: string;
  /**
   * Whether the root is corl itself, rather than the standalone create-corl-plugin package (which
   * carries the templates but not corl: a plugin made by it depends on corl from the registry or a
   * tarball given with `--corl`). Default true.
   */
  readonly corl?: boolean;
  /**
   * The local tarball npm installed this corl from (`npm install ./corl-x.y.z.tgz`, `npx
   * --package=./corl-x.y.z.tgz`), when npm's lockfile records one that still exists.
   */
  readonly tarball?: string;
}

/** The installation whose package root is `root`: corl or the standalone scaffolder, checkout or installed, from a tarball or not. */
export function corlInstallAt(root: string, version: string): CorlInstall {
  let name: unknown;
  try {
    name = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name?: unknown }).name;
  } catch {
    name = undefined;
  }
  if (name !== 'corl') return { root, checkout: false, version, corl: false };
  const checkout = !fs.realpathSync(root).split(path.sep).includes('node_modules');
  const tarball = checkout ? undefined : installedFrom(root);
  return { root, checkout, version, ...(tarball ? { tarball } : {}) };
}

/**
 * How a new project depends on corl, the `--corl` choices of `corl init` and `create-corl-plugin`:
 * `file`, the corl that makes the project (its tarball, else its folder); `registry`, `^<version>`;
 * a tarball; an npm spec, written as given.
 */
export type CorlChoice = 'file' | 'registry' | { readonly tarball: string } | { readonly spec: string };

/** Read a `--corl` value: `file`, `registry`, `tarball:<path>` or a path to a tarball, or an npm spec. */
export function parseCorlChoice(value: string): CorlChoice {
  const v = value.trim();
  if (v === 'file' || v === 'registry') return v;
  if (v.startsWith('tarball:')) return { tarball: v.slice('tarball:'.length) };
  if (TARBALL.test(v) && !/^[a-z+]+:/i.test(v)) return { tarball: v };
  if (
    v !== '' &&
    (/^(file|npm|git|git\+[a-z]+|https?|github|link|workspace):/i.test(v) || semver.validRange(v) !== null)
  )
    return { spec: v };
  throw new CorlError(
    'CORL_ERR_SCAFFOLD_CORL',
    `expected --corl file, registry, tarball:<path> or an npm spec (a version range, file:, git, https), got ${JSON.stringify(value)}`,
    { where: '--corl', hint: 'a dist-tag is written npm:corl@<tag>; nothing was written' },
  );
}

/**
 * The dependency spec of corl in a new project, for `corl init` and `create-corl-plugin` alike. With
 * no choice, where the running corl came from: a checkout, `file:<its folder>`; installed from a local
 * tarball (npx --package=./corl-x.y.z.tgz), `file:<that tarball>`; installed from the registry (or the
 * standalone scaffolder, which holds no corl), `^<version>`. `file:` paths are absolute, so the
 * project installs from any folder it is copied to.
 */
export function corlDependency(install: CorlInstall, choice?: CorlChoice): string {
  if (choice === undefined)
    return install.corl === false || (!install.checkout && install.tarball === undefined)
      ? `^${install.version}`
      : corlDependency(install, 'file');
  if (choice === 'registry') return `^${install.version}`;
  if (choice === 'file') {
    if (install.corl === false)
      throw new CorlError(
        'CORL_ERR_SCAFFOLD_CORL',
        'expected --corl registry, tarball:<path> or an npm spec, got file: the create-corl-plugin package does not contain corl',
        { where: '--corl', hint: 'pass --corl tarball:<path to corl-x.y.z.tgz> to work offline, or --corl registry' },
      );
    return `file:${install.tarball ?? fs.realpathSync(install.root)}`;
  }
  if ('spec' in choice) return choice.spec;
  const file = path.resolve(choice.tarball);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile())
    throw new CorlError(
      'CORL_ERR_SCAFFOLD_CORL',
      `expected a corl tarball at ${file}, got ${fs.existsSync(file) ? 'a folder' : 'nothing'}`,
      { where: '--corl', hint: 'make one with `npm pack` in a corl checkout; nothing was written' },
    );
  return `file:${file}`;
}
