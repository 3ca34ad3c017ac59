// The wall time of each look of a planned comparison, predicted before it runs: each config's time
// alone on this machine (its runs already in the folder, else a short run of it now, in a temporary
// folder whose results nobody reads) scaled by the current load and --jobs. The model and its
// arithmetic are in docs/guide/statistics.md ("Time to a decision"); core/report/wall-time.ts reads
// what is recorded here back into the report's predicted and actual rows.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfigValue, type LoadedConfig } from '../config/load';
import { NoProgress } from '../trainer/progress';
import { labelUse, RunDirectory } from '../trainer/run-dir';
import { train } from '../trainer/trainer';
import { openUserAppend } from '../util/files';
import { CorlError } from '../errors';
import {
  WALL_TIME_FILE,
  durationText,
  type LookPrediction,
  type PredictionRecord,
  type RateSource,
  type RunSpan,
} from '../report/wall-time';

/** The machine as a prediction sees it: background load (1-minute load average) and cores. */
export interface Machine {
  readonly load: number;
  readonly cores: number;
}

/** The machine now: os.loadavg()[0] before anything of the comparison runs, and the cores Node may use. */
export function machineNow(): Machine {
  return { load: os.loadavg()[0] ?? 0, cores: Math.max(1, os.availableParallelism()) };
}

/**
 * How much slower each run goes than alone on the idle machine, with `jobs` runs at once each
 * keeping `demand` cores busy over a background load `load` on `cores` cores: the machine is shared
 * in proportion to what is runnable, max(1, (load + jobs · demand) / cores).
 */
export function slowdown(m: Machine, jobs: number, demand: number): number {
  return Math.max(1, (m.load + jobs * demand) / m.cores);
}

/** What a config's run costs alone on the idle machine, in seconds: measured parts, or a whole run's. */
export type AloneRate =
  | {
      readonly kind: 'parts';
      /** Process start to the first step (models loaded, the first step's warm-up). */
      readonly setup: number;
      readonly step: number;
      readonly evaluation: number;
      readonly checkpoint: number;
      readonly source: RateSource;
    }
  | { readonly kind: 'whole'; readonly run: number; readonly source: RateSource };

/** What of a config's trainer decides how many evaluations and checkpoints a run does. */
export interface RunSchedule {
  readonly steps: number;
  readonly evalEvery: number;
  readonly checkpointEvery: number;
  /** An evaluation before the first step (eval.atStart with held-out problems). */
  readonly atStart: boolean;
}

export function scheduleOf(l: LoadedConfig): RunSchedule {
  const c = l.config;
  return {
    steps: c.trainer.steps,
    evalEvery: c.trainer.evalEvery,
    checkpointEvery: c.trainer.checkpointEvery,
    atStart: c.eval.atStart,
  };
}

/** Steps s in (from, to] at which an every-n event happens: n divides s, and always at the last step `to`. */
function events(from: number, to: number, every: number): number {
  let n = 0;
  for (let s = from + 1; s <= to; s++) if (s === to || (every > 0 && s % every === 0)) n++;
  return n;
}

/** Seconds alone for a run of `sched` from step `from` (0: a fresh start, with its step-0 evaluation) to its end. */
export function secondsLeft(rate: AloneRate, sched: RunSchedule, from: number): number {
  const T = sched.steps;
  if (rate.kind === 'whole') return T === 0 ? (from === 0 ? rate.run : 0) : (rate.run * Math.max(0, T - from)) / T;
  if (from >= T && !(T === 0 && from === 0)) return 0;
  return (
    rate.setup +
    (from === 0 && sched.atStart ? rate.evaluation : 0) +
    (T - from) * rate.step +
    events(from, T, sched.evalEvery) * rate.evaluation +
    events(from, T, sched.checkpointEvery) * rate.checkpoint
  );
}

/** A run left in a look: its config and the step it resumes at (0: not started). */
export interface RunLeft {
  readonly config: string;
  readonly from: number;
}

/**
 * The wall time of each look: the runs left of it, `jobs` at a time (fewer when fewer are left),
 * each slowed by {@link slowdown}: W = s · Σ secondsLeft / j, looks one after another.
 */
