// Answer keys are what a program or a model printed, and they travel into answers, peers' votes
// and the journal: a key is bounded after extraction, whatever produced it (docs/guide/serve.md
// "Security and limits").
import { hash } from 'node:crypto';
import type { GroupAnswer } from './scorer';

/** Prefix of a key that stands for a longer one. */
export const DIGEST_PREFIX = 'sha256:';

/** `key` itself when at most `max` characters long, else `sha256:` and its digest (50 characters). */
export function capKey(key: string, max: number): string {
  return key.length <= max ? key : DIGEST_PREFIX + hash('sha256', key, 'base64url');
}

/** {@link capKey} over a list of keys (nulls stay null); the same array when nothing changes. */
export function capKeys(keys: readonly (string | null)[], max: number): (string | null)[] {
  let out: (string | null)[] | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (typeof k === 'string' && k.length > max) {
      out ??= [...keys];
      out[i] = capKey(k, max);
    }
  }
  return out ?? (keys as (string | null)[]);
}

/** An answer whose label and own label are bounded like keys (a reward source may return any string). */
export function capAnswer(answer: GroupAnswer, max: number): GroupAnswer {
  const long = (v: string | null | undefined): boolean => typeof v === 'string' && v.length > max;
  if (!long(answer.label) && !long(answer.ownLabel)) return answer;
  return {
    ...answer,
    ...(typeof answer.label === 'string' ? { label: capKey(answer.label, max) } : {}),
    ...(typeof answer.ownLabel === 'string' ? { ownLabel: capKey(answer.ownLabel, max) } : {}),
  };
}
