// Digests of a config's content, to tell whether two runs ran the same config: canonical JSON
// (keys sorted) of the source as given, without the fields that do not change what is trained.
import { createHash } from 'node:crypto';

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

/** What makes two configs "the same" for a verdict: everything but their names, descriptions, seeds and $schema. */
export const SAME_CONFIG_OMIT = ['name', 'description', 'seed', '$schema'] as const;
