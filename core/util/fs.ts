import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../errors';

let counter = 0;

/** Write a file atomically: write a sibling temp file, fsync, then rename over the target. */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${counter++}`;
  try {
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, file);
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw new CorlError('CORL_ERR_IO', `expected to write ${file}, got ${(e as Error).message}`, { cause: e });
  }
}

/** Synchronous twin of {@link writeFileAtomic}. */
export function writeFileAtomicSync(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.tmp-${process.pid}-${counter++}`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
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
