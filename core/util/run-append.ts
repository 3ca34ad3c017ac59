// An append-only file a metrics sink writes one line per record to, each record exactly once across
// a kill and a resume: the way a sink uses `MetricsSink.start`'s `resumeAt` for a file. Runs may
// follow one another into the same file (each run's lines are its own stretch of it); a new run
// remembers in its run directory where its stretch begins, and a resumed run cuts its stretch back
// to the records of the steps up to its checkpoint (the rest come again, identically).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError, errorLine } from '../errors';
import { openUserAppend } from './files';
import { writeFileAtomicSync } from './fs';

/** The run an append-only sink file belongs to (a `MetricsRun`'s `dir` and `resumeAt`). */
export interface AppendRun {
  readonly dir: string;
  readonly resumeAt: number | null;
}

/** One run's stretch of an append-only file of records, one per line. */
export class RunAppendFile {
  private constructor(
    private fd: number | undefined,
    readonly file: string,
  ) {}

  /**
   * Open `file` for `run`: a new run marks where its lines begin (in `<run dir>/sinks/`); a resumed
   * run keeps, from its mark on, the complete lines whose step (`stepOf`) is at most
   * `run.resumeAt`, and cuts the rest (a torn last line included), appending what it cut to
   * `<file>.after-checkpoint`. A run without a mark (started by an older corl) cuts, from the
   * end, the lines past its checkpoint. Without `run` (a sink used outside a training run): plain
   * appending. Refuses what is not a regular file (CORL_ERR_IO naming it).
   */
  static open(file: string, run: AppendRun | undefined, stepOf: (line: string) => number | undefined): RunAppendFile {
    if (run) refuseRunFile(file, run.dir);
    const fd = open(file);
    const f = new RunAppendFile(fd, file);
    try {
      refuseOtherContent(file, fd, stepOf);
      if (run) {
        const mark = path.join(
          run.dir,
          'sinks',
          `${createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 16)}.json`,
        );
        if (run.resumeAt === null) {
          endLine(fd);
          writeFileAtomicSync(mark, JSON.stringify({ file: path.resolve(file), start: fs.fstatSync(fd).size }) + '\n');
        } else cutBack(file, fd, startOf(mark), run.resumeAt, stepOf);
      }
    } catch (e) {
      f.close();
      throw e instanceof CorlError ? e : ioError(file, e);
    }
    return f;
  }

