// The label journal and its seal (docs/guide/serve.md "Journal format and recovery").
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../errors';
import { replaceThrough, writeFileAtomicSync } from '../util/fs';
import {
  JOURNAL_VERSION,
  checkHeaderV2,
  encodeLine,
  journalError,
  readHeader,
  readRecord,
  scanLegacy,
  SUFFIX,
  verifyLine,
  type FileLine,
  type Scan,
} from './journal-format';
import { regularFileProblem } from '../util/files';

export { JOURNAL_VERSION, encodeLine } from './journal-format';

/**
 * The serve identity: which service a journal belongs to (its agents' names, topology and reward); a
 * journal of another identity is refused. The JSON fields of the journal header keep these names.
 */
export interface ServeIdentity {
  readonly agents: readonly string[];
  readonly topology: string;
  readonly reward: string;
}

/** What the exchange needs to check replayed records: the newest step at compaction and the step window of the service that appends. */
export interface JournalExchangeState {
  /** Newest step of POST /v1/groups when this generation was written (every compacted record is at or below it). */
  readonly newest: number;
  /** `serve.exchange.maxStepsAhead` of the service that appends to this generation. */
  readonly maxStepsAhead: number;
}

/** The first line of a journal. */
export interface JournalHeader extends ServeIdentity {
  readonly t: 'open';
  readonly v: number;
  /** Generation: 1 for a new journal, one more at every compaction (each start). */
  readonly gen: number;
  /** Records the compaction wrote after this line: the file never legitimately holds fewer. */
  readonly records: number;
  readonly exchange: JournalExchangeState;
}

/**
 * Where a journaled fact belongs: `n` the exchange's namespace (`groups`, `get_reward`, or
 * `requests`), `a` the agent, `s` the step (or the request's order among the agent's), `g` the group
 * (or the idempotency key), `h` the fingerprint of the post (what a retry must repeat exactly).
 */
interface JournalPlace {
  readonly n: string;
  readonly a: string;
  readonly s: number;
  readonly g: string;
  readonly h: string;
}

/** One journaled fact. */
export type JournalRecord =
  | (JournalPlace & { readonly t: 'keys'; readonly k: readonly (string | null)[] })
  | (JournalPlace & { readonly t: 'answer'; readonly r: unknown })
  /** The reply to a request sent with an idempotency key `g` (namespace `requests`), `s` its order among the agent's. */
  | (JournalPlace & { readonly t: 'reply'; readonly r: unknown });

/** What replaying a journal found. */
export interface Replay {
  readonly records: JournalRecord[];
  /** 1-based line number of each record in the file. */
  readonly lines: number[];
  /** The header read (undefined: no journal yet). */
  readonly header?: JournalHeader;
  /** A torn last line (the service died mid-write) that was dropped. */
  readonly tornTail: boolean;
  /** Things the operator should know (a legacy format, a missing seal). */
  readonly notes: string[];
}

/** What the service behind a journal provides: the records as they are read, and what it holds now. */
export interface JournalState {
  /** Each record, in order, as it is read (its integrity checked; its meaning is the state's to check). `header`: the generation's, undefined for a version-1 journal. */
  visit(record: JournalRecord, line: number, header: JournalHeader | undefined): void;
  /** The records of everything held now, in an order whose replay rebuilds it, and the exchange state a new generation starts from. */
  snapshot(): { keep: JournalRecord[]; exchange: JournalExchangeState };
  /** Whether records this service appends to a generation with this header would replay (else a new generation is written at start). */
  fits(header: JournalExchangeState): boolean;
}

/** How a journal was opened: what was read, and whether a new generation was written. */
export interface OpenReport {
  /** Records read. */
  readonly count: number;
  /** A torn last line (the service died mid-write) that was dropped. */
  readonly tornTail: boolean;
  /** Things the operator should know (a legacy format, a missing seal). */
  readonly notes: string[];
  /** Whether a new generation (a compaction) was written; else appends continue the one read. */
  readonly compacted: boolean;
  /** Records the journal holds now. */
  readonly records: number;
}

