// `corl compare`: run configs over seeds (resumable), under a plan or a design given by flags,
// seed by seed, in looks when the design is sequential, rendering the comparison at its end and at
// every look (core/report renders; this program runs).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig, loadConfigValue, type LoadedConfig } from '../config/load';
import { CorlError } from '../errors';
import { readCompareMeta, readComparison, renderComparison, type CompareResult } from '../report/compare';
import { designFromPlan, type Design, type PlanRecord } from '../report/design';
import { agentFamilies, CHECKPOINT_OPTION, plannedDigest, poolDraws } from '../report/pools';
import { portablePath } from '../report/portable';
import { LineProgress, NoProgress, defaultProgress, type ProgressReporter } from '../trainer/progress';
import { labelUse, RunDirectory } from '../trainer/run-dir';
import { train } from '../trainer/trainer';
import { writeJsonAtomic } from '../util/fs';
import { timeStamp } from '../util/text';
import { BlindProgress } from './blind';
import {
  checkPlannedConfigs,
  fileSha256,
  loadPlan,
  plannedCheckpoints,
  plannedConfigFiles,
  planRecord,
  type LoadedPlan,
} from './plan';
import { outputFolderProblem, readUserText } from '../util/files';
import { MAX_CONFIG_SEED } from '../config/root-schema';
import { FolderLock } from '../util/folder-lock';
import { parseJson } from '../util/json';
import { checkVerdicts } from '../report/compare-files';
import type { Shard } from './shard';
import { ensureSeal } from '../util/seal';
import { runTimer, timeLooks, type RunTimer } from './timing';

/** How to run {@link runCompare}. */
export interface CompareRunOptions {
  /** Config files, one row each (with a plan: none, or exactly the plan's). */
  readonly configs: readonly string[];
  /** Seeds per config: run i uses seed = config seed + 1000·i (agents add their index). Ignored under a plan. */
  readonly seeds: number;
  /** Index of the first seed (default 0): runs i = firstSeed … firstSeed + seeds − 1, in folders seed-<i>. */
  readonly firstSeed?: number;
  /** Folder of the comparison: <out>/<config name>/seed-<i>/ per run, report.html, results.json. */
  readonly out: string;
  /** Override trainer.steps of every training config (evaluation-only configs, with 0 steps, stay at 0). */
  readonly steps?: number;
  /** Progress display per run: 'auto' (bar on a terminal), 'lines', or 'none'. */
  readonly progress?: 'auto' | 'lines' | 'none';
  /** Where status lines go. */
  readonly log?: (line: string) => void;
  /** End with a one-line verdict: the last config against each of the others (see verdictLine). */
  readonly verdict?: boolean;
  /** Folder of committed comparisons the one-seed verdict line points to (default docs/results when it exists). */
  readonly committed?: string;
  /** A plan: its configs, seeds, looks, pairs and rules replace the flags. */
  readonly plan?: LoadedPlan;
  /** How to decide without a plan (default: final pass@1, each config against the first, 5%). */
  readonly design?: Design;
  /** Runs at once (default 1): in this process, each run's agents in their own worker threads. */
  readonly jobs?: number;
}

/** Seed of run `i` of a config whose own seed is `base`: far apart, so agents' seeds (seed + index) never collide across runs. */
export function seedOf(base: number, i: number): number {
  return base + 1000 * i;
}

/** The config files to run: the plan's (checked against its sha256), or the command line's. */
function configFiles(o: CompareRunOptions): string[] {
  if (!o.plan) {
    if (o.configs.length === 0)
      throw new CorlError('CORL_ERR_CLI_USAGE', 'expected at least one config to compare, got none', {
        hint: 'name config files, or pass --plan',
      });
    return [...o.configs];
  }
  const files = plannedConfigFiles(o.plan);
  if (o.configs.length && (o.configs.length !== files.length || o.configs.some((c, i) => path.resolve(c) !== files[i])))
    throw new CorlError(
      'CORL_ERR_PLAN_MISMATCH',
      `expected the plan's configs (${o.plan.plan.configs.map((c) => c.file).join(', ')}) or none, got ${o.configs.join(', ')}`,
      { where: '<configs>', hint: 'with --plan, leave the configs out: the plan names them' },
    );
  if (o.steps !== undefined)
    throw new CorlError('CORL_ERR_PLAN_MISMATCH', `expected no --steps with a plan, got --steps ${o.steps}`, {
      where: '--steps',
      hint: 'the plan fixes the configs as committed, steps included',
    });
  return files;
}

