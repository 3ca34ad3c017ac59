// The rule the contributing guide asks of every commit subject, kept by a tool: at most 72 bytes of
// UTF-8, which is what a strict checker counts (so "−" costs three: keep subjects ASCII). Plain
// JavaScript (CommonJS), so the hook runs before anything is built; the commit-msg hook and
// test/scripts/commit-subjects.test.ts both use it.
'use strict';
/* global Buffer */

/** Longest subject allowed, in bytes of UTF-8: an ASCII subject may have 72 characters, "−" costs 3. */
const MAX = 72;

/**
 * The subject of a commit message as `git log --format=%s` shows it: the first paragraph, its lines
 * joined by spaces, without git's comment lines ("#") and without what follows a scissors line.
 */
function subjectOf(message) {
  const lines = [];
  for (const line of message.split('\n')) {
    if (/^# -+ >8 -+$/.test(line)) break;
    if (line.startsWith('#')) continue;
    lines.push(line.trimEnd());
  }
  while (lines.length && lines[0].trim() === '') lines.shift();
  const end = lines.findIndex((l) => l.trim() === '');
  return (end < 0 ? lines : lines.slice(0, end)).map((l) => l.trim()).join(' ');
}

/** What is wrong with a subject, or undefined when it keeps the rule (an empty one is git's to refuse). */
function subjectProblem(subject) {
  const n = Buffer.byteLength(subject, 'utf8');
  if (n <= MAX) return undefined;
  const chars = [...subject].length;
  const wide = chars === n ? '' : ` (${chars} characters; a non-ASCII one such as "−" counts 2-4 bytes: write "-")`;
  return `the subject has ${n} bytes${wide}, more than ${MAX}: "${subject}"`;
}

module.exports = { MAX, subjectOf, subjectProblem };