/** Options of {@link Journal.open}. */
export interface JournalOptions {
  /**
   * Bytes the journal may grow by beyond what its last compaction wrote (and beyond that much
   * again) before it is compacted while running; undefined: only at start. A compaction writes the
   * records held (the retention of the exchanges and ledgers) to a new file beside it, so the file
   * stays within about twice what is held plus this, and a compaction needs free space for what is
   * held only, never for a full copy.
   */
  readonly growthBytes?: number;
}

/** The seal: how many records of which generation were durable, rewritten in place after every group commit. */
interface Seal {
  readonly gen: number;
  /** Checksum of the header line of that generation (which journal the seal belongs to). */
  readonly id: string;
  readonly records: number;
}

/** The seal file holds two fixed-size slots written alternately, so a torn slot write leaves the other readable. */
const SLOT = 512;

function fsyncDir(file: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(path.dirname(file), 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function sealSlot(seal: Seal): Buffer {
  const text = encodeLine({ v: JOURNAL_VERSION, gen: seal.gen, id: seal.id, records: seal.records });
  const buf = Buffer.alloc(SLOT, 0x20);
  buf.write(text.slice(0, -1), 0, 'utf8');
  buf[SLOT - 1] = 0x0a;
  return buf;
}

/** The newest valid slot of a seal file; undefined when there is none; 'unreadable' when it exists but no slot verifies. */
function readSeal(file: string): Seal | undefined | 'unreadable' {
  const fd = openRegular(file, fs.constants.O_RDONLY, 'journal seal');
  if (fd === undefined) return undefined;
  const buf = Buffer.alloc(4 * SLOT);
  let n: number;
  try {
    n = fs.readSync(fd, buf, 0, buf.length, 0);
  } catch (e) {
    throw new CorlError('CORL_ERR_IO', `expected a readable journal seal at ${file}, got ${(e as Error).message}`, {
      cause: e,
    });
  } finally {
    fs.closeSync(fd);
  }
  let best: Seal | undefined;
  for (let off = 0; off + SLOT <= n; off += SLOT) {
    const line = buf
      .subarray(off, off + SLOT)
      .toString('utf8')
      .trimEnd();
    if (verifyLine(line) === undefined) continue;
    const s = JSON.parse(line) as Partial<Seal>;
    if (!Number.isSafeInteger(s.gen) || !Number.isSafeInteger(s.records) || typeof s.id !== 'string') continue;
    const seal = s as Seal;
    if (!best || seal.gen > best.gen || (seal.gen === best.gen && seal.records > best.records)) best = seal;
  }
  return best ?? 'unreadable';
}

/** Longest line the reader accepts: far beyond any record the service writes (its caps keep one to a few MB), far below V8's longest string. */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;
/** Bytes read from the file at a time. */
const READ_CHUNK = 1024 * 1024;

/**
 * Open `file` with `flags`, refusing anything but a regular file (a FIFO, a device, a socket, a
 * folder, or a symlink to one) with CORL_ERR_SERVE_JOURNAL_FILE: opened without blocking (a FIFO
 * with no writer would hang a plain open) and checked on the descriptor itself. Undefined when the
 * file does not exist.
 */
function openRegular(file: string, flags: number, what: string): number | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, flags | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // A FIFO opened for writing with no reader, or a device without a driver.
    if (code === 'ENXIO' || code === 'ENODEV' || code === 'EISDIR') throw notAFile(file, what, code);
    throw new CorlError('CORL_ERR_IO', `expected to open the ${what} ${file}, got ${(e as Error).message}`, {
      cause: e,
    });
  }
  const kind = regularFileProblem(fs.fstatSync(fd));
  if (kind !== undefined) {
    fs.closeSync(fd);
    throw notAFile(file, what, kind);
  }
  return fd;
}

function notAFile(file: string, what: string, kind: string): CorlError {
  let link = '';
  try {
    if (fs.lstatSync(file).isSymbolicLink()) link = ` (through the symlink ${file} -> ${fs.readlinkSync(file)})`;
  } catch {
    /* described as it is */
  }
  return new CorlError(
    'CORL_ERR_SERVE_JOURNAL_FILE',
    `expected the ${what} ${file} to be a regular file, got ${kind}${link}`,
    {
      where: file,
      hint: 'point serve.journal (or --journal) at a regular file in a folder of its own; a FIFO, device or socket cannot hold a journal',
    },
  );
}

