import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { MetricsRecord } from '../contracts/metrics-sink';
import { existingOrGz, readTextMaybeGz } from '../util/gz';
import { CorlError, errorLine } from '../errors';
import { describeStat, outputFolderProblem, readUserText } from '../util/files';
import { CORL_VERSION } from '../version';
import { writeFileAtomic, writeFileAtomicSync, writeJsonAtomic } from '../util/fs';
import { FolderLock, LOCK_FILE } from '../util/folder-lock';
import { parseJson } from '../util/json';
import { checkMetricsRecord, checkRunMeta, checkRunState, insideFolder } from './run-files';
import { isSealed, openText, runSeal, sealedFileContext, sealText, SEALED_SUFFIX, type Seal } from '../util/seal';

/** What a run directory remembers about where training stands (state.json). */
export interface RunState {
  /** Format version of this file. */
  readonly version: 1;
  /** The next step to run (0 before any training). */
  readonly nextStep: number;
  /** Bytes of metrics.jsonl that belong to the state (lines past this are from after the checkpoint). */
  readonly metricsBytes: number;
  /** Bytes of rollouts.jsonl that belong to the state. */
  readonly rolloutsBytes: number;
  /** Checkpoint folder relative to the run directory, or null before the first. */
  readonly checkpoint: string | null;
  /** Whether the run finished all its steps. */
  readonly finished: boolean;
}

/** Facts about how a run was started (run.json). */
export interface RunMeta {
  readonly corl: string;
  /** Absolute path of the config file it was started from, if any. */
  readonly configFile?: string;
  /** Folder that relative paths of the config resolve against. */
  readonly baseDir: string;
  /** Wall-clock start (informational only; never part of metrics; absent from some hand-made folders). */
  readonly startedAt?: string;
  /** A random identity of the run, made at its start: what the held-out reads ledger binds a read to. */
  readonly id?: string;
  /** Whether a reward source of the run reads ground truth or was trained on labels (reports mark such runs). */
  readonly supervised: boolean;
  /** Set when the reward reads no ground truth but was trained on labels (a learned verifier). */
  readonly trainedOnLabels?: boolean;
  /** The plan the run was launched under (`corl compare --plan`), recorded before its first step: its sha256 and file. */
  readonly plan?: { readonly sha256: string; readonly file: string };
  /**
   * Set for a run of a planned comparison: its evaluation records (metrics.jsonl lines of phase
   * "eval") and eval rows are written sealed with the comparison's key (core/util/seal.ts).
   */
  readonly sealed?: true;
}

/** How a run directory is taken for writing. */
export interface TakeOptions {
  /** The folder's lock, already taken by the caller (`corl compare` takes it to wait or skip). */
  readonly lock?: FolderLock;
  /** What takes it, for whoever finds the folder held (default "corl train"). */
  readonly command?: string;
}

/** How a run used labels, as run.json records it: supervised when its reward read ground truth or was trained on labels. */
export function labelUse(loaded: { readonly readsGroundTruth: boolean; readonly trainedOnLabels: boolean }): {
  supervised: boolean;
  trainedOnLabels?: true;
} {
  return {
    supervised: loaded.readsGroundTruth || loaded.trainedOnLabels,
    ...(loaded.trainedOnLabels ? { trainedOnLabels: true as const } : {}),
  };
}

/** The state of a run before its first step. */
const INITIAL_STATE: RunState = {
  version: 1,
  nextStep: 0,
  metricsBytes: 0,
  rolloutsBytes: 0,
  checkpoint: null,
  finished: false,
};

const STATE = 'state.json';
const META = 'run.json';
const CONFIG = 'config.json';
const SOURCE = 'config.source.json';
const METRICS = 'metrics.jsonl';
const ROLLOUTS = 'rollouts.jsonl';

/**
 * What corl writes at the top of a run directory: a new run refuses a folder where one of these
 * exists and corl did not write it (no run.json of corl's beside it), so `--out` never overwrites a
 * user's file.
 */
