// One writer per folder: a lock file (`corl.lock`) that names its owner (pid, host, start time,
// command), created atomically (written aside, then hard-linked into place, so no reader ever sees a
// half-written lock) and removed when the owner releases it or exits. A lock whose owner is dead (same
// host, no such process, or a process of that pid started at another time) is stale: the next writer
// breaks it and takes the folder. A lock of another host (a machine or a pod sharing the folder) cannot
// be checked by its pid: its holder refreshes the lock file's modification time every `heartbeatMs`,
// and a lock of another host not refreshed for `STALE_HEARTBEATS` heartbeats (and at least
// `MIN_STALE_MS`) is stale, which assumes the hosts' clocks agree to well within that; one that
// records no heartbeat (written by an older corl) counts as held. A holder whose heartbeat finds the
// lock taken over (it stalled for that long) must not write beside the new one: the lock is marked
// lost and `assertHeld` (which the run folder's writers call) refuses with CORL_ERR_RUN_LOCKED. The
// library never ends the process; the `corl` command does (`stopProcessOnLostLock`, exit 75), so a
// requeued Slurm task or a replaced pod stops at once, while a program embedding corl gets an error.
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
  /** Milliseconds between the holder's refreshes of the lock file's modification time. */
  readonly heartbeatMs?: number;
}

/** Options of taking a lock. */
export interface LockOptions {
  /** What takes it, in words (shown to whoever finds the folder held). */
  readonly command: string;
  /** The lock's file name (default `corl.lock`). */
  readonly file?: string;
  /** Milliseconds between refreshes of the lock's modification time while held (default 10 000). */
  readonly heartbeatMs?: number;
  /**
   * Called when a heartbeat finds the lock another's or its file removed. Default: the process-wide
   * handler, which only marks the lock lost (writes then refuse) unless the `corl` command installed
   * {@link stopProcessOnLostLock}.
   */
  readonly onLost?: (by: LockOwner | undefined) => void;
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

/** Heartbeats a lock of another host may miss before it is stale. */
export const STALE_HEARTBEATS = 6;
/** The least time a lock of another host must go unrefreshed to be stale. */
export const MIN_STALE_MS = 60_000;
const DEFAULT_HEARTBEAT_MS = 10_000;

const held = new Set<string>();
let exitHook = false;
/** What a lost lock does beyond refusing further writes, when its taker named no `onLost`. */
let lostDefault: ((error: CorlError) => void) | undefined;

/**
 * Make a lost lock stop this process (exit 75, EX_TEMPFAIL, after printing its coded line), as the
 * `corl` command does: a holder that stalled past its stale time and was taken over must not write
 * beside the new holder, and a scheduler reruns it. Only a command-line entry point should call it.
 */
export function stopProcessOnLostLock(): void {
  lostDefault = (e) => {
    process.stderr.write(`${e.message}\n`);
    process.exit(75);
  };
}
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

/**
 * Whether the process that wrote `owner` may still run. For another host: whether the lock file
 * (`file`) was refreshed within its owner's stale time; always true when it records no heartbeat.
 */
export function ownerAlive(owner: LockOwner, file?: string): boolean {
  if (owner.host !== os.hostname()) return !heartbeatStale(owner, file);
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const now = procStart(owner.pid);
  return owner.procStart === undefined || now === undefined || now === owner.procStart;
}

/** Whether a lock's heartbeat stopped: its file unrefreshed for STALE_HEARTBEATS beats (at least MIN_STALE_MS). */
function heartbeatStale(owner: LockOwner, file: string | undefined): boolean {
  if (owner.heartbeatMs === undefined || file === undefined) return false;
  let mtime: number;
  try {
    mtime = fs.statSync(file).mtimeMs;
  } catch {
    return false; // gone: the next try finds the folder free
  }
  return Date.now() - mtime > Math.max(MIN_STALE_MS, STALE_HEARTBEATS * owner.heartbeatMs);
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
  if (v.heartbeatMs !== undefined && (!Number.isSafeInteger(v.heartbeatMs) || (v.heartbeatMs as number) <= 0))
    bad('heartbeatMs', 'a positive integer');
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
  private lostBy: CorlError | undefined;
  private readonly beat: NodeJS.Timeout;
  private constructor(
    readonly file: string,
    readonly owner: LockOwner,
    private readonly onLost: ((by: LockOwner | undefined) => void) | undefined,
  ) {
    this.beat = setInterval(() => this.heartbeat(), owner.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    this.beat.unref();
  }

  /** Whether a heartbeat found this lock taken over or its file removed (then writes must stop). */
  get lost(): boolean {
    return this.lostBy !== undefined;
  }

  /** Throw CORL_ERR_RUN_LOCKED when the lock was lost: called before each write to the folder. */
  assertHeld(): void {
    if (this.lostBy) throw this.lostBy;
  }

  /** Refresh the lock's modification time, or report it lost when the file is no longer this lock. */
  private heartbeat(): void {
    if (this.released) return;
    let now: LockOwner | undefined;
    try {
      now = readLockOwner(path.dirname(this.file), path.basename(this.file));
    } catch {
      return; // unreadable or damaged for now: neither ours to refresh nor proof of another holder
    }
    if (now !== undefined && JSON.stringify(now) === JSON.stringify(this.owner)) {
      const t = new Date();
      try {
        fs.utimesSync(this.file, t, t);
      } catch {
        // a failed refresh is retried at the next beat; the lock stays held meanwhile
      }
      return;
    }
    clearInterval(this.beat);
    this.released = true;
    held.delete(this.file);
    // The folder itself is gone (deleted with everything in it): there is nothing left to write
    // beside, and no holder to yield to, so the lock simply ends; stopping the process would only
    // take down whatever embeds corl (a library user, a test runner) for a folder it removed.
    if (now === undefined && !fs.existsSync(path.dirname(this.file))) return;
    this.lostBy = lostError(this.file, now);
    if (this.onLost) this.onLost(now);
    else lostDefault?.(this.lostBy);
  }

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
    const owner = ownOwner(options.command, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    for (let attempt = 0; attempt < 20; attempt++) {
      if (place(file, owner)) {
        held.add(file);
        if (!exitHook) {
          exitHook = true;
          process.on('exit', releaseAll);
        }
        return new FolderLock(file, owner, options.onLost);
      }
      const holder = readLockOwner(path.dirname(file), path.basename(file));
      if (holder === undefined) continue; // released between the two calls: try again
      if (ownerAlive(holder, file)) return holder;
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
    clearInterval(this.beat);
    held.delete(this.file);
    removeIfOurs(this.file);
  }
}

/** The refusal of a lost lock: this process may no longer write the folder. */
function lostError(file: string, by: LockOwner | undefined): CorlError {
  return new CorlError(
    'CORL_ERR_RUN_LOCKED',
    `expected to hold ${file}, got it ${by ? `taken over by ${by.command} (pid ${by.pid} on ${by.host})` : 'removed'} after this process missed its heartbeats`,
    {
      where: file,
      hint: 'this process stopped writing so as not to write beside the new holder; it resumes when run again',
    },
  );
}

function ownOwner(command: string, heartbeatMs?: number): LockOwner {
  const start = procStart(process.pid);
  return {
    pid: process.pid,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
    command,
    ...(start !== undefined ? { procStart: start } : {}),
    ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
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
  const me = ownOwner('breaking a stale lock', DEFAULT_HEARTBEAT_MS); // never refreshed: stale a minute on
  if (!place(breaker, me)) {
    const other = readLockOwner(path.dirname(breaker), path.basename(breaker));
    if (other && !ownerAlive(other, breaker)) fs.rmSync(breaker, { force: true });
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