  /** Append text (whole lines). */
  append(text: string): void {
    if (this.fd === undefined) throw new CorlError('CORL_ERR_IO', `expected ${this.file} open, got it closed`);
    try {
      fs.writeSync(this.fd, text);
    } catch (e) {
      throw ioError(this.file, e);
    }
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

function open(file: string): number {
  try {
    return openUserAppend(file);
  } catch (e) {
    throw ioError(file, e);
  }
}

function ioError(file: string, e: unknown): CorlError {
  const code = (e as NodeJS.ErrnoException).code;
  return new CorlError(
    'CORL_ERR_IO',
    `expected a regular file to append to, got ${code === 'EISDIR' ? 'a folder' : errorLine(e)}`,
    {
      where: file,
      hint: 'give a file path (its folder is created), outside /proc, /sys and /dev',
    },
  );
}

/** A file that ends inside a line (another run's torn write) gets its newline, so that this run's lines stay whole. */
function endLine(fd: number): void {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return;
  const last = Buffer.alloc(1);
  fs.readSync(fd, last, 0, 1, size - 1);
  if (last[0] !== 10) fs.writeSync(fd, '\n');
}

/** Where this run's lines begin, from its mark; undefined without one. */
function startOf(mark: string): number | undefined {
  try {
    const start = (JSON.parse(fs.readFileSync(mark, 'utf8')) as { start?: unknown }).start;
    return typeof start === 'number' && Number.isInteger(start) && start >= 0 ? start : undefined;
  } catch {
    return undefined;
  }
}

/** Keep this run's complete lines up to the checkpoint's step; cut what follows them. */
function cutBack(
  file: string,
  fd: number,
  start: number | undefined,
  resumeAt: number,
  stepOf: (line: string) => number | undefined,
): void {
  const size = fs.fstatSync(fd).size;
  const from = Math.min(start ?? 0, size);
  const bytes = Buffer.alloc(size - from);
  fs.readSync(fd, bytes, 0, bytes.length, from);
  const kept = start === undefined ? keptFromEnd(bytes, resumeAt, stepOf) : keptFromStart(bytes, resumeAt, stepOf);
  if (from + kept >= size) return;
  // Nothing written is lost: the cut lines go to a sibling file, as the run's own metrics.jsonl does.
  fs.appendFileSync(`${file}.after-checkpoint`, bytes.subarray(kept));
  fs.ftruncateSync(fd, from + kept);
}

/** Bytes of the leading complete lines whose step is at most `resumeAt`. */
function keptFromStart(bytes: Buffer, resumeAt: number, stepOf: (line: string) => number | undefined): number {
  let at = 0;
  for (;;) {
    const nl = bytes.indexOf(10, at);
    if (nl < 0) return at;
    const step = stepOf(bytes.toString('utf8', at, nl));
    if (step === undefined || step > resumeAt) return at;
    at = nl + 1;
  }
}

/** Bytes before the trailing lines past `resumeAt` (and a torn last line). */
function keptFromEnd(bytes: Buffer, resumeAt: number, stepOf: (line: string) => number | undefined): number {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] !== 10) end = bytes.lastIndexOf(10) + 1;
  while (end > 0) {
    const prev = bytes.lastIndexOf(10, end - 2) + 1;
    const step = stepOf(bytes.toString('utf8', prev, end - 1));
    if (step !== undefined && step <= resumeAt) break;
    end = prev;
  }
  return end;
}

/** The files corl itself writes in a run directory: a sink appending to one would corrupt the run. */
const RUN_FILES = [
  'metrics.jsonl',
  'rollouts.jsonl',
  'timing.jsonl',
  'state.json',
  'config.json',
  'config.source.json',
  'run.json',
];

/** The path with its folder's symbolic links resolved (as far as it exists). */
function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    const up = path.dirname(p);
    return up === p ? p : path.join(real(up), path.basename(p));
  }
}

/** Refuse a sink file that is one of the run's own files (by path, or the same file under another name). */
function refuseRunFile(file: string, runDir: string): void {
  const target = real(path.resolve(file));
  const st = fs.statSync(target, { throwIfNoEntry: false });
  for (const name of RUN_FILES) {
    const own = real(path.join(runDir, name));
    const ost = st && fs.statSync(own, { throwIfNoEntry: false });
    if (target === own || (st && ost && st.ino === ost.ino && st.dev === ost.dev))
      throw new CorlError('CORL_ERR_IO', `expected a file of the sink's own, got the run's ${name}`, {
        where: file,
        hint: 'give the sink another path: the run writes its own metrics.jsonl anyway',
      });
  }
}

/** Refuse appending records to a file that holds something else (a config, data, code): its first line must be a record. */
function refuseOtherContent(file: string, fd: number, stepOf: (line: string) => number | undefined): void {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return;
  const head = Buffer.alloc(Math.min(size, 1 << 20));
  fs.readSync(fd, head, 0, head.length, 0);
  const nl = head.indexOf(10);
  const first = head.toString('utf8', 0, nl < 0 ? head.length : nl);
  if (stepOf(first) === undefined)
    throw new CorlError(
      'CORL_ERR_IO',
      `expected a file of metrics records to append to (one JSON record with a step per line), got one whose first line is ${JSON.stringify(first.slice(0, 60))}`,
      { where: file, hint: 'give the sink a new file, or one it wrote before: appending would damage this one' },
    );
}
