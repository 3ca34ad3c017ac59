// Sealed results: what a planned comparison's runs write of their evaluations (held-out figures,
// eval rows) is encrypted with the comparison's key (AES-256-GCM), so that no file of the folder,
// no metrics sink and no progress line holds a held-out figure in the clear. The key lives in the
// comparison folder (seal.key, written when the planned comparison starts); corl's readers open
// sealed lines and files with it, and every rendering of them for a person counts a read in the
// folder's reads.jsonl (core/report/reads.ts). A run folder copied out of its comparison has no
// key and opens nothing. This keeps held-out numbers out of grep, TensorBoard and `tail`, and makes
// corl's own ways of showing them counted; it is not secrecy from someone who decrypts by hand with
// the key beside the files.
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../errors';
import { readUserText } from './files';
import { writeFileAtomic } from './fs';

/** The key file of a sealed comparison folder. */
export const SEAL_FILE = 'seal.key';

/** A sealed file's suffix: `eval/step-000010.jsonl.sealed`. */
export const SEALED_SUFFIX = '.sealed';

/**
 * A compact pack's sealed rows (`eval/step-000010.jsonl.br.sealed`): the rows brotli-compressed,
 * then sealed (ciphertext does not compress, so a pack compresses before it seals).
 */
export const COMPRESSED_SEALED_SUFFIX = '.br.sealed';

/** What prefixes every sealed text (format version 1). */
const PREFIX = 'corl-sealed-1:';

/** A comparison's seal: its key and identity, and the folder it was made in (a copy carries the original's). */
export interface Seal {
  readonly id: string;
  readonly key: Buffer;
  /** Absolute path of the comparison folder the seal was made for. */
  readonly origin: string;
  /** The key file read. */
  readonly file: string;
}

/** Make the comparison folder's seal, or return the one it has. */
export async function ensureSeal(dir: string): Promise<Seal> {
  const file = path.join(dir, SEAL_FILE);
  if (fs.existsSync(file)) return readSeal(file);
  fs.mkdirSync(dir, { recursive: true });
  const body = { seal: 1, id: randomUUID(), key: randomBytes(32).toString('hex'), origin: path.resolve(dir) };
  await writeFileAtomic(file, JSON.stringify(body, null, 2) + '\n');
  fs.chmodSync(file, 0o600);
  return readSeal(file);
}

/** The seal of a comparison folder, or undefined when it has none. */
export function folderSeal(dir: string): Seal | undefined {
  const file = path.join(dir, SEAL_FILE);
  return fs.existsSync(file) ? readSeal(file) : undefined;
}

function readSeal(file: string): Seal {
  let v: { seal?: unknown; id?: unknown; key?: unknown; origin?: unknown };
  try {
    v = JSON.parse(readUserText(file)) as typeof v;
  } catch (e) {
    throw damagedSeal(file, `unreadable JSON (${(e as Error).message})`);
  }
  if (v === null || typeof v !== 'object' || v.seal !== 1) throw damagedSeal(file, 'no "seal": 1');
  if (typeof v.key !== 'string' || !/^[0-9a-f]{64}$/.test(v.key)) throw damagedSeal(file, 'no 64-hex-digit "key"');
  if (typeof v.id !== 'string' || v.id === '') throw damagedSeal(file, 'no "id"');
  if (typeof v.origin !== 'string' || !path.isAbsolute(v.origin)) throw damagedSeal(file, 'no absolute "origin"');
  return { id: v.id, key: Buffer.from(v.key, 'hex'), origin: v.origin, file };
}

function damagedSeal(file: string, what: string): CorlError {
  return new CorlError('CORL_ERR_RUN_SEALED', `expected the comparison's seal key, got ${what}`, {
    where: file,
    hint: "restore seal.key from a copy of the comparison folder: without it the runs' evaluations cannot be opened",
  });
}

/** Whether a run.json says its run is sealed (an unreadable one says nothing). */
function sealedMeta(file: string): boolean {
  try {
    const meta = JSON.parse(readUserText(file)) as { sealed?: unknown } | null;
    return meta !== null && typeof meta === 'object' && meta.sealed === true;
  } catch {
    return false;
  }
}

