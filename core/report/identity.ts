// Digests of a config's content, to tell whether two runs ran the same config: canonical JSON
// (keys sorted) of the source as given, without the fields that do not change what is trained.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { corlRoot, PACKAGE_PREFIX, resolveConfigPath, shippedReference } from '../util/paths';

/** Canonical JSON: objects with their keys sorted, so equal values give equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** sha256 (hex) of a config source's canonical JSON without the top-level fields `omit`. */
export function configDigest(source: unknown, omit: readonly string[]): string {
  const o =
    source && typeof source === 'object' && !Array.isArray(source)
      ? Object.fromEntries(Object.entries(source).filter(([k]) => !omit.includes(k)))
      : source;
  return createHash('sha256').update(canonicalJson(o)).digest('hex');
}

/** What a plan pins of a config: everything but its seed (each run sets it: config seed + 1000·i). */
export const PLAN_OMIT = ['seed'] as const;

/**
 * What makes two configs "the same" for a verdict: everything but their names, descriptions, seeds,
 * `$schema` and metrics sinks (a sink records what a run measured and changes none of it).
 */
export const SAME_CONFIG_OMIT = ['name', 'description', 'seed', '$schema', 'metrics'] as const;

/** A string a config may use as a path: relative (`./`, `../`), absolute, or a package reference. */
const PATH_LIKE = /^(\.{1,2}[\\/]|\/|package:)/;

/**
 * A config source with every path-like string written one way: a path that resolves inside the
 * running corl (its shipped models, whether written `../models/slips/alpha` from a checkout's
 * configs/ or `package:corl/models/slips/alpha` from a project that installed corl) becomes
 * `package:corl/<path inside corl>`; any other path the absolute path it resolves to. A path that
 * resolves to nothing here (a run recorded elsewhere) but whose `models/…` tail is one of corl's
 * shipped models is that model, any other such path stays as written. `baseDir` is the folder the config's paths are relative to
 * (run.json's; a relative one, as packed comparisons record it, is taken from corl's root). A
 * package that is not installed leaves the string as written.
 */
export function canonicalPaths(source: unknown, baseDir: string, root = corlRoot()): unknown {
  const base = path.resolve(root, baseDir);
  const one = (s: string): string => {
    let abs: string;
    try {
      abs = s.startsWith(PACKAGE_PREFIX) ? resolveConfigPath(s, base) : path.resolve(base, s);
    } catch {
      return s;
    }
    const inside = path.relative(root, abs);
    const ref =
      inside === '' || inside.startsWith('..') || path.isAbsolute(inside)
        ? abs
        : `${PACKAGE_PREFIX}corl/${inside.split(path.sep).join('/')}`;
    if (fs.existsSync(abs)) return ref;
    // A run recorded on another machine (a committed comparison, packed from another folder): a
    // path that is not here but names one of corl's shipped models by its models/… tail is that
    // model; any other path that is not here stays as written.
    return shippedReference(s, root) ?? s;
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
    return typeof v === 'string' && PATH_LIKE.test(v) ? one(v) : v;
  };
  return walk(source);
}

/**
 * The identity of a config for finding the committed result of the same configs: the digest of its
 * source without {@link SAME_CONFIG_OMIT}, its paths written as {@link canonicalPaths} writes them;
 * so a project made by `corl init` (sinks on, `package:` checkpoints) has the identities of the
 * checkout's configs it was copied from.
 */
export function sameConfigIdentity(source: unknown, baseDir: string, root = corlRoot()): string {
  return configDigest(canonicalPaths(source, baseDir, root), SAME_CONFIG_OMIT);
}
