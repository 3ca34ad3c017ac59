// Paths in a config: relative to the config file's folder, or inside an installed package with a
// package reference, `package:<name>/<path>` (`package:corl/models/slips/alpha`: the models that ship
// with corl, wherever corl is installed). `corl` is the corl that runs; any other name is looked up
// in the node_modules folders above the config, as Node finds packages.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../errors';

/** The prefix of a package reference. */
export const PACKAGE_PREFIX = 'package:';

/**
 * A package reference as a regular expression (for schemas): `package:`, an npm package name
 * (optionally `@scope/`), `/`, and a non-empty path inside it.
 */
export const PACKAGE_REF_PATTERN = '^package:(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*/[^/].*$';

/** The root folder of the running corl package (this file is dist/core/util/paths.js in it). */
export function corlRoot(): string {
  return path.resolve(__dirname, '..', '..', '..');
}

/** A package reference split into the package's name and the path inside it; null for a plain path. */
export function parsePackageRef(ref: string): { name: string; inside: string } | null {
  if (!ref.startsWith(PACKAGE_PREFIX)) return null;
  if (!new RegExp(PACKAGE_REF_PATTERN).test(ref))
    throw new CorlError(
      'CORL_ERR_CONFIG_PATH',
      `expected a package reference "package:<package>/<path inside it>", got "${ref}"`,
      { hint: 'e.g. "package:corl/models/slips/alpha"' },
    );
  const rest = ref.slice(PACKAGE_PREFIX.length);
  const cut = rest.startsWith('@') ? rest.indexOf('/', rest.indexOf('/') + 1) : rest.indexOf('/');
  return { name: rest.slice(0, cut), inside: rest.slice(cut + 1) };
}

/** The folder of an installed package, found from `from` upwards (node_modules/<name>), or undefined. */
function packageRoot(name: string, from: string): string | undefined {
  if (name === 'corl') return corlRoot();
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', ...name.split('/'));
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The absolute path a config's path names: a package reference inside its package, anything else
 * relative to `baseDir` (the config file's folder). A package that is not installed is
 * CORL_ERR_CONFIG_PATH; whether the path exists is the caller's to check.
 */
export function resolveConfigPath(ref: string, baseDir: string): string {
  const pkg = parsePackageRef(ref);
  if (!pkg) return path.resolve(baseDir, ref);
  const root = packageRoot(pkg.name, baseDir);
  if (!root)
    throw new CorlError(
      'CORL_ERR_CONFIG_PATH',
      `expected the package "${pkg.name}" of "${ref}" installed in a node_modules folder above ${baseDir}, got none`,
      { hint: `install it (npm install ${pkg.name}) in the project that holds the config` },
    );
  const resolved = path.resolve(root, pkg.inside);
  if (resolved !== root && !resolved.startsWith(root + path.sep))
    throw new CorlError('CORL_ERR_CONFIG_PATH', `expected a path inside the package "${pkg.name}", got "${ref}"`, {
      hint: 'a package reference may not leave its package with ".."',
    });
  return resolved;
}

/**
 * The package reference of a path inside the running corl's shipped folders, when one exists for
 * it: what a config copied out of corl should write instead of a relative path (`../models/slips/alpha`
 * → `package:corl/models/slips/alpha`). Looks for the path's `models/...` tail in corl.
 */
export function shippedReference(ref: string, root = corlRoot()): string | undefined {
  const parts = ref.split(/[\\/]+/);
  const at = parts.lastIndexOf('models');
  if (at < 0 || at === parts.length - 1) return undefined;
  const inside = parts.slice(at).join('/');
  return fs.existsSync(path.join(root, inside)) ? `${PACKAGE_PREFIX}corl/${inside}` : undefined;
}

/**
 * The schema keyword that marks an option as a path to check when a config is validated:
 * `{ type: 'string', ...pathKeyword('dir') }`. corl's config validator resolves it (relative to the
 * config's folder, or a package reference) and reports a missing file or folder with the field and
 * the agent; the published schema turns it into the package-reference pattern. Typed as adding
 * nothing, so schemas checked against json-schema-to-ts's JSONSchema keep their checks.
 */
export function pathKeyword(want: 'dir' | 'file'): Record<never, never> {
  return { corlPath: want };
}