/**
 * The complete lines of an open file, read `READ_CHUNK` bytes at a time (never the whole file in
 * one string), and the bytes after the last newline (a torn tail) as `tail`. A line longer than
 * MAX_LINE_BYTES is refused with CORL_ERR_SERVE_JOURNAL_CORRUPT.
 */
function* fileLines(fd: number, file: string): Generator<FileLine, { tail: number }, undefined> {
  const buf = Buffer.allocUnsafe(READ_CHUNK);
  let parts: Buffer[] = [];
  let partBytes = 0;
  let pos = 0;
  let no = 0;
  for (;;) {
    const n = fs.readSync(fd, buf, 0, READ_CHUNK, pos);
    if (n === 0) break;
    const chunk = buf.subarray(0, n);
    let from = 0;
    while (from < n) {
      const nl = chunk.indexOf(0x0a, from);
      const end = nl < 0 ? n : nl;
      if (partBytes + end - from > MAX_LINE_BYTES)
        throw journalError(
          'CORL_ERR_SERVE_JOURNAL_CORRUPT',
          `expected lines of at most ${MAX_LINE_BYTES} bytes in ${file} (the service writes none longer), got a longer one at line ${no + 1}`,
          file,
          no + 1,
        );
      if (nl < 0) {
        parts.push(Buffer.from(chunk.subarray(from, n)));
        partBytes += n - from;
        break;
      }
      const piece = chunk.subarray(from, nl);
      const text = partBytes === 0 ? piece.toString('utf8') : Buffer.concat([...parts, piece]).toString('utf8');
      parts = [];
      partBytes = 0;
      yield { text, no: ++no, end: pos + nl + 1 };
      from = nl + 1;
    }
    pos += n;
  }
  return { tail: partBytes };
}

/**
 * The label journal: append-only JSONL, replayed at start. Every record line carries a sequence
 * number `q` (1, 2, … within a generation) and a CRC-32 `c` of its bytes; the header says how many
 * records the compaction wrote, and the seal beside the file (`<journal>.seal`) how many were
 * durable after the latest group commit. So a cut anywhere but inside the last line, a reordered
 * or missing line and a damaged one are each told apart from the torn tail of a crash.
 *
 * Appends are group-committed: records handed in while a write is in flight (or within the same
 * turn of the event loop) go out in the next single write, made durable with O_DSYNC (one
 * fdatasync per batch), and each `append` resolves only once its records are on disk, so an answer
 * is never sent before the facts it rests on are durable.
 *
 * Bounded at any size: it is read line by line, and compacted (the records held written to a new
 * generation beside it, then renamed over it) at start when that halves it, and while running when
 * it has grown by `growthBytes` beyond twice what the last compaction wrote.
 */
export class Journal {
  private fd?: fsp.FileHandle;
  private sealFd?: number;
  private gen = 0;
  private id = '';
  private seq = 0;
  private batches = 0;
  private queue: JournalRecord[] = [];
  private waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** Callers of `compact` waiting for it. */
  private compactWaiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;
  private scheduled = false;
  private closed = false;
  private broken?: CorlError;
  private state?: JournalState;
  private identity?: ServeIdentity;
  private growth?: number;
  /** Bytes of the file now. */
  private bytes = 0;
  /** Size at which the running service compacts. */
  private compactAt = Infinity;
  /** Records written since open. */
  written = 0;
  /** Compactions while running (not counting the one at start). */
  compactions = 0;
  /** Duration of each group commit (write + fdatasync) in seconds, and its records (the caller drains it into metrics). */
  onSync?: (seconds: number, records: number) => void;
  /** Why the latest compaction while running could not be written (the journal went on appending to the file it has). */
  compactError?: string;

  private constructor(readonly file: string | undefined) {}

  /** A journal that keeps nothing (`serve.journal: false`): appends resolve at once, a restart starts empty. */
  static disabled(): Journal {
    return new Journal(undefined);
  }

  /** The seal file of a journal. */
  static sealFile(file: string): string {
    return `${file}.seal`;
  }

  /** Bytes of the journal file now (0 for a disabled one). */
  get size(): number {
    return this.bytes;
  }