/** Load and validate every config before running anything; names must be distinct (and the plan's). */
async function loadAll(files: readonly string[], o: CompareRunOptions): Promise<LoadedConfig[]> {
  const loaded: LoadedConfig[] = [];
  for (const file of files) {
    const plain = await loadConfig(file);
    loaded.push(
      o.steps === undefined || plain.config.trainer.steps === 0
        ? plain
        : await loadConfig(file, { overrides: { 'trainer.steps': o.steps } }),
    );
  }
  const names = loaded.map((l) => l.config.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected configs with distinct names, got "${dup}" twice`, {
      hint: 'set a different "name" in one of them',
    });
  if (o.plan) {
    checkPlannedConfigs(o.plan, loaded);
    plannedCheckpoints(o.plan);
  }
  o.plan?.plan.configs.forEach((c, i) => {
    if (names[i] !== c.name)
      throw new CorlError(
        'CORL_ERR_PLAN_MISMATCH',
        `expected config "${c.name}" from ${c.file} as the plan names it, got "${names[i]}"`,
        {
          where: `${o.plan!.file} configs[${i}]`,
        },
      );
  });
  return loaded;
}

/** What the folder already records must agree with this call's plan (or absence of one). */
function checkFolder(out: string, plan: LoadedPlan | undefined): PlanRecord | undefined {
  const file = path.join(out, 'compare.json');
  if (!fs.existsSync(file)) return undefined;
  const meta = readCompareMeta(out) as { plan?: PlanRecord };
  if (meta.plan && !plan)
    throw new CorlError(
      'CORL_ERR_PLAN_MISMATCH',
      `expected no plan in ${out}, got the plan ${meta.plan.plan.name} (sha256 ${meta.plan.sha256.slice(0, 12)}…) recorded there`,
      { where: file, hint: `continue it with --plan ${meta.plan.file}` },
    );
  if (meta.plan && plan && meta.plan.sha256 !== plan.sha256)
    throw new CorlError(
      'CORL_ERR_PLAN_MISMATCH',
      `expected the plan recorded in ${out} (sha256 ${meta.plan.sha256.slice(0, 12)}…), got ${plan.file} (sha256 ${plan.sha256.slice(0, 12)}…)`,
      { where: file, hint: 'a plan is not edited after its runs start; run a new plan in a new folder' },
    );
  return meta.plan;
}

/**
 * The record of a plan with each config's digest (its file without the seed), checking the runs
 * already in the folder against it (runs made before the plan was given: the plan is attached).
 */
export function attachPlan(plan: LoadedPlan, files: readonly string[], out: string, attached?: string): PlanRecord {
  const configs = plan.plan.configs.map((c, i) => {
    const source = JSON.parse(readUserText(files[i]!)) as { seed?: unknown };
    return {
      name: c.name,
      digest: plannedDigest(source, plan.plan),
      seed: typeof source.seed === 'number' ? source.seed : 0,
    };
  });
  for (const c of configs) {
    const dir = path.join(out, c.name);
    if (!fs.existsSync(dir)) continue;
    for (const s of fs.readdirSync(dir).filter((x) => /^seed-\d+$/.test(x))) {
      const file = path.join(dir, s, 'config.source.json');
      if (!fs.existsSync(file)) continue;
      const source = JSON.parse(readUserText(file)) as { seed?: unknown };
      if (plannedDigest(source, plan.plan) !== c.digest || source.seed !== c.seed + 1000 * Number(s.slice(5)))
        throw new CorlError(
          'CORL_ERR_PLAN_CONFIG_CHANGED',
          `expected the run ${c.name}/${s} to have the planned config and seed, got another config or seed in ${file}`,
          { where: file, hint: 'the folder holds runs of another config: run the plan in a new folder' },
        );
    }
  }
  return { ...planRecord(plan, process.cwd()), configs, ...(attached ? { attached } : {}) };
}

/** What a comparison (or one shard of it) runs: its configs, design and seed indices, checked and recorded. */
interface Prepared {
  readonly loaded: LoadedConfig[];
  readonly design: Design;
  readonly first: number;
  /** Seeds per config at each look (one look without a sequential design). */
  readonly looks: readonly number[];
  readonly notes: string[];
  /** The comparison folder's lock: held for a whole comparison, given back after prepare by a shard. */
  readonly lock: FolderLock;
}

/** The comparison's design and its seeds: the first seed index and the seeds per config at each look. */
function seedPlan(o: CompareRunOptions): { design: Design; first: number; looks: readonly number[] } {
  const design = o.plan ? designFromPlan(o.plan.plan) : (o.design ?? { metric: 'final', alpha: 0.05 });
  const seq = design.sequential;
  return { design, first: seq ? seq.first : (o.firstSeed ?? 0), looks: seq ? seq.looks : [o.seeds] };
}

/** Refused before anything is written: an --out that cannot be a folder, and seeds past what a config takes. */
function checkBeforeWriting(o: CompareRunOptions, loaded: readonly LoadedConfig[]): void {
  const abs = path.resolve(o.out);
  const problem = outputFolderProblem(abs);
  if (problem !== undefined)
    throw new CorlError('CORL_ERR_IO', `expected a folder for the comparison, got ${problem} at ${abs}`, {
      where: '--out',
      hint: 'give --out a folder of its own (it is created if missing); nothing was written',
    });
  const { first, looks } = seedPlan(o);
  const last = first + looks[looks.length - 1]! - 1;
  for (const l of loaded)
    if (seedOf(l.config.seed, last) > MAX_CONFIG_SEED)
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        `expected the seeds of ${l.config.name} (its seed ${l.config.seed} + 1000 x ${first}..${last}) to stay at most ${MAX_CONFIG_SEED}, got ${seedOf(l.config.seed, last)} for the last`,
        {
          where: o.plan ? `${o.plan.file} seeds` : '--seeds, --first-seed',
          hint: 'start at a smaller seed index, or run fewer seeds; nothing was written',
        },
      );
}

/**
 * Load every config, check the folder against the plan (or its absence), attach the plan and write
 * compare.json: the same for a whole comparison and for each of its shards.
 */
async function prepare(o: CompareRunOptions, shard?: Shard): Promise<Prepared> {
  const files = configFiles(o);
  const loaded = await loadAll(files, o);
  checkBeforeWriting(o, loaded);
  const names = loaded.map((l) => l.config.name);
  for (const n of [...(o.design?.pairs ?? []).flatMap((p) => [p.a, p.b]), ...(o.design?.against ?? [])])
    if (!names.includes(n))
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        `expected --pairs and --against to name configs of the comparison, got "${n}"`,
        {
          where: o.design?.pairs ? '--pairs' : '--against',
          hint: `the configs are: ${names.join(', ')}`,
        },
      );
  // One writer of compare.json and of the renderings: a second comparison of the folder is refused
  // before it writes anything; shards wait for each other's (short) preparation only.
  const command = shard ? shardCommand(shard) : 'corl compare';
  const lock = shard
    ? await FolderLock.wait(o.out, {
        command,
        pollMs: 200,
        waitFor: (h) => h.command.startsWith('corl compare --shard'),
      })
    : FolderLock.acquire(o.out, { command });
  try {
    return await prepareLocked(o, files, loaded, lock);
  } catch (e) {
    lock.release();
    throw e;
  }
}

async function prepareLocked(
  o: CompareRunOptions,
  files: readonly string[],
  loaded: LoadedConfig[],
  lock: FolderLock,
): Promise<Prepared> {
  const existing = checkFolder(o.out, o.plan);
  // a planned comparison's runs write their evaluations sealed with the folder's key until the look
  if (o.plan) await ensureSeal(o.out);
  const plan = o.plan ? (existing ?? attachPlan(o.plan, files, o.out)) : undefined;
  const { design, first, looks } = seedPlan(o);
  const cap = looks[looks.length - 1]!;
  // the ledger's anchor (count, last hash, damage found) survives a rewrite of compare.json
  const anchor = fs.existsSync(path.join(o.out, 'compare.json')) ? readCompareMeta(o.out).reads : undefined;
  lock.assertHeld();
  await writeJsonAtomic(path.join(o.out, 'compare.json'), {
    ...(anchor !== undefined ? { reads: anchor } : {}),
    configs: files.map((c) => path.resolve(c)),
    seeds: cap,
    ...(first !== 0 ? { firstSeed: first } : {}),
    steps: o.steps ?? null,
    sha256: Object.fromEntries(loaded.map((l, i) => [l.config.name, fileSha256(files[i]!)])),
    ...(plan ? { plan } : o.design ? { design } : {}),
  });
  const line = `corl compare ${o.plan ? `--plan ${portablePath(o.plan.file)}` : `${files.map((c) => portablePath(c)).join(' ')} --seeds ${o.seeds}${first !== 0 ? ` --first-seed ${first}` : ''}${o.steps !== undefined ? ` --steps ${o.steps}` : ''}`} --out ${portablePath(o.out)}`;
  const notes = [
    `Command: ${line}`,
    cap === 1 && first === 0
      ? "Seeds: one run per config, at the config's own seed."
      : `Seeds: config seed + 1000·i for i = ${first}..${first + cap - 1}.`,
  ];
  return { loaded, design, first, looks, notes, lock };
}

/**
 * Run every config with every seed (skipping finished runs and resuming unfinished ones, so an
 * interrupted comparison continues where it stopped), look by look under a sequential design,
 * then write the table, the verdicts and the report.
 */
/** A comparison's folder when none is given: `runs/compare-<plan name>`, or `runs/compare-<date>-<time>`. */
export function defaultCompareOut(plan: LoadedPlan | undefined): string {
  return path.join('runs', `compare-${plan ? plan.plan.name : timeStamp()}`);
}

export async function runCompare(o: CompareRunOptions): Promise<CompareResult> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const prepared = await prepare(o);
  try {
    return await compareLocked(o, log, prepared);
  } finally {
    prepared.lock.release();
  }
}

async function compareLocked(o: CompareRunOptions, log: (l: string) => void, p: Prepared): Promise<CompareResult> {
  const { loaded, design, first, looks, notes } = p;
  const seq = design.sequential;
  const cap = looks[looks.length - 1]!;
  // a plan's looks get their wall time predicted before anything runs, and each run's span recorded
  const timer = o.plan ? runTimer(o.out, o.jobs ?? 1) : undefined;
  if (timer && o.plan && !stoppedEarlier(o.out))
    await timeLooks(loaded, { out: o.out, plan: o.plan, first, looks, timer, log, poolOverrides });
  let done = 0;
  let result: CompareResult | undefined;
  for (let k = 0; k < looks.length; k++) {
    const from = first + (k > 0 ? looks[k - 1]! : 0);
    const to = first + looks[k]!;
    if (seq) log(`look ${k + 1} of ${looks.length}: seeds ${from}..${to - 1} (${looks[k]} per config)`);
    const seeds = range(from, to);
    done = await runRound(loaded, seeds, {
      o,
      log,
      blind: o.plan !== undefined,
      done,
      total: loaded.length * cap,
      ...(timer ? { timer } : {}),
    });
    // the configs named, in their order: a folder holding more says so and leaves them out
    const c = readComparison(o.out, { only: loaded.map((l) => l.config.name) });
    result = await renderComparison(o.out, c, {
      by: seq ? `corl compare, look ${k + 1}` : 'corl compare',
      notes,
      ...(o.committed ? { committed: o.committed } : {}),
    });
    if (seq && result.verdicts.stopped) break;
  }
  const line = result!.oneLine?.line;
  if (!o.verdict || loaded.length < 2 || line === undefined) return result!;
  return { ...result!, verdict: line };
}

export type { Shard } from './shard';

/** What a shard ran. */
export interface ShardResult {
  /** The look whose seeds the shard ran (1 without a sequential design); undefined when the comparison had stopped. */
  readonly look?: number;
  /** Seed indices this shard ran (each for every config). */
  readonly seeds: readonly number[];
}

/**
 * Run one shard of a comparison: of the seeds of the next look to decide (every seed without a
 * sequential design), those at positions index − 1, index − 1 + count, … — every config at each,
 * so a shard holds whole seeds — and stop without reading or rendering anything: `count` shards
 * started on the same folder, one per core, run a look side by side in separate processes; the
 * comparison run afterwards without a shard finds the runs finished, renders the look and decides.
 * The next look is the one after the last look the folder's verdicts.json records, unless that
 * look stopped the comparison (then nothing runs).
 */
export async function runShard(o: CompareRunOptions, shard: Shard): Promise<ShardResult> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const prepared = await prepare(o, shard);
  let decided: { looks: number; stopped: boolean };
  try {
    decided = prepared.design.sequential ? decidedLooks(o.out) : { looks: 0, stopped: false };
  } finally {
    prepared.lock.release();
  }
  const { loaded, design, first, looks } = prepared;
  if (decided.stopped) {
    log(`shard ${shard.index}/${shard.count}: the comparison stopped at look ${decided.looks}; nothing to run`);
    return { seeds: [] };
  }
  const k = Math.min(decided.looks, looks.length - 1);
  const from = first + (k > 0 ? looks[k - 1]! : 0);
  const seeds = range(from, first + looks[k]!).filter((_, j) => j % shard.count === shard.index - 1);
  log(
    `shard ${shard.index}/${shard.count}${shard.origin ? ` (${shard.origin})` : ''}${design.sequential ? ` of look ${k + 1} of ${looks.length}` : ''}: seeds ${seeds.join(', ') || 'none'}`,
  );
  await runRound(loaded, seeds, {
    o,
    log,
    blind: o.plan !== undefined,
    done: 0,
    total: loaded.length * seeds.length,
    shard,
    ...(o.plan ? { timer: runTimer(o.out, 1) } : {}),
  });
  log(
    `shard ${shard.index}/${shard.count}: done; run the same command without --shard once every shard is done, to render${design.sequential ? ' and decide the look' : ''}`,
  );
  return { look: k + 1, seeds };
}

/** How many looks the folder's verdicts.json records as decided, and whether the last one stopped the comparison. */
function decidedLooks(out: string): { looks: number; stopped: boolean } {
  const file = path.join(out, 'verdicts.json');
  if (!fs.existsSync(file)) return { looks: 0, stopped: false };
  let value: unknown;
  try {
    value = parseJson(readUserText(file));
  } catch (e) {
    throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected JSON in verdicts.json, got ${(e as Error).message}`, {
      where: file,
    });
  }
  const v = checkVerdicts(value, file);
  return { looks: Array.isArray(v.looks) ? v.looks.length : 0, stopped: v.stopped === true };
}

