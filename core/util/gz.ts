import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import { MAX_INPUT_BYTES, NotARegularFile, readUserFile } from './files';
import { CorlError } from '../errors';
import { COMPRESSED_SEALED_SUFFIX, openSealedFile, SEALED_SUFFIX } from './seal';

/**
 * The file to read for `file`: itself when it exists, else its compressed twin `file.gz` or
 * `file.br` (the committed, compact copies of runs under docs/results/ are compressed) or its sealed
 * twin `file.sealed` (a planned run's, core/util/seal.ts) or `file.br.sealed` (a compact pack of one), else `file` (so the caller's "no such
 * file" names what it asked for).
 */
export function existingOrGz(file: string): string {
  if (fs.existsSync(file) || /\.(gz|br|sealed)$/.test(file)) return file;
  for (const twin of [`${file}.gz`, `${file}.br`, `${file}${SEALED_SUFFIX}`, `${file}${COMPRESSED_SEALED_SUFFIX}`])
    if (fs.existsSync(twin)) return twin;
  return file;
}

/**
 * Read a text file, decompressing it when its name ends in `.gz` (gzip) or `.br` (brotli), opening
 * it with its comparison's seal when it ends in `.sealed` and `openSealed` is set (a comparison's
 * rendering; refused otherwise, CORL_ERR_RUN_SEALED): a regular file only (see
 * `readUserFile`), and at most `MAX_INPUT_BYTES` once decompressed.
 */
export function readTextMaybeGz(file: string, o: { readonly openSealed?: boolean } = {}): string {
  if (file.endsWith(SEALED_SUFFIX)) {
    // only a comparison's renderings open sealed rows (and count the read); any other reader is refused
    if (o.openSealed !== true)
      throw new CorlError(
        'CORL_ERR_RUN_SEALED',
        "expected a file in the clear, got a planned run's sealed evaluation rows: they open only in the comparison's report, at the plan's looks",
        { where: file, hint: 'render the comparison (corl report <comparison folder>) after its look' },
      );
    const opened = openSealedFile(file);
    if (!file.endsWith(COMPRESSED_SEALED_SUFFIX)) return opened.toString('utf8');
    // a compact pack's rows: compressed, then sealed; bytes that open with the key but do not
    // decompress were sealed so by someone holding it
    try {
      return decompressed(opened, 'brotli');
    } catch (e) {
      if (e instanceof NotARegularFile) throw e;
      throw new CorlError(
        'CORL_ERR_RUN_CORRUPT',
        'expected sealed brotli-compressed rows, got sealed bytes that do not decompress',
        {
          where: file,
          hint: 'restore the file from a copy of the comparison folder',
        },
      );
    }
  }
  const bytes = readUserFile(file);
  const gz = file.endsWith('.gz');
  if (!gz && !file.endsWith('.br')) return bytes.toString('utf8');
  return decompressed(bytes, gz ? 'gzip' : 'brotli');
}

/** Decompressed text, at most `MAX_INPUT_BYTES` of it. */
function decompressed(bytes: Buffer, kind: 'gzip' | 'brotli'): string {
  try {
    const opts = { maxOutputLength: MAX_INPUT_BYTES };
    return (kind === 'gzip' ? zlib.gunzipSync(bytes, opts) : zlib.brotliDecompressSync(bytes, opts)).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new NotARegularFile(
        `a ${kind} file that expands past the ${MAX_INPUT_BYTES} bytes corl reads into memory`,
        'EFBIG',
      );
    throw e;
  }
}

/** Brotli-compress text at the highest quality (deterministic; about a quarter smaller than gzip on metrics). */
export function brotliText(text: string): Buffer {
  return zlib.brotliCompressSync(Buffer.from(text, 'utf8'), {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
      [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(text),
    },
  });
}

/** Gzip text with the highest compression (deterministic: no file name or time in the header). */
export function gzipText(text: string): Buffer {
  return zlib.gzipSync(Buffer.from(text, 'utf8'), { level: 9 });
}
