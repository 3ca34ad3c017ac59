// Seeds per hour: how many runs of the default Co-RL config (configs/co-rl.json: both agents, the
// slip regime's full budget) this machine completes per hour, one at a time and two side by side
// (`corl compare --jobs 2`, one process) and as two shards (`corl compare --shard 1/2` and `2/2`, two
// processes), with the cores each keeps busy; then one run of every config of the
// slip-regime plan (docs/results/headline-slips/plan.json) and the plan's wall time at each look;
// then the same for the prediction's plan (docs/results/prediction-slips/plan.json, the regime the
// pre-registered prediction uses), with each config's runs per hour.
// The figures are this machine's only when nothing else runs: the load average is printed first.
// BENCH_SEEDS_STEPS=<n> shortens every run to n steps (a smoke test of the bench, not its figures).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCompare } from '../core/compare/run';
import { loadPlan, plannedConfigFiles } from '../core/compare/plan';
import { CorlError } from '../core/errors';
import { sample } from '../core/stats/paired';
import { decisionTime } from '../core/stats/power';
import type { Bench } from './index';

const ROOT = path.resolve(__dirname, '..', '..');

/** Wall seconds and cores kept busy (process CPU time, every thread, over wall time) of `fn`. */
async function measure(fn: () => Promise<unknown>): Promise<{ wall: number; cores: number }> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await fn();
  const wall = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  return { wall, cores: (used.user + used.system) / 1e6 / wall };
}

/** Run `seeds` seeds of the configs, `jobs` at a time, in a fresh folder under `dir`. */
function runs(dir: string, configs: string[], seeds: number, jobs: number, first: number): () => Promise<unknown> {
  const steps = process.env.BENCH_SEEDS_STEPS ? Number(process.env.BENCH_SEEDS_STEPS) : undefined;
  return () =>
    runCompare({
      configs,
      seeds,
      firstSeed: first,
      jobs,
      out: fs.mkdtempSync(path.join(dir, 'cmp-')),
      progress: 'none',
      log: () => {},
      ...(steps !== undefined ? { steps } : {}),
    });
}

/** Children's CPU seconds (user + system) of this process so far, from /proc/self/stat; NaN off Linux. */
function childCpu(): number {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields 16 and 17 of stat(5) (cutime, cstime), counted from field 3 after the command name
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * `seeds` seeds of `config` as two shards, two `corl compare --shard k/2` processes on one folder
 * (what docs/guide/statistics.md tells a user to run): wall seconds and cores kept busy by both.
 */
async function shards(
  dir: string,
  config: string,
  seeds: number,
  first: number,
): Promise<{ wall: number; cores: number }> {
  const out = fs.mkdtempSync(path.join(dir, 'shard-'));
  const steps = process.env.BENCH_SEEDS_STEPS;
  const cli = path.join(ROOT, 'bin', 'corl.js');
  const cpu = childCpu();
  const t = performance.now();
  await Promise.all(
    [1, 2].map(
      (k) =>
        new Promise<void>((resolve, reject) => {
          const args = [cli, 'compare', config, '--seeds', String(seeds), '--first-seed', String(first)];
          args.push('--out', out, '--progress', 'none', '--shard', `${k}/2`, ...(steps ? ['--steps', steps] : []));
          const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
          let err = '';
          child.stderr.on('data', (d: Buffer) => (err += d.toString()));
          child.on('error', reject);
          child.on('close', (code) =>
            code === 0 ? resolve() : reject(new Error(`shard ${k}/2 exited with ${code}: ${err.trim()}`)),
          );
        }),
    ),
  );
  const wall = (performance.now() - t) / 1000;
  return { wall, cores: (childCpu() - cpu) / wall };
}

/** The primary pair of a committed comparison's verdicts.json and its per-seed differences (points). */
export function primaryDifferences(verdictsFile: string): { a: string; b: string; diffs: number[] } {
  const v = JSON.parse(fs.readFileSync(verdictsFile, 'utf8')) as {
    pairs: { a: string; b: string; role: string; seeds: { diff: number }[] }[];
  };
  const p = v.pairs.find((x) => x.role === 'primary');
  if (!p)
    throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected a primary pair in verdicts.json, got none', {
      where: verdictsFile,
    });
  return { a: p.a, b: p.b, diffs: p.seeds.map((s) => s.diff) };
}

