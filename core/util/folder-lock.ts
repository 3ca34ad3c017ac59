// One writer per folder: a lock file (`corl.lock`) that names its owner (pid, host, start time,
// command), created atomically (written aside, then hard-linked into place, so no reader ever sees a
// half-written lock) and removed when the owner releases it or exits. A lock whose owner is dead (same
// host, no such process, or a process of that pid started at another time) is stale: the next writer
// breaks it and takes the folder. A lock of another host cannot be checked and counts as held.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CorlError, errorLine } from '../errors';

/** The lock's file name in a folder. */
export const LOCK_FILE = 'corl.lock';

/** Who holds a folder, as its lock file records it. */
export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  /** ISO time the lock was taken. */
  readonly startedAt: string;
  /** What holds it, in words ("corl train", "corl compare --shard 1/2"). */
  readonly command: string;
  /** The owner process's start time as the kernel counts it (Linux /proc/<pid>/stat), to tell a reused pid. */
  readonly procStart?: string;
}

/** Options of taking a lock. */
export interface LockOptions {
  /** What takes it, in words (shown to whoever finds the folder held). */
  readonly command: string;
  /** The lock's file name (default `corl.lock`). */
  readonly file?: string;
}

/** Options of waiting for a lock. */
export interface WaitOptions extends LockOptions {
  /** Milliseconds between tries (default 500). */
  readonly pollMs?: number;
  /** Called once, with the holder, when the first try finds the folder held. */
  readonly onWait?: (holder: LockOwner) => void;
  /** Stop waiting (CORL_ERR_RUN_LOCKED) when this aborts. */
  readonly signal?: AbortSignal;
  /** Whether to wait for this holder (default: any); false stops with CORL_ERR_RUN_LOCKED at once. */
  readonly waitFor?: (holder: LockOwner) => boolean;
}

const held = new Set<string>();
let exitHook = false;
let counter = 0;

/** The kernel's start time of a process (field 22 of /proc/<pid>/stat), where there is a /proc. */
function procStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote `owner` may still run (always true for another host). */
export function ownerAlive(owner: LockOwner): boolean {
  if (owner.host !== os.hostname()) return true;
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const now = procStart(owner.pid);
  return owner.procStart === undefined || now === undefined || now === owner.procStart;
}

/** Check a lock file's content field by field; a damaged one is CORL_ERR_RUN_LOCKED naming the field. */
export function checkLockOwner(value: unknown, file: string): LockOwner {
  const bad = (field: string, want: string): never => {
    throw new CorlError('CORL_ERR_RUN_LOCKED', `expected ${field} to be ${want} in the lock file, got a damaged lock`, {
      where: `${file} ${field}`,
      hint: `make sure no corl writes this folder, then delete ${file}`,
    });
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return bad('(root)', 'an object');
  const v = value as Record<string, unknown>;
  if (!Number.isSafeInteger(v.pid) || (v.pid as number) <= 0) bad('pid', 'a positive integer');
  if (typeof v.host !== 'string' || v.host === '') bad('host', 'a host name');
  if (typeof v.startedAt !== 'string') bad('startedAt', 'an ISO time');
  if (typeof v.command !== 'string') bad('command', 'a string');
  if (v.procStart !== undefined && (typeof v.procStart !== 'string' || !/^\d+$/.test(v.procStart)))
    bad('procStart', 'a decimal string');
  return v as unknown as LockOwner;
}

/** The owner a lock file names, or undefined when there is no lock file. */
export function readLockOwner(dir: string, name: string = LOCK_FILE): LockOwner | undefined {
  const file = path.join(dir, name);
  let text: string;
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile())
      throw new CorlError('CORL_ERR_RUN_LOCKED', `expected a lock file, got something else at ${file}`, {
        where: file,
        hint: `remove ${file}: corl writes its lock there`,
      });
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof CorlError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CorlError('CORL_ERR_IO', `expected to read the lock ${file}, got ${errorLine(e)}`, { where: file });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  return checkLockOwner(value, file);
}

/** A folder held by this process until {@link FolderLock.release}. */
export class FolderLock {
  private released = false;
  private constructor(
    readonly file: string,
    readonly owner: LockOwner,
  ) {}