/** Whether the folder's verdicts.json records that the comparison stopped (a damaged one: not known, so no). */
function stoppedEarlier(out: string): boolean {
  try {
    return decidedLooks(out).stopped;
  } catch {
    return false;
  }
}

/** What a shard's locks say holds them: "corl compare --shard 2/4 (Slurm array job 12, task 1)". */
function shardCommand(shard: Shard): string {
  return `corl compare --shard ${shard.index}/${shard.count}${shard.origin ? ` (${shard.origin})` : ''}`;
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from) }, (_, j) => from + j);

/** Run the seed indices `seeds` of every config, seed by seed across configs, `jobs` runs at a time. */
async function runRound(
  loaded: readonly LoadedConfig[],
  seeds: readonly number[],
  r: {
    o: CompareRunOptions;
    log: (l: string) => void;
    blind: boolean;
    done: number;
    total: number;
    shard?: Shard;
    timer?: RunTimer;
  },
): Promise<number> {
  const tasks: { l: LoadedConfig; i: number }[] = [];
  // Seed by seed across configs, so that a comparison cut short holds whole seeds of every config.
  for (const i of seeds) for (const l of loaded) tasks.push({ l, i });
  const jobs = Math.max(1, Math.min(r.o.jobs ?? 1, tasks.length));
  let next = 0;
  let k = r.done;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const { l, i } = tasks[next++]!;
      k++;
      await runOne(l, i, `[${k}/${r.total}] ${l.config.name} seed ${seedOf(l.config.seed, i)}`, r.o, r.log, {
        blind: r.blind,
        lines: jobs > 1,
        shard: r.shard,
        timer: r.timer,
      });
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return k;
}