/** The pre-registered prediction's plan (docs/results/calibration-search/prediction.md). */
const PREDICTION = path.join(ROOT, 'docs', 'results', 'prediction-slips', 'plan.json');

/**
 * One run of every config of a plan, one at a time (the checkpoints its configs name, which cost
 * what any pool member costs): each config's runs per hour, the plan's, and its wall time at each
 * look at the speed-up measured above.
 */
async function planTime(
  file: string,
  label: string,
  ctx: { dir: string; speedup: number; jobs: string },
): Promise<void> {
  const plan = loadPlan(file);
  const files = plannedConfigFiles(plan);
  let perSeed = 0;
  for (const [i, c] of plan.plan.configs.entries()) {
    const t = await measure(runs(ctx.dir, [files[i]!], 1, 1, 100));
    perSeed += t.wall;
    process.stdout.write(
      `${label}, ${c.name}: ${t.wall.toFixed(0)} s per run, ${t.cores.toFixed(2)} cores busy → ${(3600 / t.wall).toFixed(1)} runs per hour\n`,
    );
  }
  const n = plan.plan.configs.length;
  process.stdout.write(
    `${label} (${n} configs): ${fmt(perSeed)} per seed of every config one at a time, ${((3600 * n) / perSeed).toFixed(1)} runs per hour${ctx.speedup > 1 ? `; ${fmt(perSeed / ctx.speedup)} with ${ctx.jobs}` : ''}\n`,
  );
  let before = 0;
  for (const [k, seeds] of plan.plan.seeds.looks.entries()) {
    process.stdout.write(
      `  look ${k + 1} (${seeds} seeds per config): ${fmt(((seeds - before) * perSeed) / ctx.speedup)} more with ${ctx.jobs}\n`,
    );
    before = seeds;
  }
}

const fmt = (s: number): string => (s >= 3600 ? `${(s / 3600).toFixed(1)} h` : `${(s / 60).toFixed(1)} min`);

