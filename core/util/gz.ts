import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import { MAX_INPUT_BYTES, NotARegularFile, readUserFile } from './files';

/**
 * The file to read for `file`: itself when it exists, else its gzip-compressed twin `file.gz`
 * (the committed, compact copies of runs under docs/results/ are compressed), else `file`
 * (so the caller's "no such file" names what it asked for).
 */
export function existingOrGz(file: string): string {
  if (fs.existsSync(file) || file.endsWith('.gz')) return file;
  return fs.existsSync(`${file}.gz`) ? `${file}.gz` : file;
}

/**
 * Read a text file, gunzipping it when its name ends in `.gz`: a regular file only (see
 * `readUserFile`), and at most `MAX_INPUT_BYTES` once decompressed.
 */
export function readTextMaybeGz(file: string): string {
  const bytes = readUserFile(file);
  if (!file.endsWith('.gz')) return bytes.toString('utf8');
  try {
    return zlib.gunzipSync(bytes, { maxOutputLength: MAX_INPUT_BYTES }).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new NotARegularFile(
        `a gzip file that expands past the ${MAX_INPUT_BYTES} bytes corl reads into memory`,
        'EFBIG',
      );
    throw e;
  }
}

/** Gzip text with the highest compression (deterministic: no file name or time in the header). */
export function gzipText(text: string): Buffer {
  return zlib.gzipSync(Buffer.from(text, 'utf8'), { level: 9 });
}