/** Run seed index `i` of one config in the comparison folder: skip it when finished, resume it when interrupted. */
async function runOne(
  l: LoadedConfig,
  i: number,
  label: string,
  o: CompareRunOptions,
  log: (l: string) => void,
  how: { blind: boolean; lines: boolean; shard?: Shard; timer?: RunTimer | undefined },
): Promise<void> {
  const dir = path.join(o.out, l.config.name, `seed-${i}`);
  // One writer per run: a shard finding the run taken (a requeued or duplicated shard) skips it; a
  // whole comparison waits for it, then finds it finished (or resumes it).
  const command = how.shard ? shardCommand(how.shard) : 'corl compare';
  const lock = how.shard
    ? FolderLock.tryAcquire(dir, { command })
    : await FolderLock.wait(dir, {
        command,
        onWait: (h) => log(`${label}: waiting for ${h.command} (pid ${h.pid} on ${h.host}), which runs it`),
      });
  if (!(lock instanceof FolderLock)) {
    log(`${label}: run by ${lock.command} (pid ${lock.pid} on ${lock.host}), skipped`);
    return;
  }
  try {
    await runLocked(l, i, label, o, log, { ...how, lock });
  } finally {
    lock.release();
  }
}

async function runLocked(
  l: LoadedConfig,
  i: number,
  label: string,
  o: CompareRunOptions,
  log: (l: string) => void,
  how: { blind: boolean; lines: boolean; lock: FolderLock; timer?: RunTimer | undefined },
): Promise<void> {
  const dir = path.join(o.out, l.config.name, `seed-${i}`);
  const shown: ProgressReporter =
    o.progress === 'none'
      ? new NoProgress()
      : o.progress === 'lines' || how.lines
        ? new LineProgress(l.config.trainer.logEvery)
        : defaultProgress(l.config.trainer.logEvery);
  const progress = how.blind ? new BlindProgress(shown) : shown;
  if (fs.existsSync(path.join(dir, 'state.json'))) {
    const { run } = RunDirectory.resume(dir, { lock: how.lock });
    const state = run.state();
    if (state.finished && state.nextStep >= l.config.trainer.steps) {
      log(`${label}: done earlier, skipped`);
      return;
    }
    // the base checkpoints are read again on resume (the KL term's reference policy): still the planned ones
    if (o.plan?.plan.checkpoints) plannedCheckpoints(o.plan);
    log(`${label}: resuming at step ${state.nextStep}`);
    await timed(
      how.timer,
      { config: l.config.name, seed: i, from: state.nextStep, steps: l.config.trainer.steps },
      async () => {
        const again = await loadConfigValue(run.source(), {
          baseDir: run.meta().baseDir,
          overrides: { 'trainer.steps': l.config.trainer.steps },
          name: l.config.name,
        });
        await run.writeConfig(again.config, again.source);
        if (state.finished) await run.writeState({ ...state, finished: false });
        return (await train(again, { run, resume: true, progress })).steps;
      },
    );
    return;
  }
  log(`${label}: starting`);
  await timed(how.timer, { config: l.config.name, seed: i, from: 0, steps: l.config.trainer.steps }, async () => {
    const fresh = await loadConfigValue(l.source, {
      baseDir: l.baseDir,
      file: l.file,
      name: l.config.name,
      overrides: { seed: seedOf(l.config.seed, i), ...poolOverrides(l, i, o.plan) },
    });
    const run = await RunDirectory.create(
      dir,
      fresh.config,
      fresh.source,
      { configFile: l.file, baseDir: l.baseDir, ...labelUse(fresh), ...planOf(o) },
      { lock: how.lock },
    );
    return (await train(fresh, { run, progress })).steps;
  });
}