export const RUN_ENTRIES: readonly string[] = [
  META,
  CONFIG,
  SOURCE,
  STATE,
  METRICS,
  ROLLOUTS,
  'timing.jsonl',
  'report.html',
  'eval',
  'checkpoints',
  'sinks',
  'tensorboard',
  `${METRICS}.after-checkpoint`,
  `${ROLLOUTS}.after-checkpoint`,
];

/**
 * A run directory: config.json (resolved), config.source.json (as given, for resume), run.json,
 * state.json, metrics.jsonl, rollouts.jsonl (optional), eval/*.jsonl, checkpoints/step-N/agent-i/.
 * Every file that describes progress is replaced atomically, so a crash at any moment leaves the
 * last consistent state.
 */
export class RunDirectory {
  private constructor(
    readonly dir: string,
    private lock?: FolderLock,
  ) {}

  /** The seal its evaluations are written with (null: an unsealed run), read once. */
  private sealOf: Seal | null | undefined;

  /** Whether the run's evaluations are sealed (run.json `sealed`). */
  get sealed(): boolean {
    return this.seal() !== null;
  }

  private seal(): Seal | null {
    if (this.sealOf === undefined) this.sealOf = this.meta().sealed === true ? runSeal(this.dir) : null;
    return this.sealOf;
  }

  /** Give the folder's lock back (after the run's last write). Idempotent. */
  release(): void {
    this.lock?.release();
    this.lock = undefined;
  }

  /**
   * Create a new run directory, holding its lock until {@link release}: refuses one that already
   * holds a run, one where a file corl writes exists but corl did not write it, and one whose files
   * would replace the config being read.
   */
  static async create(
    dir: string,
    config: unknown,
    source: unknown,
    meta: Omit<RunMeta, 'corl' | 'startedAt'>,
    take: TakeOptions = {},
  ): Promise<RunDirectory> {
    const abs = path.resolve(dir);
    // A file, FIFO or device, a path under one, or a kernel file system (/proc, /sys): refused before
    // anything is made, in words, never as a stack.
    const problem = outputFolderProblem(abs);
    if (problem !== undefined) {
      throw new CorlError('CORL_ERR_IO', `expected a folder for the run, got ${problem} at ${abs}`, { where: '--out' });
    }
    refuseOwnConfig(abs, meta.configFile);
    refuseRun(abs);
    try {
      await fsp.mkdir(abs, { recursive: true });
    } catch (e) {
      throw new CorlError('CORL_ERR_IO', `expected to create the run folder ${abs}, got ${errorLine(e)}`, {
        where: '--out',
        cause: e,
      });
    }
    const lock = take.lock ?? FolderLock.acquire(abs, { command: take.command ?? 'corl train' });
    const run = new RunDirectory(abs, lock);
    try {
      // again under the lock: another process may have started a run here meanwhile
      refuseRun(abs);
      refuseForeign(abs);
      await writeJsonAtomic(path.join(abs, META), {
        corl: CORL_VERSION,
        ...meta,
        startedAt: new Date().toISOString(),
        id: randomUUID(),
      } satisfies RunMeta);
      await writeJsonAtomic(path.join(abs, CONFIG), config);
      await writeJsonAtomic(path.join(abs, SOURCE), source);
      await writeFileAtomic(path.join(abs, METRICS), '');
      await run.writeState(INITIAL_STATE);
    } catch (e) {
      run.release();
      throw e;
    }
    return run;
  }

  /** Open an existing run for resuming. */
  static open(dir: string): RunDirectory {
    const abs = path.resolve(dir);
    if (
      !fs.existsSync(path.join(abs, SOURCE)) ||
      (!fs.existsSync(path.join(abs, STATE)) && !fs.existsSync(path.join(abs, META)))
    ) {
      throw new CorlError(
        'CORL_ERR_RUN_NOT_FOUND',
        `expected a run directory with state.json and config.source.json, got ${abs}`,
        {
          where: '--resume',
          hint: 'a run killed before it wrote its config can be started again with the same --out',
        },
      );
    }
    checkLayout(abs);
    return new RunDirectory(abs);
  }

