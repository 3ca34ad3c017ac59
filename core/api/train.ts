// Training as a program: a new run or a resumed one, its run directory made only once its plugins
// loaded, a stop request honoured after the current step (resumable), and the run's report written
// at the end (or beside the error). `corl train` and the public `train`/`resume` both run this.
import * as path from 'node:path';
import type { MetricsRecord } from '../contracts/metrics-sink';
import type { CorlConfig } from '../config/types';
import { loadConfigValue, type LoadedConfig } from '../config/load';
import { CorlError } from '../errors';
import { portableText } from '../report/portable';
import { writeRunReport } from '../report/write';
import { defaultProgress, LineProgress, NoProgress, type ProgressReporter } from '../trainer/progress';
import { labelUse, RunDirectory } from '../trainer/run-dir';
import { train as trainCohort, type TrainResult } from '../trainer/trainer';
import { timeStamp } from '../util/text';
import { isLoaded, loadWith, type ConfigInput } from './config';
import { API_USAGE, choiceOption, intOption, knownOptions, shown, typedOptions, usageError, type Usage } from './usage';

/** Options of {@link train}. */
export interface TrainOptions {
  /** Override `trainer.steps`. */
  readonly steps?: number;
  /** Override `eval.split`: `test` (held-out) or `validation`. */
  readonly evalSplit?: 'test' | 'validation';
  /** The run directory, new or empty (default: `runs/<name>-<date>-<time>` under the current folder). */
  readonly out?: string;
  /** Progress on stderr: `none` (the default), `lines`, or `auto` (a bar on a terminal, lines elsewhere). */
  readonly progress?: 'none' | 'lines' | 'auto';
  /** When it aborts, the run checkpoints after the current step and stops (`stopped`; {@link resume} continues it). */
  readonly signal?: AbortSignal;
  /** Where status lines go (the run directory, notes); default: nowhere. */
  readonly log?: (line: string) => void;
  /** Write the run's report.html at the end, or with the error when the run fails (default true). */
  readonly report?: boolean;
}

/** Options of {@link resume}: those of {@link train} but the folder and split, which the run fixed. */
export interface ResumeOptions extends Omit<TrainOptions, 'out' | 'evalSplit'> {
  /** The config the run started with, to check against (only `trainer.steps` may differ). */
  readonly config?: ConfigInput;
}

/** What a finished (or stopped) run reports: {@link TrainResult} with its config, its metrics and its report. */
export interface TrainRun extends TrainResult {
  /** The config the run used: validated, defaulted, frozen. */
  readonly config: CorlConfig;
  /** Every record of the run's metrics.jsonl, in order (`step` is the updates completed, 0 for the base evaluation). */
  readonly metrics: readonly MetricsRecord[];
  /** The run's report.html, unless `report: false`. */
  readonly report?: string;
}

const TRAIN_OPTIONS: readonly (keyof TrainOptions)[] = [
  'steps',
  'evalSplit',
  'out',
  'progress',
  'signal',
  'log',
  'report',
];
const RESUME_OPTIONS: readonly (keyof ResumeOptions)[] = ['steps', 'progress', 'signal', 'log', 'report', 'config'];

/** One training request: a new run of `config`, or the run in `resume` continued. */
export interface TrainRequest extends TrainOptions {
  readonly config?: ConfigInput;
  readonly resume?: string;
}

/**
 * Train a cohort on a config (a file, a config object or a loaded config), exactly as `corl train`
 * does: the same run directory, metrics, checkpoints and report. Resolves when the last step is
 * done (or when `signal` stopped it, resumable).
 */
export async function train(config: ConfigInput, options: TrainOptions = {}): Promise<TrainRun> {
  knownOptions(API_USAGE, options, TRAIN_OPTIONS);
  if (config === undefined || config === null)
    throw usageError(API_USAGE, 'config', `expected config to be a file path or a config object, got ${shown(config)}`);
  return runTraining({ ...options, config }, API_USAGE);
}

