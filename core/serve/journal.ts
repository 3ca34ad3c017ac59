import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import { CorlError } from '../errors';
import { writeFileAtomicSync } from '../util/fs';

/** The first line of a journal: which cohort it belongs to. */
export interface JournalHeader {
  readonly t: 'open';
  readonly v: 1;
  readonly agents: readonly string[];
  readonly topology: string;
  readonly reward: string;
}

/** One journaled fact. `n` is the exchange's namespace (`groups` or `get_reward`). */
export type JournalRecord =
  | { readonly t: 'keys'; readonly n: string; readonly a: string; readonly s: number; readonly g: string; readonly h: string; readonly k: readonly (string | null)[] }
  | { readonly t: 'answer'; readonly n: string; readonly a: string; readonly s: number; readonly g: string; readonly h: string; readonly r: unknown };

/** What replaying a journal found. */
export interface Replay {
  readonly records: JournalRecord[];
  /** A torn last line (the service died mid-write) that was dropped. */
  readonly tornTail: boolean;
}

/**
 * The label journal: append-only JSONL, replayed at start. Appends are group-committed: every
 * record handed in while a write is in flight goes out in the next single write + fdatasync, and
 * each `append` resolves only once its record is on disk, so an answer is never sent before the
 * facts it rests on are durable.
 */
export class Journal {
  private fh?: fsp.FileHandle;
  private queue: string[] = [];
  private waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;
  private closed = false;
  /** Records written since open. */
  written = 0;
  /** Durations of each fdatasync in seconds (the caller drains it into metrics). */
  onSync?: (seconds: number, records: number) => void;

  private constructor(readonly file: string) {}

  /**
   * Open `file`: replay it (checking that it belongs to `header`'s cohort), then rewrite it
   * atomically with only the records `keep` retains (compaction), and open it for appends.
   */
  static async open(file: string, header: JournalHeader, keep: (records: JournalRecord[]) => JournalRecord[]): Promise<{ journal: Journal; replay: Replay }> {
    const replay = Journal.read(file, header);
    const kept = keep(replay.records);
    const text = [header, ...kept].map((r) => JSON.stringify(r)).join('\n') + '\n';
    writeFileAtomicSync(file, text);
    const journal = new Journal(file);
    try {
      journal.fh = await fsp.open(file, 'a');
    } catch (e) {
      throw new CorlError('CORL_ERR_IO', `expected to open the journal ${file} for appending, got ${(e as Error).message}`, { cause: e });
    }
    return { journal, replay: { records: kept, tornTail: replay.tornTail } };
  }

  /** Parse a journal file (missing file: empty). Exposed for tests and tools. */
  static read(file: string, header: JournalHeader): Replay {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], tornTail: false };
      throw new CorlError('CORL_ERR_IO', `expected a readable journal at ${file}, got ${(e as Error).message}`, { cause: e });
    }
    const lines = text.split('\n');
    let tornTail = false;
    // A last line without its newline was being written when the service died.
    if (lines[lines.length - 1] === '') lines.pop();
    else if (lines.length) { lines.pop(); tornTail = true; }
    const records: JournalRecord[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let r: any;
      try {
        r = JSON.parse(line);
      } catch {
        throw new CorlError('CORL_ERR_SERVE_JOURNAL', `expected a JSON record at line ${i + 1} of ${file}, got ${JSON.stringify(line.slice(0, 60))}`, { where: `${file}:${i + 1}` });
      }
      if (r?.t === 'open') {
        const same = JSON.stringify(r.agents) === JSON.stringify(header.agents) && r.topology === header.topology && r.reward === header.reward;
        if (!same) {
          throw new CorlError('CORL_ERR_SERVE_JOURNAL', `expected a journal of agents [${header.agents.join(', ')}] with ${header.topology} and ${header.reward}, got one of agents [${(r.agents ?? []).join(', ')}] with ${r.topology} and ${r.reward}`, { where: `${file}:${i + 1}` });
        }
        return;
      }
      const valid = (r?.t === 'keys' && Array.isArray(r.k)) || (r?.t === 'answer' && r.r && typeof r.r === 'object');
      if (!valid || typeof r.n !== 'string' || typeof r.a !== 'string' || !Number.isInteger(r.s) || typeof r.g !== 'string' || typeof r.h !== 'string') {
        throw new CorlError('CORL_ERR_SERVE_JOURNAL', `expected a keys or answer record at line ${i + 1} of ${file}, got ${JSON.stringify(line.slice(0, 60))}`, { where: `${file}:${i + 1}` });
      }
      records.push(r as JournalRecord);
    });
    return { records, tornTail };
  }

  /** Append records; resolves once they are durable. */
  append(records: readonly JournalRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    if (this.closed) return Promise.reject(new CorlError('CORL_ERR_SERVE_UNAVAILABLE', 'expected a running service, got one shutting down (the journal is closed)'));
    for (const r of records) this.queue.push(JSON.stringify(r) + '\n');
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.flushing) void this.flush();
    return done;
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length) {
      const batch = this.queue.join('');
      const count = this.queue.length;
      const waiters = this.waiters;
      this.queue = [];
      this.waiters = [];
      try {
        await this.fh!.write(batch);
        const t = performance.now();
        await this.fh!.datasync();
        this.written += count;
        this.onSync?.((performance.now() - t) / 1000, count);
        for (const w of waiters) w.resolve();
      } catch (e) {
        const err = new CorlError('CORL_ERR_IO', `expected to append to the journal ${this.file}, got ${(e as Error).message}`, { cause: e });
        for (const w of waiters) w.reject(err);
      }
    }
    this.flushing = false;
  }

  /** Finish pending writes and close the file. */
  async close(): Promise<void> {
    while (this.flushing || this.queue.length) await new Promise((r) => setImmediate(r));
    this.closed = true;
    await this.fh?.close();
    this.fh = undefined;
  }
}
