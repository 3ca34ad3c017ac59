// What installing corl with npm needs to know: which npm skips onnxruntime-node's CUDA download by
// itself ("allowScripts"), the .npmrc line for one that does not, and where an installed corl came
// from. Used by create-corl-plugin and \`corl init\`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as semver from 'semver';

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