export const bench: Bench = {
  name: 'seeds',
  description:
    'runs per hour of the default Co-RL config (both agents, full budget): one at a time, two side by side in one process, and two shards; the slip-regime plan’s wall time; the prediction’s runs per hour and wall time',
  async run() {
    const load = os.loadavg()[0]!;
    const cores = os.availableParallelism();
    process.stdout.write(
      `load average (1 min) ${load.toFixed(2)} on ${cores} cores${load > 0.5 ? ' — the machine is busy: these figures are not its own; rerun on a quiet machine' : ''}\n`,
    );
    if (process.env.BENCH_SEEDS_STEPS)
      process.stdout.write(
        `BENCH_SEEDS_STEPS=${process.env.BENCH_SEEDS_STEPS}: every run shortened, not the full budget\n`,
      );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-bench-seeds-'));
    try {
      const coRl = path.join(ROOT, 'configs', 'co-rl.json');
      // seed indices far from the committed ones, and fresh folders: every run trains from scratch
      const alone = await measure(runs(dir, [coRl], 1, 1, 100));
      process.stdout.write(
        `co-rl, one run at a time: ${alone.wall.toFixed(0)} s per run, ${alone.cores.toFixed(2)} cores busy → ${(3600 / alone.wall).toFixed(1)} runs per hour\n`,
      );
      const pair = await measure(runs(dir, [coRl], 2, 2, 101));
      const perHour2 = (2 * 3600) / pair.wall;
      process.stdout.write(
        `co-rl, two side by side (--jobs 2): ${pair.wall.toFixed(0)} s for 2 runs, ${pair.cores.toFixed(2)} cores busy → ${perHour2.toFixed(1)} runs per hour (×${(perHour2 / (3600 / alone.wall)).toFixed(2)} against one at a time)\n`,
      );
      const two = await shards(dir, coRl, 2, 103);
      const perHourShards = (2 * 3600) / two.wall;
      process.stdout.write(
        `co-rl, two shards (--shard 1/2 and 2/2, two processes): ${two.wall.toFixed(0)} s for 2 runs, ${two.cores.toFixed(2)} cores busy → ${perHourShards.toFixed(1)} runs per hour (×${(perHourShards / (3600 / alone.wall)).toFixed(2)} against one at a time)\n`,
      );
      const sharded = perHourShards > perHour2;
      const speedup = Math.max(1, Math.max(perHour2, perHourShards) / (3600 / alone.wall));
      const plan = loadPlan(path.join(ROOT, 'docs', 'results', 'headline-slips', 'plan.json'));
      const files = plannedConfigFiles(plan);
      let perSeed = 0;
      const wallOf = new Map<string, number>();
      for (const [i, c] of plan.plan.configs.entries()) {
        // co-rl.json is co-rl-diff.json under another name: its run was timed above
        const t = c.name === 'co-rl-diff' ? alone : await measure(runs(dir, [files[i]!], 1, 1, 100));
        perSeed += t.wall;
        wallOf.set(c.name, t.wall);
        process.stdout.write(`${c.name}: ${t.wall.toFixed(0)} s per run, ${t.cores.toFixed(2)} cores busy\n`);
      }
      const jobs = speedup > 1 ? (sharded ? 'two shards' : '--jobs 2') : 'one at a time';
      process.stdout.write(
        `the slip-regime plan (${plan.plan.configs.length} configs): ${fmt(perSeed)} per seed of every config one at a time${speedup > 1 ? `, ${fmt(perSeed / speedup)} with ${jobs}` : ''}\n`,
      );
      let before = 0;
      for (const [k, n] of plan.plan.seeds.looks.entries()) {
        const wall = ((n - before) * perSeed) / speedup;
        before = n;
        process.stdout.write(`  look ${k + 1} (${n} seeds per config): ${fmt(wall)} more with ${jobs}\n`);
      }
      process.stdout.write(
        `  all ${plan.plan.seeds.looks.length} looks: ${fmt((plan.plan.seeds.looks[plan.plan.seeds.looks.length - 1]! * perSeed) / speedup)}\n`,
      );
      // Time to a decision: seeds the paired t test needs at 80% power, from the per-seed sd of the
      // committed planned slip results, times this machine's measured minutes per seed of the pair.
      const verdicts = path.join(ROOT, 'docs', 'results', 'headline-slips', 'verdicts.json');
      const primary = primaryDifferences(verdicts);
      const sd = sample(primary.diffs).sd;
      const pairMinutes = ((wallOf.get(primary.a) ?? NaN) + (wallOf.get(primary.b) ?? NaN)) / speedup / 60;
      process.stdout.write(
        `time to a decision, primary pair ${primary.a} − ${primary.b} (per-seed sd ${sd.toFixed(2)} points over the ${primary.diffs.length} committed seeds of docs/results/headline-slips; ${pairMinutes.toFixed(1)} min per seed of the pair with ${jobs}; paired t, two-sided ${plan.plan.alpha}, 80% power):\n`,
      );
      for (const effect of [1, 2]) {
        const d = decisionTime(effect, sd, plan.plan.alpha, pairMinutes);
        process.stdout.write(`  a ${effect}-point difference: ${d.seeds} seeds per config → ${fmt(d.minutes * 60)}\n`);
        if (effect === 1) {
          const within = d.minutes <= 30 ? 'yes' : 'no';
          process.stdout.write(`  a 1-point difference resolves within 30 minutes: ${within}\n`);
        }
      }
      // the regime the prediction uses: the slip configs on 500 fresh held-out problems
      await planTime(PREDICTION, 'the prediction (slip regime, 500 held-out problems)', { dir, speedup, jobs });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
