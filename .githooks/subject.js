// The rule the contributing guide asks of every commit subject, kept by a tool: at most 72
// characters. Plain JavaScript (CommonJS), so the hook runs before anything is built; the
// commit-msg hook and test/scripts/commit-subjects.test.ts both use it.
'use strict';

/** Longest subject allowed, in characters (code points, as a reader counts them: "−" is one). */
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
  const n = [...subject].length;
  return n > MAX ? `the subject has ${n} characters, more than ${MAX}: "${subject}"` : undefined;
}

module.exports = { MAX, subjectOf, subjectProblem };
