// The timing of one `corl compare --plan` invocation: the prediction of each look's wall time made
// before anything runs (printed and recorded in wall-time.jsonl), and the span of every run it runs
// (recorded there as the run ends), which later predictions and the report's actual rows read.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoadedConfig } from '../config/load';
import { RunDirectory } from '../trainer/run-dir';
import type { LoadedPlan } from './plan';
import { readWallTime, type PredictionRecord } from '../report/wall-time';
import {
  appendWallTime,
  calibrate,
  checkWallTimeFile,
  machineNow,
  meanDemand,
  predictionLines,
  predictLooks,
  rateFromFolder,
  scheduleOf,
  secondsLeft,
  type AloneRate,
  type Machine,
  type RunLeft,
  type RunSchedule,
} from './wall-time';

/** What one invocation's runs record of themselves. */
export interface RunTimer {
  readonly machine: Machine;
  readonly jobs: number;
  /** Start timing a run of `config` at seed index `seed`, resuming at step `from`; `end` records the span (to: the steps done; undefined: it failed, nothing recorded). */
  start(config: string, seed: number, from: number): { end(to: number | undefined, steps: number): void };
}

/** The timer of an invocation on `out`, its load measured now (before anything of it runs). */
export function runTimer(out: string, jobs: number): RunTimer {
  const machine = machineNow();
  const invocation = new Date().toISOString();
  let inFlight = 0;
  checkWallTimeFile(out);
  return {
    machine,
    jobs,
    start(config, seed, from) {
      inFlight++;
      const concurrent = Math.min(jobs, inFlight);
      const startedAt = new Date().toISOString();
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      let open = true;
      return {
        end(to, steps) {
          if (!open) return;
          open = false;
          inFlight--;
          if (to === undefined) return;
          const used = process.cpuUsage(cpu0);
          const wall = Math.max(1e-3, performance.now() - t0);
          appendWallTime(out, {
            kind: 'run',
            config,
            seed,
            startedAt,
            endedAt: new Date().toISOString(),
            from,
            to,
            steps,
            load: round(machine.load),
            cores: machine.cores,
            concurrent,
            cpu: round((used.user + used.system) / 1000 / wall),
            invocation,
          });
        },
      };
    },
  };
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

/** The runs left of each look: every config at each of its seeds, unless finished (a resumed one from its step). */
function runsLeft(
  loaded: readonly LoadedConfig[],
  out: string,
  first: number,
  looks: readonly number[],
): { look: number; runs: number; left: RunLeft[] }[] {
  return looks.map((n, k) => {
    const from = first + (k > 0 ? looks[k - 1]! : 0);
    const left: RunLeft[] = [];
    for (let i = from; i < first + n; i++)
      for (const l of loaded) {
        const dir = path.join(out, l.config.name, `seed-${i}`);
        if (!fs.existsSync(path.join(dir, 'state.json'))) {
          left.push({ config: l.config.name, from: 0 });
          continue;
        }
        const state = RunDirectory.open(dir).state();
        if (state.finished && state.nextStep >= l.config.trainer.steps) continue;
        left.push({ config: l.config.name, from: state.nextStep });
      }
    return { look: k + 1, runs: (first + n - from) * loaded.length, left };
  });
}

/**
 * Predict, print and record the wall time of each look before the comparison runs: each config's
 * alone time from its whole runs already timed in the folder, else from a short calibration run now.
 */
export async function timeLooks(
  loaded: readonly LoadedConfig[],
  x: {
    out: string;
    plan: LoadedPlan;
    first: number;
    looks: readonly number[];
    timer: RunTimer;
    log: (line: string) => void;
    poolOverrides: (l: LoadedConfig, i: number, plan: LoadedPlan) => Record<string, string>;
  },
): Promise<PredictionRecord | undefined> {
  const looks = runsLeft(loaded, x.out, x.first, x.looks);
  const wanted = new Set(looks.flatMap((l) => l.left.map((r) => r.config)));
  if (!wanted.size) return undefined;
  const spans = readWallTime(x.out).spans;
  const rates: Record<string, AloneRate> = {};
  const demands: Record<string, number> = {};
  const schedules: Record<string, RunSchedule> = {};
  for (const l of loaded) {
    const name = l.config.name;
    schedules[name] = scheduleOf(l);
    if (!wanted.has(name)) continue;
    const known = rateFromFolder(spans, name);
    if (known) {
      rates[name] = known.rate;
      demands[name] = known.demand;
      continue;
    }
    x.log(`timing this machine: ${Math.min(l.config.trainer.steps, 2)} step(s) of ${name} in a temporary folder`);
    const c = await calibrate(
      l,
      { seed: l.config.seed + 1000 * x.first, ...x.poolOverrides(l, x.first, x.plan) },
      x.timer.machine,
    );
    rates[name] = c.rate;
    demands[name] = c.demand;
  }
  const all = looks.flatMap((l) => l.left);
  const demand = meanDemand(all, demands, (r) => secondsLeft(rates[r.config]!, schedules[r.config]!, r.from));
  const jobs = Math.max(1, x.timer.jobs);
  const record: PredictionRecord = {
    kind: 'prediction',
    at: new Date().toISOString(),
    load: round(x.timer.machine.load),
    cores: x.timer.machine.cores,
    jobs,
    demand: round(demand),
    alone: Object.fromEntries(
      Object.entries(rates).map(([n, r]) => [
        n,
        { seconds: round(secondsLeft(r, schedules[n]!, 0)), source: r.source },
      ]),
    ),
    looks: predictLooks(looks, { rates, schedules, machine: x.timer.machine, jobs, demand }).map((p) => ({
      ...p,
      seconds: round(p.seconds),
    })),
  };
  for (const line of predictionLines(record)) x.log(line);
  appendWallTime(x.out, record);
  return record;
}