export function predictLooks(
  looks: readonly { readonly look: number; readonly runs: number; readonly left: readonly RunLeft[] }[],
  x: {
    readonly rates: Readonly<Record<string, AloneRate>>;
    readonly schedules: Readonly<Record<string, RunSchedule>>;
    readonly machine: Machine;
    readonly jobs: number;
    readonly demand: number;
  },
): LookPrediction[] {
  return looks.map((l) => {
    const j = Math.max(1, Math.min(x.jobs, l.left.length));
    const alone = l.left.reduce((t, r) => t + secondsLeft(x.rates[r.config]!, x.schedules[r.config]!, r.from), 0);
    const seconds = l.left.length ? (slowdown(x.machine, j, x.demand) * alone) / j : 0;
    return { look: l.look, runs: l.runs, left: l.left.length, seconds };
  });
}

/** One line of timing.jsonl, as the calibration reads it. */
interface StepTime {
  readonly totalMs: number;
  readonly evalMs: number;
  readonly checkpointMs: number;
}

/**
 * A config's alone rate from a short run of `steps` steps that took `wallMs` with the process keeping
 * `cpu` cores busy, at `machine`: each part divided by that run's own slowdown. The setup is what the
 * steps and evaluations leave of the wall time; a first step slower than the last counts as setup.
 */
export function rateFromCalibration(
  lines: readonly StepTime[],
  wallMs: number,
  sched: RunSchedule,
  at: { readonly machine: Machine; readonly demand: number },
): AloneRate {
  const s = slowdown(at.machine, 1, at.demand);
  if (!lines.length) return { kind: 'whole', run: wallMs / 1000 / s, source: 'calibrated' };
  const work = (t: StepTime): number => t.totalMs - t.evalMs - t.checkpointMs;
  const last = lines[lines.length - 1]!;
  const evaluation = last.evalMs;
  const inSteps = lines.reduce((n, t) => n + t.totalMs, 0);
  const warm = lines.slice(0, -1).reduce((n, t) => n + Math.max(0, work(t) - work(last)), 0);
  const setup = Math.max(0, wallMs - inSteps - (sched.atStart ? evaluation : 0)) + warm;
  return {
    kind: 'parts',
    setup: setup / 1000 / s,
    step: work(last) / 1000 / s,
    evaluation: evaluation / 1000 / s,
    checkpoint: last.checkpointMs / 1000 / s,
    source: 'calibrated',
  };
}

/**
 * A config's alone rate from its runs timed in the folder: each span that ran a whole run from its
 * start, its wall time divided by the slowdown it ran under (its invocation's load, the runs in
 * flight, the cores each kept busy); the mean of them. Undefined without such a span.
 */
export function rateFromFolder(
  spans: readonly RunSpan[],
  config: string,
): { rate: AloneRate; demand: number } | undefined {
  const whole = spans.filter((s) => s.config === config && s.from === 0 && s.to >= s.steps);
  if (!whole.length) return undefined;
  let total = 0;
  let demand = 0;
  for (const s of whole) {
    const d = Math.min(s.cores, s.cpu / s.concurrent);
    const wall = (Date.parse(s.endedAt) - Date.parse(s.startedAt)) / 1000;
    total += wall / slowdown({ load: s.load, cores: s.cores }, s.concurrent, d);
    demand += d;
  }
  return { rate: { kind: 'whole', run: total / whole.length, source: 'folder' }, demand: demand / whole.length };
}

/** The steps a calibration runs of a config: two (the second one steady), or the config's own fewer. */
export const CALIBRATION_STEPS = 2;

/**
 * Time a config on this machine now: {@link CALIBRATION_STEPS} steps of it in a temporary folder
 * (its metrics sinks left out, so nothing outside that folder is written), removed afterwards
 * unread, and at exit when the process is stopped while it runs. Returns its rate and the cores it kept busy.
 */