  /**
   * Open a run to continue training it: removes the temporary files that atomic writes of a killed
   * process left, and gives a run killed after run.json but before its first state.json the state of
   * step 0. Returns a note to show in that case (null otherwise).
   */
  static resume(dir: string, take: TakeOptions = {}): { run: RunDirectory; note: string | null } {
    const opened = RunDirectory.open(dir);
    const lock = take.lock ?? FolderLock.acquire(opened.dir, { command: take.command ?? 'corl train --resume' });
    const run = new RunDirectory(opened.dir, lock);
    try {
      run.meta();
      if (fs.existsSync(path.join(run.dir, STATE))) run.state();
    } catch (e) {
      run.release();
      throw e;
    }
    run.removeStaleTemporaries();
    if (fs.existsSync(path.join(run.dir, STATE))) return { run, note: null };
    writeFileAtomicSync(path.join(run.dir, STATE), JSON.stringify(INITIAL_STATE, null, 2) + '\n');
    writeFileAtomicSync(path.join(run.dir, METRICS), '');
    return { run, note: `run ${run.dir} was stopped before its first step (no state.json); training starts at step 0` };
  }

  /** Remove the `*.tmp-*` files that atomic writes of a killed process left behind. */
  private removeStaleTemporaries(): void {
    const sweep = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) sweep(file);
        else if (/\.tmp-\d+-\d+$/.test(entry.name)) fs.rmSync(file, { force: true });
      }
    };
    sweep(this.dir);
  }

  /** The config as given at the start (with CLI overrides), for re-validation on resume. */
  source(): unknown {
    const v = this.readJson(SOURCE);
    // a config is an object: null, a list or a number (a damaged file) is refused here, in words
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      throw new CorlError(
        'CORL_ERR_RUN_CORRUPT',
        `expected the config the run started with (a JSON object), got ${v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v}`,
        { where: path.join(this.dir, SOURCE), hint: 'restore config.source.json from a copy of the run folder' },
      );
    return v;
  }

  /** The resolved config. */
  config(): unknown {
    return this.readJson(CONFIG);
  }

  meta(): RunMeta {
    return checkRunMeta(this.readJson(META), path.join(this.dir, META));
  }

  /** state.json, validated: its checkpoint, when it names one, is a folder inside this run's checkpoints/. */
  state(): RunState {
    const file = path.join(this.dir, STATE);
    const s = checkRunState(this.readJson(STATE), file);
    if (s.checkpoint !== null) insideFolder(this.dir, this.dir, s.checkpoint, `${file} checkpoint`);
    return s;
  }

  /** The absolute folder of the state's checkpoint (checked to stay inside the run folder). */
  checkpointPath(rel: string): string {
    return insideFolder(this.dir, this.dir, rel, `${path.join(this.dir, STATE)} checkpoint`);
  }

  async writeState(state: RunState): Promise<void> {
    this.lock?.assertHeld();
    await writeJsonAtomic(path.join(this.dir, STATE), state);
  }

  /** Replace the resolved config (after a resume that extended the number of steps). */
  async writeConfig(config: unknown, source: unknown): Promise<void> {
    this.lock?.assertHeld();
    await writeJsonAtomic(path.join(this.dir, CONFIG), config);
    await writeJsonAtomic(path.join(this.dir, SOURCE), source);
  }

  get metricsFile(): string {
    return path.join(this.dir, METRICS);
  }

  get rolloutsFile(): string {
    return path.join(this.dir, ROLLOUTS);
  }

  /** Append one metrics record (an evaluation record of a sealed run sealed: its step, agent and phase only in the clear). */
  appendMetrics(record: MetricsRecord): void {
    this.lock?.assertHeld();
    const seal = record.phase === 'eval' ? this.seal() : null;
    const line = seal
      ? JSON.stringify({
          step: record.step,
          agent: record.agent,
          phase: record.phase,
          sealed: sealText(seal, JSON.stringify(record), metricsContext(this.dir, record.step, record.agent)),
        })
      : JSON.stringify(record);
    fs.appendFileSync(this.metricsFile, line + '\n');
  }

  /** Append one rollout record. */
  appendRollout(record: unknown): void {
    this.lock?.assertHeld();
    fs.appendFileSync(this.rolloutsFile, JSON.stringify(record) + '\n');
  }

  /** Current sizes of the append-only files, flushed to disk (what a checkpoint's state records). */
  syncedSizes(): { metricsBytes: number; rolloutsBytes: number } {
    const size = (f: string): number => {
      if (!fs.existsSync(f)) return 0;
      const fd = fs.openSync(f, 'r+');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return fs.statSync(f).size;
    };
    return { metricsBytes: size(this.metricsFile), rolloutsBytes: size(this.rolloutsFile) };
  }

  /**
   * Cut the append-only files back to what the state records: the lines after the checkpoint are
   * produced again, identically, by the resumed run. The cut lines are kept in `*.after-checkpoint`
   * so nothing written is lost.
   */
  truncateTo(state: RunState): void {
    this.lock?.assertHeld();
    for (const [file, bytes] of [
      [this.metricsFile, state.metricsBytes],
      [this.rolloutsFile, state.rolloutsBytes],
    ] as const) {
      if (!fs.existsSync(file)) continue;
      const size = fs.statSync(file).size;
      if (size < bytes) {
        throw new CorlError(
          'CORL_ERR_RUN_CORRUPT',
          `expected ${path.basename(file)} to hold at least ${bytes} bytes, got ${size}`,
          { where: file },
        );
      }
      if (size > bytes) {
        const fd = fs.openSync(file, 'r');
        const tail = Buffer.alloc(size - bytes);
        try {
          fs.readSync(fd, tail, 0, tail.length, bytes);
        } finally {
          fs.closeSync(fd);
        }
        fs.appendFileSync(`${file}.after-checkpoint`, tail);
        fs.truncateSync(file, bytes);
      }
    }
  }

  /**
   * Every metrics record written so far (from metrics.jsonl, or metrics.jsonl.gz in a compacted
   * copy). A sealed evaluation record is opened with the comparison's key, or left out with
   * `sealed: 'hide'` (what shows a run on its own: its evaluations open at the plan's looks only).
   */
  readMetrics(o: { readonly sealed?: 'open' | 'hide' } = {}): MetricsRecord[] {
    const file = existingOrGz(this.metricsFile);
    const text = fs.existsSync(file) ? readTextMaybeGz(file) : '';
    const hide = o.sealed === 'hide';
    return text
      .split('\n')
      .filter(Boolean)
      .flatMap((line, i) => {
        let value: unknown;
        try {
          value = parseJson(line);
        } catch {
          throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected a JSON line, got invalid JSON', {
            where: `${file}:${i + 1}`,
          });
        }
        if (hide && value !== null && typeof value === 'object' && 'sealed' in value) return [];
        return [checkMetricsRecord(this.opened(value, `${file}:${i + 1}`), file, i + 1)];
      });
  }

  /** A metrics line as written: a sealed one opened with the comparison's key, checked to be the record its clear fields name. */
  private opened(value: unknown, where: string): unknown {
    if (value === null || typeof value !== 'object' || !('sealed' in value)) return value;
    const v = value as { step?: unknown; agent?: unknown; sealed?: unknown };
    if (typeof v.sealed !== 'string' || !isSealed(v.sealed))
      throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected "sealed" to be a sealed text (corl-sealed-1:…)', {
        where,
      });
    const text = openText(runSeal(this.dir), v.sealed, metricsContext(this.dir, v.step, v.agent), where);
    const inner = parseJson(text) as { step?: unknown; agent?: unknown };
    if (inner.step !== v.step || inner.agent !== v.agent)
      throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected a sealed record of the step and agent its line names', {
        where,
      });
    return inner;
  }

  /** Folder of the checkpoint written after `step` steps. */
  checkpointDir(steps: number): string {
    return path.join('checkpoints', `step-${String(steps).padStart(6, '0')}`);
  }

  /** Absolute path of a path relative to the run directory. */
  resolve(rel: string): string {
    return path.join(this.dir, rel);
  }

  /** Write a file of the eval folder atomically (a sealed run's as `<name>.sealed`, sealed). */
  async writeEval(name: string, lines: readonly unknown[]): Promise<void> {
    this.lock?.assertHeld();
    const text = lines.map((l) => JSON.stringify(l)).join('\n') + (lines.length ? '\n' : '');
    const seal = this.seal();
    if (seal) {
      const file = path.join(this.dir, 'eval', `${name}${SEALED_SUFFIX}`);
      await writeFileAtomic(file, sealText(seal, text, sealedFileContext(file)) + '\n');
      return;
    }
    await writeFileAtomic(path.join(this.dir, 'eval', name), text);
  }

  private readJson(name: string): unknown {
    const file = path.join(this.dir, name);
    try {
      // Opened without blocking: a FIFO or a device planted in the run folder is refused, not waited on.
      return parseJson(readUserText(file));
    } catch (e) {
      throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected readable JSON, got ${(e as Error).message}`, {
        where: file,
      });
    }
  }
}

/** What a sealed metrics line is bound to: its run (config/seed-i), step and agent (a line moved elsewhere does not open). */
function metricsContext(dir: string, step: unknown, agent: unknown): string {
  return `${path.basename(path.dirname(dir))}/${path.basename(dir)}/metrics.jsonl step ${String(step)} agent ${String(agent)}`;
}

/** Refuse a run folder whose config.json or config.source.json would be the config file being read. */
function refuseOwnConfig(dir: string, configFile: string | undefined): void {
  if (configFile === undefined) return;
  const real = (p: string): string => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const given = real(configFile);
  for (const name of RUN_ENTRIES)
    if (real(path.join(dir, name)) === given)
      throw new CorlError(
        'CORL_ERR_RUN_OUT_FOREIGN',
        `expected a run folder that does not hold the config being read, got ${dir}, where the run's ${name} would replace ${configFile}`,
        {
          where: '--out',
          hint: 'give --out a new folder (e.g. runs/<name>): corl writes config.json, report.html and more there',
        },
      );
}