/** Run `body` (which returns the steps done), recording its span with the invocation's timer when there is one. */
async function timed(
  timer: RunTimer | undefined,
  run: { config: string; seed: number; from: number; steps: number },
  body: () => Promise<number>,
): Promise<void> {
  const span = timer?.start(run.config, run.seed, run.from);
  let to: number | undefined;
  try {
    to = await body();
  } finally {
    // a run that failed is not timed (its span would say nothing of a run's length); it leaves the count in flight
    span?.end(to, run.steps);
  }
}

/**
 * Record a plan in a comparison folder made without one (`corl compare` before plans, or a plan's
 * runs started by another command): the plan's configs are checked against their sha256 and every
 * run already there against the planned configs; a folder with another plan is refused.
 */
export async function attachPlanFile(dir: string, planFile: string): Promise<void> {
  const plan = loadPlan(planFile);
  const meta = readCompareMeta(dir) as Record<string, unknown> & { plan?: { sha256?: string } };
  if (meta.plan && meta.plan.sha256 !== plan.sha256)
    throw new CorlError(
      'CORL_ERR_PLAN_MISMATCH',
      `expected no plan or this one in ${dir}, got another plan recorded there (sha256 ${String(meta.plan.sha256).slice(0, 12)}…)`,
      { where: path.join(dir, 'compare.json') },
    );
  if (meta.plan) return;
  const record = attachPlan(
    plan,
    plannedConfigFiles(plan),
    dir,
    'attached by corl report --plan to runs that corl compare made without --plan',
  );
  await writeJsonAtomic(path.join(dir, 'compare.json'), { ...meta, plan: record });
}

/**
 * Under a plan with checkpoint pools, each agent's checkpoint at seed index `i` (core/report/pools.ts's
 * rule), written relative to the config's folder as the config writes its paths; the pool's files
 * are checked against their sha256 again as each run starts.
 */
export function poolOverrides(l: LoadedConfig, i: number, plan: LoadedPlan | undefined): Record<string, string> {
  if (!plan?.plan.checkpoints) return {};
  const dirs = plannedCheckpoints(plan);
  const out: Record<string, string> = {};
  for (const d of poolDraws(plan.plan.checkpoints, agentFamilies(l.config), i, l.file ?? l.config.name)) {
    const rel = path.relative(l.baseDir, dirs[d.family]![d.member]!).split(path.sep).join('/');
    out[`agents.${d.agent}.policy.options.${CHECKPOINT_OPTION}`] = rel.startsWith('.') ? rel : `./${rel}`;
  }
  return out;
}

/** What a run records of the plan it is launched under, at its start (run.json's "plan"), and that its evaluations are sealed. */
function planOf(o: CompareRunOptions): { plan?: { sha256: string; file: string }; sealed?: true } {
  return o.plan ? { plan: { sha256: o.plan.sha256, file: portablePath(o.plan.file) }, sealed: true } : {};
}