/** Continue a run from its last checkpoint (with `steps`, up to that many steps), as `corl train --resume` does. */
export async function resume(runDir: string, options: ResumeOptions = {}): Promise<TrainRun> {
  knownOptions(API_USAGE, options, RESUME_OPTIONS);
  if (typeof runDir !== 'string' || runDir === '')
    throw usageError(API_USAGE, 'runDir', `expected runDir to be the folder of a run, got ${shown(runDir)}`);
  return runTraining({ ...options, resume: runDir }, API_USAGE);
}

/** Check the options every caller shares; returns the `trainer.steps`/`eval.split` overrides. */
function overridesOf(r: TrainRequest, usage: Usage): Record<string, unknown> {
  const steps = intOption(usage, 'steps', r.steps, 0);
  const evalSplit = choiceOption(usage, 'evalSplit', r.evalSplit, ['test', 'validation'] as const);
  choiceOption(usage, 'progress', r.progress, ['none', 'lines', 'auto'] as const);
  typedOptions(usage, r, [
    ['out', 'string'],
    ['log', 'function'],
    ['report', 'boolean'],
  ]);
  if (r.signal !== undefined && !(r.signal instanceof AbortSignal))
    throw usageError(usage, 'signal', `expected ${usage.name('signal')} to be an AbortSignal, got ${shown(r.signal)}`);
  const overrides: Record<string, unknown> = steps === undefined ? {} : { 'trainer.steps': steps };
  if (evalSplit !== undefined) {
    if (r.resume !== undefined)
      throw usageError(
        usage,
        'evalSplit',
        `expected ${usage.name('evalSplit')} on a new run only, got it with ${usage.name('resume')}`,
        'a run keeps the split it started with; start a new run to evaluate on another split',
      );
    overrides['eval.split'] = evalSplit;
  }
  return overrides;
}

/** Run a training request: `corl train` and the public API both come here. */
export async function runTraining(r: TrainRequest, usage: Usage): Promise<TrainRun> {
  const overrides = overridesOf(r, usage);
  const log = r.log ?? (() => undefined);
  const prepared =
    r.resume !== undefined ? await prepareResume(r, overrides, usage, log) : await prepareNew(r, overrides, usage, log);
  const { loaded } = prepared;
  const progress: ProgressReporter =
    r.progress === 'auto'
      ? defaultProgress(loaded.config.trainer.logEvery)
      : r.progress === 'lines'
        ? new LineProgress(loaded.config.trainer.logEvery)
        : new NoProgress();
  const stopNote = (): void => {
    const reason: unknown = r.signal?.reason;
    progress.note(
      `interrupt: stopping after this step with a checkpoint${typeof reason === 'string' ? ` (${reason})` : ''}`,
    );
  };
  r.signal?.addEventListener('abort', stopNote, { once: true });
  let result: TrainResult;
  try {
    result = await trainCohort(loaded, {
      run: prepared.run ?? prepared.makeRun!,
      resume: r.resume !== undefined,
      progress,
      shouldStop: () => r.signal?.aborted === true,
    });
  } catch (e) {
    // the run's page says it failed, at the top, with what it logged before (no folder: nothing to report)
    const run = prepared.made();
    if (run && r.report !== false) {
      try {
        log(`report: ${await writeRunReport(run.dir, portableText((e as Error).message ?? String(e)))}`);
      } catch {
        // nothing readable to report (e.g. no metrics yet): the error itself is what matters
      }
    }
    throw e;
  } finally {
    r.signal?.removeEventListener('abort', stopNote);
    prepared.made()?.release();
  }
  const run = RunDirectory.open(result.runDir);
  return {
    ...result,
    config: loaded.config,
    // a planned run's sealed evaluations open at its plan's looks, not in what the API returns
    metrics: run.readMetrics({ sealed: 'hide' }),
    ...(r.report !== false ? { report: await writeRunReport(result.runDir) } : {}),
  };
}

