// The label journal and its seal (docs/guide/serve.md "Journal format and recovery").
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { CorlError } from '../errors';
import { writeFileAtomicSync } from '../util/fs';

/** The format version this code writes (it also reads version 1, which had no checksums). */
export const JOURNAL_VERSION = 2;

/** Which cohort a journal belongs to: a journal of another cohort is refused. */
export interface JournalCohort {
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
export interface JournalHeader extends JournalCohort {
  readonly t: 'open';
  readonly v: number;
  /** Generation: 1 for a new journal, one more at every compaction (each start). */
  readonly gen: number;
  /** Records the compaction wrote after this line: the file never legitimately holds fewer. */
  readonly records: number;
  readonly exchange: JournalExchangeState;
}

/** One journaled fact. `n` is the exchange's namespace (`groups` or `get_reward`). */
export type JournalRecord =
  | {
      readonly t: 'keys';
      readonly n: string;
      readonly a: string;
      readonly s: number;
      readonly g: string;
      readonly h: string;
      readonly k: readonly (string | null)[];
    }
  | {
      readonly t: 'answer';
      readonly n: string;
      readonly a: string;
      readonly s: number;
      readonly g: string;
      readonly h: string;
      readonly r: unknown;
    }
  | {
      /** The reply to a request sent with an idempotency key `g` (namespace `requests`), `s` its order among the agent's. */
      readonly t: 'reply';
      readonly n: string;
      readonly a: string;
      readonly s: number;
      readonly g: string;
      readonly h: string;
      readonly r: unknown;
    };

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

/** The seal: how many records of which generation were durable, rewritten in place after every group commit. */
interface Seal {
  readonly gen: number;
  /** Checksum of the header line of that generation (which journal the seal belongs to). */
  readonly id: string;
  readonly records: number;
}

/** The seal file holds two fixed-size slots written alternately, so a torn slot write leaves the other readable. */
const SLOT = 512;

/** Checksum suffix of every line: `,"c":"<8 hex>"}` replaces the closing brace. */
const SUFFIX = /,"c":"([0-9a-f]{8})"\}$/;
const SUFFIX_LENGTH = 16;

function hex(text: string): string {
  return crc32(text).toString(16).padStart(8, '0');
}

/** One line (with its newline) of an object: its JSON with the checksum of the bytes before `,"c"` as the last field. Exposed for tests and tools. */
export function encodeLine(value: object): string {
  const json = JSON.stringify(value);
  const body = json.slice(0, -1);
  return `${body},"c":"${hex(body)}"}\n`;
}

/** The checksum a line carries if it verifies, else undefined. */
function verifyLine(line: string): string | undefined {
  const m = SUFFIX.exec(line);
  if (!m) return undefined;
  return hex(line.slice(0, -SUFFIX_LENGTH)) === m[1] ? m[1] : undefined;
}

