import * as fs from 'node:fs';
import * as zlib from 'node:zlib';

/**
 * The file to read for `file`: itself when it exists, else its gzip-compressed twin `file.gz`
 * (the committed, compact copies of runs under docs/results/ are compressed), else `file`
 * (so the caller's "no such file" names what it asked for).
 */
export function existingOrGz(file: string): string {
  if (fs.existsSync(file) || file.endsWith('.gz')) return file;
  return fs.existsSync(`${file}.gz`) ? `${file}.gz` : file;
}

/** Read a text file, gunzipping it when its name ends in `.gz`. */
export function readTextMaybeGz(file: string): string {
  const bytes = fs.readFileSync(file);
  return file.endsWith('.gz') ? zlib.gunzipSync(bytes).toString('utf8') : bytes.toString('utf8');
}

/** Gzip text with the highest compression (deterministic: no file name or time in the header). */
export function gzipText(text: string): Buffer {
  return zlib.gzipSync(Buffer.from(text, 'utf8'), { level: 9 });
}
