import * as path from 'node:path';
import * as os from 'node:os';

/**
 * A path as a report may show it: relative to the working directory when it lies under it, else
 * only its last two parts. A report is mailed and committed; the folders of the machine that wrote
 * it (home, temporary, checkout) are no part of it.
 */
export function portablePath(p: string, cwd: string = process.cwd()): string {
  if (!path.isAbsolute(p)) return p;
  const rel = path.relative(cwd, p);
  if (rel === '') return '.';
  if (!rel.startsWith('..') && !path.isAbsolute(rel)) return rel;
  return [
    '…',
    ...p
      .split(/[\\/]+/)
      .filter(Boolean)
      .slice(-2),
  ].join('/');
}

/** `text` (an error message) with the working directory, the home folder and the temporary folder written as `.`, `~` and `<tmp>`. */
export function portableText(text: string, cwd: string = process.cwd()): string {
  const swaps: [string, string][] = (
    [
      [cwd, '.'],
      [os.tmpdir(), '<tmp>'],
      [os.homedir(), '~'],
    ] as [string, string][]
  )
    .filter(([from]) => from.length > 1)
    .sort((a, b) => b[0].length - a[0].length);
  let out = text;
  for (const [from, to] of swaps) out = out.split(from).join(to);
  return out;
}