function journalError(
  code:
    | 'CORL_ERR_SERVE_JOURNAL'
    | 'CORL_ERR_SERVE_JOURNAL_VERSION'
    | 'CORL_ERR_SERVE_JOURNAL_CORRUPT'
    | 'CORL_ERR_SERVE_JOURNAL_ORDER'
    | 'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
  message: string,
  file: string,
  line?: number,
): CorlError {
  return new CorlError(code, message, { where: line === undefined ? file : `${file}:${line}` });
}

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
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CorlError('CORL_ERR_IO', `expected a readable journal seal at ${file}, got ${(e as Error).message}`, {
      cause: e,
    });
  }
  let best: Seal | undefined;
  for (let off = 0; off + SLOT <= buf.length; off += SLOT) {
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
  private flushing = false;
  private scheduled = false;
  private closed = false;
  private broken?: CorlError;
  /** Records written since open. */
  written = 0;
  /** Duration of each group commit (write + fdatasync) in seconds, and its records (the caller drains it into metrics). */
  onSync?: (seconds: number, records: number) => void;

  private constructor(readonly file: string | undefined) {}

  /** A journal that keeps nothing (`serve.journal: false`): appends resolve at once, a restart starts empty. */
  static disabled(): Journal {
    return new Journal(undefined);
  }

  /** The seal file of a journal. */
  static sealFile(file: string): string {
    return `${file}.seal`;
  }

  /**
   * Open `file`: replay it (checking that it belongs to `cohort` and that nothing is missing),
   * let `prepare` check the records' meaning and choose what a compaction keeps, then rewrite the
   * file atomically as a new generation with those records, seal it, and open it for appends.
   */
  static async open(
    file: string,
    cohort: JournalCohort,
    prepare: (replay: Replay) => { keep: JournalRecord[]; exchange: JournalExchangeState },
  ): Promise<{ journal: Journal; replay: Replay }> {
    const replay = Journal.read(file, cohort);
    const { keep, exchange } = prepare(replay);
    const journal = new Journal(file);
    journal.gen = (replay.header?.gen ?? 0) + 1;
    const headerLine = encodeLine({
      t: 'open',
      v: JOURNAL_VERSION,
      gen: journal.gen,
      records: keep.length,
      agents: cohort.agents,
      topology: cohort.topology,
      reward: cohort.reward,
      exchange,
    });
    journal.id = SUFFIX.exec(headerLine.trimEnd())![1]!;
    let text = headerLine;
    keep.forEach((r, i) => {
      text += encodeLine({ q: i + 1, ...r });
    });
    journal.seq = keep.length;
    // The new generation first, then its seal: a crash between the two leaves a seal of the
    // previous generation, which the next start accepts only while nothing was appended.
    writeFileAtomicSync(file, text);
    fsyncDir(file);
    const seal = sealSlot({ gen: journal.gen, id: journal.id, records: journal.seq });
    writeFileAtomicSync(Journal.sealFile(file), Buffer.concat([seal, seal]));
    fsyncDir(file);
    try {
      journal.fd = await fsp.open(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_DSYNC);
      journal.sealFd = fs.openSync(Journal.sealFile(file), 'r+');
    } catch (e) {
      await journal.fd?.close();
      throw new CorlError(
        'CORL_ERR_IO',
        `expected to open the journal ${file} for appending, got ${(e as Error).message}`,
        { cause: e },
      );
    }
    return { journal, replay: { ...replay, records: keep, lines: keep.map((_, i) => i + 2) } };
  }

  /** Parse a journal file (missing file: empty) and check its integrity against the header and seal. Exposed for tests and tools. */
  static read(file: string, cohort: JournalCohort): Replay {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new CorlError('CORL_ERR_IO', `expected a readable journal at ${file}, got ${(e as Error).message}`, {
          cause: e,
        });
      text = '';
    }
    const seal = readSeal(Journal.sealFile(file));
    const lines = text.split('\n');
    // A last line without its newline was being written when the service died.
    let torn = lines.pop() !== '';
    if (lines.length === 0) {
      if (seal !== undefined && (seal === 'unreadable' || seal.records > 0)) {
        throw journalError(
          'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
          `expected the journal ${file} that its seal describes, got ${text.length ? 'no complete header line' : 'an empty or missing file'}`,
          file,
        );
      }
      return { records: [], lines: [], tornTail: torn && text.length > 0, notes: [] };
    }
    const head = readHeader(file, lines[0]!, cohort);
    if (head.v === 1) return Journal.readLegacy(file, lines, torn);
    const header = checkHeaderV2(file, lines[0]!, head);
    const id = SUFFIX.exec(lines[0]!)![1]!;
    const read = readRecords(file, lines, torn);
    const { records, numbers } = read;
    torn = read.torn;
    const tornNote = torn ? ' (after dropping a torn last line)' : '';
    if (records.length < header.records) {
      throw journalError(
        'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
        `expected at least ${header.records} records in ${file} (its header, written by the last compaction, says so), got ${records.length}${tornNote}: the file was cut short`,
        file,
      );
    }
    const notes = checkSeal(file, seal, header, id, records.length, tornNote);
    return { records, lines: numbers, header, tornTail: torn, notes };
  }

  /** Version 1: plain JSONL without sequence numbers or checksums; read as before, rewritten as version 2. */
  private static readLegacy(file: string, lines: string[], torn: boolean): Replay {
    const records: JournalRecord[] = [];
    const numbers: number[] = [];
    lines.forEach((line, i) => {
      if (i === 0 || line.trim() === '') return;
      let r: unknown;
      try {
        r = JSON.parse(line);
      } catch {
        throw journalError(
          'CORL_ERR_SERVE_JOURNAL_CORRUPT',
          `expected a JSON record at line ${i + 1} of ${file}, got ${JSON.stringify(line.slice(0, 60))}`,
          file,
          i + 1,
        );
      }
      records.push(r as JournalRecord);
      numbers.push(i + 1);
    });
    return {
      records,
      lines: numbers,
      tornTail: torn,
      notes: [
        `journal: ${file} is in format version 1 (no sequence numbers or checksums, so truncation could not be checked); it is rewritten as version ${JOURNAL_VERSION}`,
      ],
    };
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
    if (!this.flushing && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.flush();
      });
    }
    return done;
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    while (this.queue.length && !this.broken) {
      const batch = this.queue;
      const waiters = this.waiters;
      this.queue = [];
      this.waiters = [];
      const first = this.seq;
      const bufs = encodeBatch(batch, first);
      try {
        const t = performance.now();
        await writeAll(this.fd!, bufs);
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

/** Characters of encoded lines joined into one buffer before the next starts. */
const CHUNK_CHARS = 4 * 1024 * 1024;

/** Lines of `records`, numbered from `seq` + 1, as buffers of about CHUNK_CHARS each (never one string of the whole batch). */
function encodeBatch(records: readonly JournalRecord[], seq: number): Buffer[] {
  const bufs: Buffer[] = [];
  let text = '';
  for (const r of records) {
    const line = encodeLine({ q: ++seq, ...r });
    if (text.length + line.length > CHUNK_CHARS && text.length > 0) {
      bufs.push(Buffer.from(text, 'utf8'));
      text = '';
    }
    text += line;
  }
  if (text.length > 0) bufs.push(Buffer.from(text, 'utf8'));
  return bufs;
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

/** A journal's header line as parsed, before its fields are checked. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a line read from disk, checked field by field
type ParsedHeader = Record<string, any>;

/** Line 1 of a journal: a header of this cohort (agents, topology, reward), version 1 or current. */
function readHeader(file: string, line: string, cohort: JournalCohort): ParsedHeader {
  let head: ParsedHeader | undefined;
  try {
    head = JSON.parse(line);
  } catch {
    head = undefined;
  }
  if (!head || typeof head !== 'object' || head.t !== 'open') {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL',
      `expected a journal header ({"t":"open",…}) at line 1 of ${file}, got ${JSON.stringify(line.slice(0, 60))}`,
      file,
      1,
    );
  }
  if (head.v !== 1 && head.v !== JOURNAL_VERSION) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_VERSION',
      `expected a journal of format version 1 or ${JOURNAL_VERSION}, got version ${JSON.stringify(head.v)} in ${file}`,
      file,
      1,
    );
  }
  const same =
    JSON.stringify(head.agents) === JSON.stringify(cohort.agents) &&
    head.topology === cohort.topology &&
    head.reward === cohort.reward;
  if (!same) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL',
      `expected a journal of agents [${cohort.agents.join(', ')}] with ${cohort.topology} and ${cohort.reward}, got one of agents [${(Array.isArray(head.agents) ? head.agents : []).join(', ')}] with ${head.topology} and ${head.reward}`,
      file,
      1,
    );
  }
  return head;
}

