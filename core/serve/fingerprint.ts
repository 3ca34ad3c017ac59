// Fingerprints of posted content: what a retry must repeat exactly. Every field is written with a
// tag and its length, strings as their exact UTF-16 code units (a lone surrogate stays itself,
// never U+FFFD) and numbers as their 8 bytes, so two different posts never share an encoding.
// A journal written before this encoding holds 27-character SHA-1 fingerprints of a joined text
// (`legacyGroupHash`); they are compared under that rule, so retries of what they recorded still
// replay after an upgrade.
import { createHash, hash, type Hash } from 'node:crypto';
import type { PostedGroup } from './scorer';

/** Length of a legacy fingerprint (base64url SHA-1); current ones are base64url SHA-256 (43). */
const LEGACY_LENGTH = 27;

function field(h: Hash, tag: number, text: string): void {
  const head = Buffer.alloc(5);
  head.writeUInt8(tag, 0);
  head.writeUInt32BE(text.length, 1);
  h.update(head);
  h.update(Buffer.from(text, 'utf16le'));
}

function numbers(h: Hash, tag: number, xs: readonly number[]): void {
  const head = Buffer.alloc(5);
  head.writeUInt8(tag, 0);
  head.writeUInt32BE(xs.length, 1);
  h.update(head);
  h.update(Buffer.from(Float64Array.from(xs).buffer));
}

/** Fingerprint of a posted group: reference, completions (text, length, token statistics), sample ids. */
export function groupHash(group: PostedGroup): string {
  const h = createHash('sha256');
  if (group.reference !== undefined) field(h, 1, group.reference);
  numbers(h, 2, [group.completions.length]);
  for (const c of group.completions) {
    field(h, 3, c.text);
    if (c.length !== undefined) numbers(h, 4, [c.length]);
    if (c.entropies) numbers(h, 5, c.entropies);
    if (c.meanLogprobs) numbers(h, 6, c.meanLogprobs);
  }
  if (group.members) {
    numbers(h, 7, [group.members.length]);
    for (const m of group.members) field(h, 8, m.id);
  }
  return h.digest('base64url');
}

/** The fingerprint journals held before the length-prefixed encoding (a joined text; ambiguous). */
export function legacyGroupHash(group: PostedGroup): string {
  let text = group.reference ?? '\u0000';
  for (const c of group.completions) {
    text += '\u0001' + c.text;
    if (c.length !== undefined) text += '\u0002' + c.length;
    if (c.entropies) text += '\u0003' + c.entropies.join(',');
    if (c.meanLogprobs) text += '\u0004' + c.meanLogprobs.join(',');
  }
  if (group.members) for (const m of group.members) text += '\u0005' + m.id;
  return hash('sha1', text, 'base64url');
}

/** Whether a stored fingerprint is the group's: `current` is `groupHash(group)`, already computed. */
export function sameGroup(stored: string, group: PostedGroup, current: string): boolean {
  return stored.length === LEGACY_LENGTH ? stored === legacyGroupHash(group) : stored === current;
}
