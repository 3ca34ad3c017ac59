import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { MetricsRecord } from '../contracts/metrics-sink';
import { existingOrGz, readTextMaybeGz } from '../util/gz';
import { CorlError, errorLine } from '../errors';
import { outputFolderProblem, readUserText } from '../util/files';
import { CORL_VERSION } from '../version';
import { writeFileAtomic, writeFileAtomicSync, writeJsonAtomic } from '../util/fs';

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
  /** Wall-clock start (informational only; never part of metrics). */
  readonly startedAt: string;
  /** Whether a reward source of the run reads ground truth or was trained on labels (reports mark such runs). */
  readonly supervised: boolean;
  /** Set when the reward reads no ground truth but was trained on labels (a learned verifier). */
  readonly trainedOnLabels?: boolean;
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
 * A run directory: config.json (resolved), config.source.json (as given, for resume), run.json,
 * state.json, metrics.jsonl, rollouts.jsonl (optional), eval/*.jsonl, checkpoints/step-N/agent-i/.
 * Every file that describes progress is replaced atomically, so a crash at any moment leaves the
 * last consistent state.
 */
export class RunDirectory {
  private constructor(readonly dir: string) {}

  /** Create a new run directory; refuses one that already holds a run. */
  static async create(
    dir: string,
    config: unknown,
    source: unknown,
    meta: Omit<RunMeta, 'corl' | 'startedAt'>,
  ): Promise<RunDirectory> {
    const abs = path.resolve(dir);
    // A folder with config files but no state.json is a start killed before its first state: nothing
    // was trained, so starting again over it loses nothing.
    if (fs.existsSync(path.join(abs, STATE))) {
      throw new CorlError(
        'CORL_ERR_RUN_EXISTS',
        `expected an empty or new folder for the run, got ${abs}, which already holds a run`,
        { where: '--out' },
      );
    }
    // A file, FIFO or device, a path under one, or a kernel file system (/proc, /sys): refused before
    // anything is made, in words, never as a stack.
    const problem = outputFolderProblem(abs);
    if (problem !== undefined) {
      throw new CorlError('CORL_ERR_IO', `expected a folder for the run, got ${problem} at ${abs}`, { where: '--out' });
    }
    const run = new RunDirectory(abs);
    try {
      await fsp.mkdir(abs, { recursive: true });
    } catch (e) {
      throw new CorlError('CORL_ERR_IO', `expected to create the run folder ${abs}, got ${errorLine(e)}`, {
        where: '--out',
        cause: e,
      });
    }
    await writeJsonAtomic(path.join(abs, CONFIG), config);
    await writeJsonAtomic(path.join(abs, SOURCE), source);
    await writeJsonAtomic(path.join(abs, META), {
      corl: CORL_VERSION,
      ...meta,
      startedAt: new Date().toISOString(),
    } satisfies RunMeta);
    await run.writeState(INITIAL_STATE);
    await writeFileAtomic(path.join(abs, METRICS), '');
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
    return new RunDirectory(abs);
  }

  /**
   * Open a run to continue training it: removes the temporary files that atomic writes of a killed
   * process left, and gives a run killed after run.json but before its first state.json the state of
   * step 0. Returns a note to show in that case (null otherwise).
   */
  static resume(dir: string): { run: RunDirectory; note: string | null } {
    const run = RunDirectory.open(dir);
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
    return this.readJson(SOURCE);
  }

  /** The resolved config. */
  config(): unknown {
    return this.readJson(CONFIG);
  }

  meta(): RunMeta {
    return this.readJson(META) as RunMeta;
  }

  state(): RunState {
    const s = this.readJson(STATE) as RunState;
    if (s.version !== 1 || !Number.isInteger(s.nextStep) || !Number.isInteger(s.metricsBytes)) {
      throw new CorlError(
        'CORL_ERR_RUN_CORRUPT',
        `expected a state.json of version 1, got ${JSON.stringify(s).slice(0, 100)}`,
        { where: path.join(this.dir, STATE) },
      );
    }
    return s;
  }

  async writeState(state: RunState): Promise<void> {
    await writeJsonAtomic(path.join(this.dir, STATE), state);
  }

  /** Replace the resolved config (after a resume that extended the number of steps). */
  async writeConfig(config: unknown, source: unknown): Promise<void> {
    await writeJsonAtomic(path.join(this.dir, CONFIG), config);
    await writeJsonAtomic(path.join(this.dir, SOURCE), source);
  }

  get metricsFile(): string {
    return path.join(this.dir, METRICS);
  }

  get rolloutsFile(): string {
    return path.join(this.dir, ROLLOUTS);
  }

  /** Append one metrics record. */
  appendMetrics(record: MetricsRecord): void {
    fs.appendFileSync(this.metricsFile, JSON.stringify(record) + '\n');
  }

  /** Append one rollout record. */
  appendRollout(record: unknown): void {
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

  /** Every metrics record written so far (from metrics.jsonl, or metrics.jsonl.gz in a compacted copy). */
  readMetrics(): MetricsRecord[] {
    const file = existingOrGz(this.metricsFile);
    const text = fs.existsSync(file) ? readTextMaybeGz(file) : '';
    return text
      .split('\n')
      .filter(Boolean)
      .map((line, i) => {
        try {
          return JSON.parse(line) as MetricsRecord;
        } catch {
          throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected a JSON line, got invalid JSON', {
            where: `${file}:${i + 1}`,
          });
        }
      });
  }

  /** Folder of the checkpoint written after `step` steps. */
  checkpointDir(steps: number): string {
    return path.join('checkpoints', `step-${String(steps).padStart(6, '0')}`);
  }

  /** Absolute path of a path relative to the run directory. */
  resolve(rel: string): string {
    return path.join(this.dir, rel);
  }

  /** Write a file of the eval folder atomically. */
  async writeEval(name: string, lines: readonly unknown[]): Promise<void> {
    await writeFileAtomic(
      path.join(this.dir, 'eval', name),
      lines.map((l) => JSON.stringify(l)).join('\n') + (lines.length ? '\n' : ''),
    );
  }

  private readJson(name: string): unknown {
    const file = path.join(this.dir, name);
    try {
      // Opened without blocking: a FIFO or a device planted in the run folder is refused, not waited on.
      return JSON.parse(readUserText(file));
    } catch (e) {
      throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected readable JSON, got ${(e as Error).message}`, {
        where: file,
      });
    }
  }
}