/**
 * Whether `dir` is a sealed run folder: its run.json says `"sealed": true`, or it is a
 * `<comparison>/<config>/seed-<i>` folder whose comparison holds a seal.key (so a run.json edited to
 * say nothing still counts).
 */
export function isSealedRunFolder(dir: string): boolean {
  const d = path.resolve(dir);
  if (/^seed-\d+$/.test(path.basename(d)) && fs.existsSync(path.join(path.dirname(path.dirname(d)), SEAL_FILE)))
    return true;
  return fs.existsSync(path.join(d, 'run.json')) && sealedMeta(path.join(d, 'run.json'));
}

/** The seal a sealed run's files open with: its comparison folder's (`<comparison>/<config>/seed-<i>`). */
export function runSeal(runDir: string): Seal {
  const cmp = path.dirname(path.dirname(path.resolve(runDir)));
  const seal = folderSeal(cmp);
  if (!seal)
    throw new CorlError(
      'CORL_ERR_RUN_SEALED',
      `expected the seal key of the planned comparison this run belongs to at ${path.join(cmp, SEAL_FILE)}, got no file: the run's evaluations are sealed`,
      {
        where: path.resolve(runDir),
        hint: "a planned run's held-out results open only inside its comparison folder (corl report <comparison>): copy the whole folder, not one run",
      },
    );
  return seal;
}

/** Encrypt `text`, bound to `context` (what it is: a file name, a record's step and agent). */
export function sealText(seal: Seal, text: string, context: string): string {
  return sealBytes(seal, Buffer.from(text, 'utf8'), context);
}

/** Encrypt bytes (a compact pack's brotli-compressed rows), bound to `context`; the same text format as {@link sealText}. */
export function sealBytes(seal: Seal, bytes: Buffer, context: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', seal.key, iv);
  c.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([c.update(bytes), c.final()]);
  return PREFIX + Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
}

/** Whether a text is sealed. */
export function isSealed(text: string): boolean {
  return text.startsWith(PREFIX);
}

/** Decrypt what {@link sealText} made with the same seal and context; `where` names it in an error. */
export function openText(seal: Seal, sealed: string, context: string, where: string): string {
  return openBytes(seal, sealed, context, where).toString('utf8');
}

/** Decrypt what {@link sealBytes} (or {@link sealText}) made with the same seal and context. */
export function openBytes(seal: Seal, sealed: string, context: string, where: string): Buffer {
  const raw = Buffer.from(sealed.slice(PREFIX.length).trim(), 'base64');
  if (!isSealed(sealed) || raw.length < 28)
    throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected a sealed text (corl-sealed-1:…), got something else', {
      where,
    });
  try {
    const d = createDecipheriv('aes-256-gcm', seal.key, raw.subarray(0, 12));
    d.setAAD(Buffer.from(context, 'utf8'));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]);
  } catch {
    throw new CorlError(
      'CORL_ERR_RUN_CORRUPT',
      `expected a sealed text that opens with the comparison's key (${seal.file}), got one that does not: it was edited, moved from another run or file, or sealed with another key`,
      { where, hint: 'restore the file from a copy of the comparison folder' },
    );
  }
}

/** What a sealed file is bound to: its path in the comparison (config/seed-i/eval/name), so a file moved elsewhere does not open. */
export function sealedFileContext(file: string): string {
  return path.resolve(file).split(path.sep).slice(-4).join('/');
}

/**
 * Open a sealed file (`….sealed`; a compact pack's `….br.sealed` opens to compressed bytes, which
 * `readTextMaybeGz` decompresses) of a sealed run: the run folder is the one that holds its `eval/`.
 */
export function openSealedFile(file: string): Buffer {
  const runDir = path.dirname(path.dirname(path.resolve(file)));
  return openBytes(runSeal(runDir), readUserText(file), sealedFileContext(file), file);
}