  /** Take the folder's lock, or throw CORL_ERR_RUN_LOCKED naming the live holder. The folder is created if missing. */
  static acquire(dir: string, options: LockOptions): FolderLock {
    const got = FolderLock.tryAcquire(dir, options);
    if (got instanceof FolderLock) return got;
    throw heldError(path.join(dir, options.file ?? LOCK_FILE), got);
  }

  /** Take the lock when free (breaking a stale one); otherwise return its live holder. */
  static tryAcquire(dir: string, options: LockOptions): FolderLock | LockOwner {
    const file = path.resolve(dir, options.file ?? LOCK_FILE);
    if (held.has(file)) return readLockOwner(path.dirname(file), path.basename(file)) ?? ownOwner(options.command);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const owner = ownOwner(options.command);
    for (let attempt = 0; attempt < 20; attempt++) {
      if (place(file, owner)) {
        held.add(file);
        if (!exitHook) {
          exitHook = true;
          process.on('exit', releaseAll);
        }
        return new FolderLock(file, owner);
      }
      const holder = readLockOwner(path.dirname(file), path.basename(file));
      if (holder === undefined) continue; // released between the two calls: try again
      if (ownerAlive(holder)) return holder;
      breakStale(file, holder);
    }
    throw new CorlError('CORL_ERR_RUN_LOCKED', `expected to take the lock ${file}, got it taken and broken 20 times`, {
      where: file,
    });
  }

  /** Take the lock, waiting (polling) while a live process holds it. */
  static async wait(dir: string, options: WaitOptions): Promise<FolderLock> {
    let told = false;
    for (;;) {
      const got = FolderLock.tryAcquire(dir, options);
      if (got instanceof FolderLock) return got;
      if (options.signal?.aborted || options.waitFor?.(got) === false)
        throw heldError(path.join(dir, options.file ?? LOCK_FILE), got);
      if (!told) options.onWait?.(got);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
    }
  }

  /** Give the folder back (removes the lock file if it is still this one's). Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this.file);
    removeIfOurs(this.file);
  }
}

function ownOwner(command: string): LockOwner {
  const start = procStart(process.pid);
  return {
    pid: process.pid,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
    command,
    ...(start !== undefined ? { procStart: start } : {}),
  };
}

/** Create `file` holding `owner`, atomically; false when it exists already. */
function place(file: string, owner: LockOwner): boolean {
  const tmp = `${file}.tmp-${process.pid}-${counter++}`;
  fs.writeFileSync(tmp, JSON.stringify(owner) + '\n', { flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new CorlError('CORL_ERR_IO', `expected to create the lock ${file}, got ${errorLine(e)}`, { where: file });
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/**
 * Remove a stale lock, under a second lock (`<lock>.break`) so that two processes breaking the same
 * stale lock cannot remove the lock one of them has just taken: the lock is removed only while it
 * still is the one found stale (same inode, same content).
 */
function breakStale(file: string, stale: LockOwner): void {
  const breaker = `${file}.break`;
  const me = ownOwner('breaking a stale lock');
  if (!place(breaker, me)) {
    const other = readLockOwner(path.dirname(breaker), path.basename(breaker));
    if (other && !ownerAlive(other)) fs.rmSync(breaker, { force: true });
    return;
  }
  try {
    const now = readLockOwner(path.dirname(file), path.basename(file));
    if (now && JSON.stringify(now) === JSON.stringify(stale)) fs.rmSync(file, { force: true });
  } finally {
    fs.rmSync(breaker, { force: true });
  }
}

function removeIfOurs(file: string): void {
  try {
    const owner = readLockOwner(path.dirname(file), path.basename(file));
    if (owner && owner.pid === process.pid && owner.host === os.hostname()) fs.rmSync(file, { force: true });
  } catch {
    // a damaged or replaced lock is not ours to remove
  }
}

function releaseAll(): void {
  for (const file of held) removeIfOurs(file);
  held.clear();
}

function heldError(file: string, holder: LockOwner): CorlError {
  return new CorlError(
    'CORL_ERR_RUN_LOCKED',
    `expected no other writer of ${path.dirname(file)}, got ${holder.command} (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}) holding it`,
    {
      where: file,
      hint:
        holder.host === os.hostname()
          ? 'wait for it to finish, or stop it; a lock whose process has ended is taken over by the next run'
          : `that process runs on another host: wait for it, or, if nothing of corl runs there, delete ${file}`,
    },
  );
}