  /**
   * Open `file`: read it line by line, handing each record to `state` (which checks its meaning
   * and restores it), check that it belongs to `identity` and that nothing is missing, then either
   * go on appending to it (its torn tail cut off), or, when that would keep at most half its
   * records, when it is of an older format, or when `state` says this service's records would not
   * replay after it, write the records `state` holds as a new generation (streamed to a file beside
   * it, then renamed over it). Nothing is changed before every record has been read and checked.
   */
  static async open(
    file: string,
    identity: ServeIdentity,
    state: JournalState,
    options: JournalOptions = {},
  ): Promise<{ journal: Journal; replay: OpenReport }> {
    const real = realJournalPath(file);
    const scan = Journal.scan(real, identity, state.visit.bind(state));
    const journal = new Journal(real);
    journal.state = state;
    journal.identity = identity;
    journal.growth = options.growthBytes;
    const snap = state.snapshot();
    const rewrite =
      scan.header === undefined ||
      scan.legacy ||
      !state.fits(scan.header.exchange) ||
      snap.keep.length * 2 <= scan.count;
    if (rewrite) {
      await journal.writeGeneration((scan.header?.gen ?? 0) + 1, snap);
    } else {
      journal.gen = scan.header!.gen;
      journal.id = scan.id;
      journal.seq = scan.count;
      journal.bytes = scan.goodBytes;
      // A torn tail is cut off before anything is appended after it; the seal then counts what is there.
      if (scan.goodBytes < scan.bytes) truncate(real, scan.goodBytes);
      writeSeal(real, { gen: journal.gen, id: journal.id, records: journal.seq });
    }
    await journal.openForAppend();
    journal.compactAt = journal.nextCompaction(journal.bytes);
    return {
      journal,
      replay: {
        count: scan.count,
        tornTail: scan.tornTail,
        notes: scan.notes,
        compacted: rewrite,
        records: journal.seq,
      },
    };
  }

  /** Parse a journal file whole (missing file: empty) and check its integrity against the header and seal. For tests and tools. */
  static read(file: string, identity: ServeIdentity): Replay {
    const records: JournalRecord[] = [];
    const lines: number[] = [];
    const scan = Journal.scan(file, identity, (r, line) => {
      records.push(r);
      lines.push(line);
    });
    return {
      records,
      lines,
      ...(scan.header ? { header: scan.header } : {}),
      tornTail: scan.tornTail,
      notes: scan.notes,
    };
  }