/** A prepared run: the config, and the run directory (resumed) or the function that makes it (new). */
interface Prepared {
  readonly loaded: LoadedConfig;
  readonly run?: RunDirectory;
  readonly makeRun?: () => Promise<RunDirectory>;
  /** The run directory, once there is one. */
  made(): RunDirectory | undefined;
}

async function prepareNew(
  r: TrainRequest,
  overrides: Record<string, unknown>,
  usage: Usage,
  log: (line: string) => void,
): Promise<Prepared> {
  if (r.config === undefined) throw usageError(usage, 'config', `expected a config to train, got none`);
  const loaded = await loadWith(r.config, Object.keys(overrides).length ? { overrides } : {}, usage);
  const out = r.out ?? path.join('runs', `${loaded.config.name}-${timeStamp()}`);
  let run: RunDirectory | undefined;
  // A new run's folder is made once its plugins loaded (checkpoints and data opened): a config that
  // cannot start leaves no folder behind.
  const makeRun = async (): Promise<RunDirectory> => {
    run = await RunDirectory.create(out, loaded.config, loaded.source, {
      configFile: loaded.file,
      baseDir: loaded.baseDir,
      ...labelUse(loaded),
    });
    log(`run directory: ${run.dir}`);
    return run;
  };
  return { loaded, makeRun, made: () => run };
}

async function prepareResume(
  r: TrainRequest,
  overrides: Record<string, unknown>,
  usage: Usage,
  log: (line: string) => void,
): Promise<Prepared> {
  if (r.out !== undefined)
    throw usageError(usage, 'out', `expected either ${usage.name('out')} or ${usage.name('resume')}, got both`);
  const resumed = RunDirectory.resume(r.resume!);
  const run = resumed.run;
  try {
    if (resumed.note) log(resumed.note);
    const meta = run.meta();
    const source = run.source() as Record<string, unknown>;
    if (r.config !== undefined) await checkSameConfig(r.config, source, meta.baseDir, usage);
    const loaded = await loadConfigValue(source, {
      baseDir: meta.baseDir,
      overrides,
      file: meta.configFile,
      name: (source.name as string) ?? path.basename(run.dir),
    });
    const state = run.state();
    if (loaded.config.trainer.steps < state.nextStep)
      throw usageError(
        usage,
        'steps',
        `expected ${usage.name('steps')} of at least ${state.nextStep} (the steps already done), got ${loaded.config.trainer.steps}`,
      );
    if (state.finished && loaded.config.trainer.steps === state.nextStep)
      log(`run ${run.dir} already finished ${state.nextStep} step(s); pass ${usage.name('steps')} N to train further`);
    if (r.steps !== undefined) {
      await run.writeConfig(loaded.config, loaded.source);
      if (state.finished && r.steps > state.nextStep) await run.writeState({ ...state, finished: false });
    }
    return { loaded, run, made: () => run };
  } catch (e) {
    run.release();
    throw e;
  }
}

/** The config given with a resume must be the one the run started with, but for `trainer.steps`. */
async function checkSameConfig(given: ConfigInput, source: unknown, baseDir: string, usage: Usage): Promise<void> {
  const a = (await loadWith(given, {}, usage)).config;
  const b = (await loadConfigValue(source, { baseDir })).config;
  const strip = (c: CorlConfig): unknown => ({ ...c, trainer: { ...c.trainer, steps: 0 } });
  if (JSON.stringify(strip(a)) !== JSON.stringify(strip(b)))
    throw new CorlError(
      'CORL_ERR_RUN_MISMATCH',
      `expected ${typeof given === 'string' ? given : isLoaded(given) ? (given.file ?? 'the given config') : 'the given config'} to match the config the run started with (only trainer.steps may change), got a different config`,
      { where: usage.name('config') },
    );
}
