// Local image files as OpenAI chat image parts (base64 data URLs). The type is read from the
// file's first bytes, never from its name.
import * as path from 'node:path';
import { CorlError } from '../../../core/errors';
import { NotARegularFile, readUserFile } from '../../../core/util/files';

/** An OpenAI chat content part carrying an image. */
export interface ImagePart {
  readonly type: 'image_url';
  readonly image_url: { readonly url: string };
}

/** The media type of an image from its magic bytes: PNG, JPEG, GIF or WebP; undefined otherwise. */
export function imageType(bytes: Uint8Array): string | undefined {
  const at = (i: number, ...b: number[]) => b.every((x, k) => bytes[i + k] === x);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp';
  return undefined;
}

/**
 * The image part of one local file. Relative paths are resolved against `baseDir`. A missing,
 * unreadable or unsupported file is CORL_ERR_BACKEND_IMAGE naming the problem and the path.
 */
export function imagePart(file: string, baseDir: string, problem: string): ImagePart {
  const full = path.resolve(baseDir, file);
  let bytes: Buffer;
  try {
    bytes = readUserFile(full);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CorlError(
      'CORL_ERR_BACKEND_IMAGE',
      `expected a readable image file for ${problem}, got ${code === 'ENOENT' ? 'no such file' : e instanceof NotARegularFile ? e.message : (code ?? (e as Error).message)}: ${full}`,
      { where: full },
    );
  }
  const type = imageType(bytes);
  if (type === undefined) {
    throw new CorlError(
      'CORL_ERR_BACKEND_IMAGE',
      `expected a PNG, JPEG, GIF or WebP image for ${problem}, got ${bytes.length === 0 ? 'an empty file' : 'another format'}: ${full}`,
      { where: full },
    );
  }
  return { type: 'image_url', image_url: { url: `data:${type};base64,${bytes.toString('base64')}` } };
}