  /**
   * Read a journal line by line (missing file: empty), handing each record to `visit`, and check
   * its integrity against the header and seal. Refuses a path that is not a regular file.
   */
  private static scan(
    file: string,
    identity: ServeIdentity,
    visit: (record: JournalRecord, line: number, header: JournalHeader | undefined) => void,
  ): Scan {
    const seal = readSeal(Journal.sealFile(file));
    const fd = openRegular(file, fs.constants.O_RDONLY, 'journal');
    if (fd === undefined) return emptyScan(file, seal, 0, 0);
    try {
      const lines = fileLines(fd, file);
      const first = lines.next();
      if (first.done) return emptyScan(file, seal, first.value.tail, first.value.tail);
      const head = readHeader(file, first.value.text, identity);
      if (head.v === 1) return scanLegacy(file, first.value, lines, visit);
      const header = checkHeaderV2(file, first.value.text, head);
      const id = SUFFIX.exec(first.value.text)![1]!;
      let count = 0;
      let goodBytes = first.value.end;
      let torn = false;
      // One line behind: a damaged final line (newline present) is a torn tail, an earlier one is not.
      let held: FileLine | undefined;
      const take = (line: FileLine, last: boolean): void => {
        const r = readRecord(file, line, count + 1, last);
        if (r === undefined) {
          torn = true;
          return;
        }
        count++;
        goodBytes = line.end;
        visit(r, line.no, header);
      };
      let next = lines.next();
      while (!next.done) {
        if (held) take(held, false);
        held = next.value;
        next = lines.next();
      }
      const tail = next.value.tail;
      if (held) take(held, tail === 0);
      if (tail > 0) torn = true;
      const tornNote = torn ? ' (after dropping a torn last line)' : '';
      if (count < header.records) {
        throw journalError(
          'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
          `expected at least ${header.records} records in ${file} (its header, written by the last compaction, says so), got ${count}${tornNote}: the file was cut short`,
          file,
        );
      }
      const notes = checkSeal(file, seal, header, id, count, tornNote);
      return { header, legacy: false, id, count, tornTail: torn, notes, goodBytes, bytes: fs.fstatSync(fd).size };
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Append records; resolves once they are durable. */
  append(records: readonly JournalRecord[]): Promise<void> {
    if (records.length === 0 || this.file === undefined) {
      this.written += records.length;
      return Promise.resolve();
    }
    if (this.broken) return Promise.reject(this.broken);
    if (this.closed)
      return Promise.reject(
        new CorlError(
          'CORL_ERR_SERVE_UNAVAILABLE',
          'expected a running service, got one shutting down (the journal is closed)',
        ),
      );
    for (const r of records) this.queue.push(r);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    // Start the write once this turn of the event loop is over: the answers computed from these
    // records in the same turn (and other requests read meanwhile) join the same write.
    this.schedule();
    return done;
  }

  /**
   * Compact now: write the records the service holds as a new generation, between two group
   * commits. Records handed in before are in it (or were let go by the retention meanwhile, as a
   * restart would let them go); their appends resolve once it is durable.
   */
  compact(): Promise<void> {
    if (this.file === undefined || this.closed) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.compactWaiters.push({ resolve, reject }));
    this.schedule();
    return done;
  }

  private schedule(): void {
    if (!this.flushing && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.flush();
      });
    }
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    while ((this.queue.length || this.compactWaiters.length) && !this.broken) {
      if ((this.bytes >= this.compactAt || this.compactWaiters.length) && (await this.compactNow())) continue;
      const batch = this.queue;
      const waiters = this.waiters;
      this.queue = [];
      this.waiters = [];
      if (batch.length === 0) continue;
      const first = this.seq;
      try {
        const t = performance.now();
        for (const buf of encodeChunks(batch, first)) {
          await writeAll(this.fd!, [buf]);
          this.bytes += buf.length;
        }
        this.seq = first + batch.length;
        this.written += batch.length;
        this.onSync?.((performance.now() - t) / 1000, batch.length);
        this.sealAfterCommit();
        for (const w of waiters) w.resolve();
      } catch (e) {
        // A failed write may have left part of the batch in the file: nothing more is appended
        // after it (the next start drops the partial last line as a torn tail).
        this.broken = new CorlError(
          'CORL_ERR_IO',
          `expected to append to the journal ${this.file}, got ${(e as Error).message}`,
          { cause: e },
        );
        for (const w of [...waiters, ...this.waiters]) w.reject(this.broken);
        this.queue = [];
        this.waiters = [];
      }
    }
    this.flushing = false;
  }

  /**
   * A compaction between two group commits: the state's records at this moment are every record
   * handed in so far that is still held, so the queued ones are not written again. False when it
   * failed (the queued records then go to the file there is, and the next try waits for more growth).
   */
  private async compactNow(): Promise<boolean> {
    const snap = this.state!.snapshot();
    const held = this.queue;
    const waiters = this.waiters;
    const callers = this.compactWaiters;
    this.queue = [];
    this.waiters = [];
    this.compactWaiters = [];
    try {
      await this.fd?.close();
      this.fd = undefined;
      if (this.sealFd !== undefined) fs.closeSync(this.sealFd);
      this.sealFd = undefined;
      await this.writeGeneration(this.gen + 1, snap);
      this.compactions++;
    } catch (e) {
      this.queue = held.concat(this.queue);
      this.waiters = waiters.concat(this.waiters);
      this.compactAt = this.nextCompaction(this.bytes);
      try {
        if (!this.fd) await this.openForAppend();
      } catch (err) {
        this.broken = err as CorlError;
        for (const w of [...this.waiters, ...callers]) w.reject(this.broken);
        this.queue = [];
        this.waiters = [];
        return true;
      }
      for (const c of callers) c.reject(e);
      this.compactError = (e as Error).message;
      return false;
    }
    try {
      await this.openForAppend();
    } catch (e) {
      this.broken = e as CorlError;
      for (const w of [...waiters, ...this.waiters, ...callers]) w.reject(this.broken);
      this.queue = [];
      this.waiters = [];
      return true;
    }
    this.compactAt = this.nextCompaction(this.bytes);
    for (const w of [...waiters, ...callers]) w.resolve();
    return true;
  }

  /** The size at which the running service compacts next, given the size a compaction wrote. */
  private nextCompaction(base: number): number {
    return this.growth === undefined ? Infinity : 2 * base + this.growth;
  }

  /**
   * Write `snap` as generation `gen`: streamed (a few MiB at a time) to `<journal>.compact`, synced,
   * renamed over the journal, then sealed. A crash before the rename leaves the journal as it was;
   * after it, the new generation (a seal of the older one is accepted while nothing was appended).
   */
  private async writeGeneration(gen: number, snap: ReturnType<JournalState['snapshot']>): Promise<void> {
    const file = this.file!;
    const identity = this.identity!;
    const headerLine = encodeLine({
      t: 'open',
      v: JOURNAL_VERSION,
      gen,
      records: snap.keep.length,
      agents: identity.agents,
      topology: identity.topology,
      reward: identity.reward,
      exchange: snap.exchange,
    });
    const id = SUFFIX.exec(headerLine.trimEnd())![1]!;
    const tmp = `${file}.compact`;
    let bytes = 0;
    try {
      // A leftover of an earlier attempt goes first: the new one is created, never followed through a link.
      await fsp.rm(tmp, { force: true });
      await replaceThrough(
        file,
        tmp,
        async (fh) => {
          const head = Buffer.from(headerLine, 'utf8');
          await writeAll(fh, [head]);
          bytes += head.length;
          for (const buf of encodeChunks(snap.keep, 0)) {
            await writeAll(fh, [buf]);
            bytes += buf.length;
          }
        },
        'wx',
      );
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_IO',
        `expected to write a compacted journal beside ${file} (${tmp}), got ${(e as Error).message}`,
        {
          cause: e,
          where: tmp,
          hint: 'a compaction needs free space for the records held; the journal was left as it was',
        },
      );
    }
    fsyncDir(file);
    this.gen = gen;
    this.id = id;
    this.seq = snap.keep.length;
    this.bytes = bytes;
    try {
      writeSeal(file, { gen, id, records: this.seq });
    } catch {
      // The generation is in place and durable; a missing or older seal only means less truncation is detected.
    }
  }

  private async openForAppend(): Promise<void> {
    const file = this.file!;
    const flags =
      fs.constants.O_WRONLY |
      fs.constants.O_APPEND |
      fs.constants.O_DSYNC |
      fs.constants.O_NONBLOCK |
      fs.constants.O_NOCTTY;
    let fh: fsp.FileHandle | undefined;
    try {
      fh = await fsp.open(file, flags);
      const kind = regularFileProblem(await fh.stat());
      if (kind !== undefined) throw notAFile(file, 'journal', kind);
      this.sealFd = openRegular(Journal.sealFile(file), fs.constants.O_RDWR, 'journal seal');
      this.fd = fh;
    } catch (e) {
      await fh?.close();
      if (e instanceof CorlError) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENXIO' || code === 'ENODEV' || code === 'EISDIR') throw notAFile(file, 'journal', code);
      throw new CorlError(
        'CORL_ERR_IO',
        `expected to open the journal ${file} for appending, got ${(e as Error).message}`,
        { cause: e },
      );
    }
  }

  /** Record in the seal that `seq` records are durable. Not synced: after a power loss the seal may be older, never ahead. */
  private sealAfterCommit(): void {
    try {
      fs.writeSync(
        this.sealFd!,
        sealSlot({ gen: this.gen, id: this.id, records: this.seq }),
        0,
        SLOT,
        (this.batches++ % 2) * SLOT,
      );
    } catch {
      // The records are durable; a stale seal only means less truncation is detected.
    }
  }

  /** Finish pending writes and close the file. */
  async close(): Promise<void> {
    while (this.flushing || this.scheduled || this.queue.length) await new Promise((r) => setImmediate(r));
    this.closed = true;
    if (this.sealFd !== undefined) {
      try {
        fs.fsyncSync(this.sealFd);
      } catch {
        /* best effort */
      }
      fs.closeSync(this.sealFd);
      this.sealFd = undefined;
    }
    await this.fd?.close();
    this.fd = undefined;
  }
}