/** Refuse a folder where a file corl writes exists but corl did not write it (no run.json of corl's). */
function refuseForeign(dir: string): void {
  const metaFile = path.join(dir, META);
  if (fs.existsSync(metaFile)) {
    // corl's own killed start: a valid run.json, written first
    let value: unknown;
    try {
      value = parseJson(readUserText(metaFile));
    } catch {
      value = undefined;
    }
    try {
      checkRunMeta(value, metaFile);
      return;
    } catch {
      throw foreign(dir, [META]);
    }
  }
  const found = RUN_ENTRIES.filter((n) => n !== LOCK_FILE && fs.existsSync(path.join(dir, n)));
  if (found.length) throw foreign(dir, found);
}

function foreign(dir: string, names: readonly string[]): CorlError {
  return new CorlError(
    'CORL_ERR_RUN_OUT_FOREIGN',
    `expected a new or empty folder for the run, got ${dir}, which holds ${names.join(', ')} that corl did not write`,
    {
      where: '--out',
      hint: 'give --out a new folder (e.g. runs/<name>): corl never overwrites files it did not write',
    },
  );
}

/**
 * Refuse a folder that holds a run (state.json). One with corl's run.json but no state.json is a
 * start killed before its first state: nothing was trained, so starting again over it loses nothing.
 */
function refuseRun(dir: string): void {
  if (fs.existsSync(path.join(dir, STATE)))
    throw new CorlError(
      'CORL_ERR_RUN_EXISTS',
      `expected an empty or new folder for the run, got ${dir}, which already holds a run`,
      { where: '--out' },
    );
}

const FOLDERS = new Set(['eval', 'checkpoints', 'sinks', 'tensorboard']);

/** Every entry corl writes at the top of a run folder is of the kind corl writes: a folder or a regular file, never a link. */
function checkLayout(dir: string): void {
  for (const name of RUN_ENTRIES) {
    const st = fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false });
    if (!st) continue;
    const want = FOLDERS.has(name) ? 'a folder' : 'a regular file';
    const ok = FOLDERS.has(name) ? st.isDirectory() : st.isFile();
    if (!ok)
      throw new CorlError(
        'CORL_ERR_RUN_CORRUPT',
        `expected ${name} to be ${want}, got ${st.isSymbolicLink() ? 'a symbolic link' : describeStat(st)}`,
        {
          where: path.join(dir, name),
          hint: 'corl writes it there as ' + want + ': restore the run folder from a copy',
        },
      );
  }
}
