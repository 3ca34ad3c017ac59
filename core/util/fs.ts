import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../errors';

let counter = 0;

/**
 * Replace `file` through the temporary file `tmp`: `write` fills it (opened with `flags`), it is
 * fsynced, then renamed over `file`. On any failure `tmp` is removed and the error rethrown; `file`
 * is then as it was.
 */
export async function replaceThrough(
  file: string,
  tmp: string,
  write: (fh: FileHandle) => Promise<void>,
  flags: 'w' | 'wx' = 'w',
): Promise<void> {
  try {
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const fh = await fsp.open(tmp, flags);
    try {
      await write(fh);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, file);
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
}

/** Write a file atomically: write a sibling temp file, fsync, then rename over the target. */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  try {
    await replaceThrough(file, `${file}.tmp-${process.pid}-${counter++}`, (fh) => fh.writeFile(data));
  } catch (e) {
    throw new CorlError('CORL_ERR_IO', `expected to write ${file}, got ${(e as Error).message}`, { cause: e });
  }
}

/** Write `data` to `file` opened with `flags` (`w` replaces, `a` appends) and fsync it before closing. */
export function writeSyncedSync(file: string, data: string | Uint8Array, flags: 'w' | 'a'): void {
  const fd = fs.openSync(file, flags);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Synchronous twin of {@link writeFileAtomic}. */
export function writeFileAtomicSync(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.tmp-${process.pid}-${counter++}`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    writeSyncedSync(tmp, data, 'w');
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw new CorlError('CORL_ERR_IO', `expected to write ${file}, got ${(e as Error).message}`, { cause: e });
  }
}

/** Write a JSON file atomically, pretty-printed, with a trailing newline. */
export function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  return writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n');
}