/** The file a journal path names: a symlink to a regular file is followed (a compaction replaces the file, not the link). */
function realJournalPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file; // missing (or a dangling link: refused when opened)
  }
}

function truncate(file: string, bytes: number): void {
  try {
    fs.truncateSync(file, bytes);
  } catch (e) {
    throw new CorlError('CORL_ERR_IO', `expected to cut the torn last line off ${file}, got ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/** Both slots of the seal, written atomically beside the journal. */
function writeSeal(file: string, seal: Seal): void {
  const slot = sealSlot(seal);
  writeFileAtomicSync(Journal.sealFile(file), Buffer.concat([slot, slot]));
  fsyncDir(file);
}

/** A journal with no complete line (missing, empty, or a header being written when the service died). */
function emptyScan(file: string, seal: ReturnType<typeof readSeal>, tail: number, bytes: number): Scan {
  if (seal !== undefined && (seal === 'unreadable' || seal.records > 0)) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      `expected the journal ${file} that its seal describes, got ${bytes ? 'no complete header line' : 'an empty or missing file'}`,
      file,
    );
  }
  return { legacy: false, id: '', count: 0, tornTail: tail > 0, notes: [], goodBytes: 0, bytes };
}

/** Characters of encoded lines joined into one buffer before the next starts. */
const CHUNK_CHARS = 4 * 1024 * 1024;

/** Lines of `records`, numbered from `seq` + 1, as buffers of about CHUNK_CHARS each, made one at a time (never one string of them all). */
function* encodeChunks(records: readonly JournalRecord[], seq: number): Generator<Buffer> {
  let text = '';
  for (const r of records) {
    const line = encodeLine({ q: ++seq, ...r });
    if (text.length + line.length > CHUNK_CHARS && text.length > 0) {
      yield Buffer.from(text, 'utf8');
      text = '';
    }
    text += line;
  }
  if (text.length > 0) yield Buffer.from(text, 'utf8');
}

/** Write every buffer at the file's end: one writev (one O_DSYNC sync) unless the kernel takes less. */
async function writeAll(fd: fsp.FileHandle, bufs: Buffer[]): Promise<void> {
  let rest = bufs;
  while (rest.length > 0) {
    let n = (await fd.writev(rest)).bytesWritten;
    const left: Buffer[] = [];
    for (const b of rest) {
      if (n >= b.length) n -= b.length;
      else {
        left.push(n > 0 ? b.subarray(n) : b);
        n = 0;
      }
    }
    rest = left;
  }
}

/** Notes (or a coded error) from the seal: its generation, header checksum and durable record count against the file. */
function checkSeal(
  file: string,
  seal: ReturnType<typeof readSeal>,
  header: JournalHeader,
  id: string,
  count: number,
  tornNote: string,
): string[] {
  const notes: string[] = [];
  if (seal === 'unreadable') {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      `expected a readable seal ${Journal.sealFile(file)} beside the journal, got one whose slots all fail their checksum`,
      Journal.sealFile(file),
    );
  }
  if (seal === undefined || seal.gen < header.gen) {
    // A crash between writing a new generation and its seal leaves this state with nothing appended.
    if (count > header.records)
      notes.push(
        `journal: ${seal === undefined ? 'no seal' : 'a seal of an older generation'} beside ${file}; a cut at a line boundary among the ${count - header.records} record(s) appended since the last compaction could not be ruled out`,
      );
  } else if (seal.gen > header.gen) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      `expected the journal generation ${seal.gen} its seal names, got generation ${header.gen} in ${file}: the file was replaced by an older copy`,
      file,
    );
  } else if (seal.id !== id) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      `expected the journal its seal was written for (header checksum ${seal.id}), got another one (${id}) in ${file}`,
      file,
    );
  } else if (count < seal.records) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      `expected at least ${seal.records} records in ${file} (its seal says they were durable), got ${count}${tornNote}: the file was cut short`,
      file,
    );
  }
  return notes;
}
