import { CorlError, isCorlError } from '../errors';
import { NotARegularFile } from '../util/files';

/** Print an error the way every command does: coded errors as their message, anything else with a stack. Returns the exit code. */
export function reportError(e: unknown, write: (s: string) => void = (s) => process.stderr.write(s)): number {
  if (isCorlError(e)) {
    write(`${e.message}\n`);
    return 1;
  }
  // A reader refused a FIFO, a device or a kernel file that no caller turned into its own code.
  if (e instanceof NotARegularFile) {
    const at = e.path === undefined ? '' : ` at ${e.path}`;
    write(
      `${new CorlError('CORL_ERR_IO', `expected a regular file${at}, got ${e.message}`, { hint: 'name a regular file (not a pipe, device, folder or /proc entry)' }).message}\n`,
    );
    return 1;
  }
  const err = e as Error;
  write(`internal error (please report it): ${err?.stack ?? String(e)}\n`);
  return 70;
}

/** Parse an integer flag in [min, max] or throw CORL_ERR_CLI_USAGE naming it. */
export function intFlag(
  name: string,
  value: string | undefined,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected ${name} to be an integer >= ${min}, got "${value}"`, {
      where: name,
    });
  }
  if (n > max)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected ${name} of at most ${max}, got ${value}`, { where: name });
  return n;
}

export { pct } from '../util/text';

/** Left-aligned text table. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const r of rows)
    r.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** Exit status of a Unix tool killed by SIGPIPE (128 + 13), as a shell reports it. */
export const BROKEN_PIPE_EXIT = 141;
let pipesWatched = false;

/**
 * When the reader of stdout or stderr goes away (`corl train | head`), end at once, quietly, with
 * the status a Unix tool gives (141): no EPIPE stack. A run cut off this way is like one killed:
 * `corl train --resume` continues it from its last checkpoint.
 */
export function exitQuietlyOnBrokenPipe(): void {
  if (pipesWatched) return;
  pipesWatched = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(BROKEN_PIPE_EXIT);
      throw e;
    });
  }
}