export async function calibrate(
  l: LoadedConfig,
  overrides: Readonly<Record<string, unknown>>,
  machine: Machine,
): Promise<{ rate: AloneRate; demand: number }> {
  const sched = scheduleOf(l);
  const steps = Math.min(sched.steps, CALIBRATION_STEPS);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-calibrate-'));
  const remove = (): void => fs.rmSync(dir, { recursive: true, force: true });
  // A stop while it runs (corl compare exits at once on SIGTERM, SIGINT and SIGHUP) removes it too.
  // A file operation already handed to libuv's thread pool (the recursive mkdir of the run folder,
  // say) may land during that removal (ENOTEMPTY) or after it, making the folder again: the removal
  // retries, never throws (an exit handler's throw prints a stack), and looks again after a pause.
  const removeAtExit = (): void => {
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 5; i++) {
      try {
        fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 5 });
      } catch {
        // something landed meanwhile: the next pass removes it
      }
      Atomics.wait(pause, 0, 0, 20);
      if (!fs.existsSync(dir)) break;
    }
  };
  process.on('exit', removeAtExit);
  try {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const fresh = await loadConfigValue(l.source, {
      baseDir: l.baseDir,
      ...(l.file ? { file: l.file } : {}),
      name: l.config.name,
      overrides: { ...overrides, 'trainer.steps': steps, metrics: [] },
    });
    const run = await RunDirectory.create(path.join(dir, 'run'), fresh.config, fresh.source, {
      ...(l.file ? { configFile: l.file } : {}),
      baseDir: l.baseDir,
      ...labelUse(fresh),
    });
    await train(fresh, { run, progress: new NoProgress() });
    const wallMs = performance.now() - t0;
    const used = process.cpuUsage(cpu0);
    const demand = Math.min(machine.cores, Math.max(0.05, (used.user + used.system) / 1000 / wallMs));
    const timing = path.join(dir, 'run', 'timing.jsonl');
    const lines = fs.existsSync(timing)
      ? fs
          .readFileSync(timing, 'utf8')
          .split('\n')
          .filter((x) => x.trim())
          .map((x) => JSON.parse(x) as StepTime)
      : [];
    return { rate: rateFromCalibration(lines, wallMs, { ...sched, steps }, { machine, demand }), demand };
  } finally {
    process.off('exit', removeAtExit);
    remove();
  }
}

/** The alone-time-weighted mean demand of the runs left. */
export function meanDemand(
  left: readonly RunLeft[],
  d: Readonly<Record<string, number>>,
  seconds: (r: RunLeft) => number,
): number {
  let w = 0;
  let s = 0;
  for (const r of left) {
    const t = seconds(r);
    w += t;
    s += t * d[r.config]!;
  }
  return w > 0 ? s / w : left.length ? d[left[0]!.config]! : 1;
}

/** The lines `corl compare --plan` prints of a prediction before it runs. */
export function predictionLines(p: PredictionRecord): string[] {
  const s = slowdown({ load: p.load, cores: p.cores }, 1, p.demand);
  const alone = Object.entries(p.alone)
    .map(([n, a]) => `${n} ${durationText(a.seconds)} (${a.source === 'folder' ? 'its runs here' : 'timed now'})`)
    .join(', ');
  let sum = 0;
  return [
    `wall time, predicted: a run alone on this machine idle takes ${alone}; load ${p.load.toFixed(2)} on ${p.cores} cores, a run keeps ${p.demand.toFixed(2)} cores busy, --jobs ${p.jobs}: each run x${s.toFixed(2)} alone (time x max(1, (load + jobs x busy cores) / cores))`,
    ...p.looks.map((l) => {
      sum += l.seconds;
      return `  look ${l.look}: ${l.left} of ${l.runs} runs left, about ${durationText(l.seconds)}${l.left ? ` (${durationText(sum)} from now${l.look > 1 ? ', if it gets that far' : ''})` : ''}`;
    }),
  ];
}

/** Append one line to the folder's wall-time.jsonl. */
export function appendWallTime(out: string, record: PredictionRecord | RunSpan): void {
  const fd = openUserAppend(path.join(out, WALL_TIME_FILE));
  try {
    fs.writeSync(fd, JSON.stringify(record) + '\n');
  } finally {
    fs.closeSync(fd);
  }
}

/** Refuse, before anything runs, a wall-time.jsonl that cannot be appended to (a folder, a FIFO). */
export function checkWallTimeFile(out: string): void {
  const file = path.join(out, WALL_TIME_FILE);
  try {
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) throw new Error('a folder');
    fs.closeSync(openUserAppend(file));
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_IO',
      `expected ${WALL_TIME_FILE} to be a file corl can append to, got ${(e as Error).message}`,
      {
        where: file,
        hint: `move ${file} away: it only records predicted and actual wall times`,
      },
    );
  }
}