/** A current-version header: its checksum passes and it carries gen, records and the exchange state. */
function checkHeaderV2(file: string, line: string, head: ParsedHeader): JournalHeader {
  if (
    verifyLine(line) === undefined ||
    !Number.isSafeInteger(head.gen) ||
    head.gen < 1 ||
    !Number.isSafeInteger(head.records) ||
    head.records < 0 ||
    !head.exchange ||
    !Number.isSafeInteger(head.exchange.newest) ||
    !Number.isSafeInteger(head.exchange.maxStepsAhead)
  ) {
    throw journalError(
      'CORL_ERR_SERVE_JOURNAL_CORRUPT',
      `expected the header of ${file} to pass its checksum and carry gen, records and exchange, got ${JSON.stringify(line.slice(0, 80))}`,
      file,
      1,
    );
  }
  return head as JournalHeader;
}

/** Records of lines 2…: each passes its checksum and carries the next sequence number; a damaged last line is a torn tail. */
function readRecords(
  file: string,
  lines: readonly string[],
  torn: boolean,
): { records: JournalRecord[]; numbers: number[]; torn: boolean } {
  const records: JournalRecord[] = [];
  const numbers: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const no = i + 1;
    if (verifyLine(line) === undefined) {
      // The final line may be damaged by a crash during its write even with its newline present
      // (an unflushed page): it is a torn tail like a line without newline. Earlier ones are not.
      if (i === lines.length - 1 && !torn) {
        torn = true;
        break;
      }
      throw journalError(
        'CORL_ERR_SERVE_JOURNAL_CORRUPT',
        `expected the record at line ${no} of ${file} to pass its checksum, got ${JSON.stringify(line.slice(0, 60))}: the file was changed or damaged in the middle`,
        file,
        no,
      );
    }
    let r: { q?: unknown; c?: unknown } | null;
    try {
      r = JSON.parse(line);
    } catch {
      throw journalError(
        'CORL_ERR_SERVE_JOURNAL_CORRUPT',
        `expected a JSON record at line ${no} of ${file}, got ${JSON.stringify(line.slice(0, 60))}`,
        file,
        no,
      );
    }
    const expected = records.length + 1;
    if (r?.q !== expected) {
      const what =
        typeof r?.q === 'number' && r.q > expected
          ? `record ${r.q}: records ${expected}${r.q - 1 > expected ? `–${r.q - 1}` : ''} are missing`
          : `record ${JSON.stringify(r?.q)}: lines are out of order or repeated`;
      throw journalError(
        'CORL_ERR_SERVE_JOURNAL_ORDER',
        `expected record ${expected} at line ${no} of ${file}, got ${what}`,
        file,
        no,
      );
    }
    delete r.q;
    delete r.c;
    records.push(r as JournalRecord);
    numbers.push(no);
  }
  return { records, numbers, torn };
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
