// Noise levers on the same seeds (docs/results/noise-slips/plan.md): re-analyses the committed raw
// outputs of a comparison (default docs/results/headline-slips) and prints, per pair, the per-seed sd
// of the primary difference with and without common random numbers, with the step-0 score as a
// covariate or not, and as a function of the held-out size n and samples per problem K (the last
// evaluation's rows subsampled, and the variance components fitted); then times a short run of the
// pair's configs on this machine to put a cost per seed beside each design.
// BENCH_NOISE_FOLDER=<folder> analyses another unsealed comparison; BENCH_NOISE_JSON=<file> writes the
// per-seed values and the grid there; BENCH_NOISE_TIMING=0 skips the timing run (figures without cost);
// BENCH_NOISE_COSTS=<file> takes the costs a BENCH_NOISE_JSON file of an earlier run recorded.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCompare } from '../core/compare/run';
import { CorlError } from '../core/errors';
import { readEvalRows } from '../core/report/eval-rows';
import { evalStepFiles } from '../core/report/markdown';
import { fitComponents, pairLevers, subsampleScore, variance, varianceAt } from '../core/stats/levers';
import type { Components, GridPoint, PairLevers, RunScore } from '../core/stats/levers';
import { decisionTime } from '../core/stats/power';
import { mixSeed, Rng } from '../core/util/rng';
import type { Bench } from './index';

const ROOT = path.resolve(__dirname, '..', '..');

/** The choosing pair (both baselines) and the reported pair (the primary): plan.md. */
export const PAIRS: readonly { a: string; b: string; role: 'choosing' | 'reported' }[] = [
  { a: 'gt', b: 'ttrl', role: 'choosing' },
  { a: 'co-rl-diff', b: 'ttrl', role: 'reported' },
];

export const SIZES = [25, 50, 100, 200] as const;
export const SAMPLES = [1, 2, 4, 8] as const;
/** Random problem subsets per held-out size below the full set. */
export const SUBSETS = 200;

/** One run's rows at its step-0 and last evaluations, rows[p][agent] = that agent's samples of problem p. */
export interface RunRows {
  readonly seed: number;
  readonly start: boolean[][][];
  readonly final: boolean[][][];
}

/** Every seed of `config` in a comparison folder, its rows ordered by problem id (`ids`). */
export function readRunRows(folder: string, config: string): { ids: string[]; runs: RunRows[] } {
  const dir = path.join(folder, config);
  if (!fs.existsSync(dir))
    throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected runs of ${config} in the comparison, got none`, {
      where: dir,
    });
  if (fs.existsSync(path.join(folder, 'seal.key')))
    throw new CorlError('CORL_ERR_RUN_SEALED', 'expected an unsealed comparison: this one is sealed until its look', {
      where: folder,
      hint: 'analyse a committed comparison whose looks are rendered (corl report --pack keeps a copy sealed)',
    });
  const seeds = fs
    .readdirSync(dir)
    .filter((s) => /^seed-\d+$/.test(s))
    .map((s) => Number(s.slice(5)))
    .sort((x, y) => x - y);
  let ids: string[] | undefined;
  const runs = seeds.map((seed) => {
    const files = evalStepFiles(path.join(dir, `seed-${seed}`));
    const steps = [...files.keys()].sort((x, y) => x - y);
    const where = path.join(dir, `seed-${seed}`, 'eval');
    if (steps[0] !== 0 || steps.length < 2)
      throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected the step-0 and a later evaluation, got fewer', { where });
    if ([...files.values()].some((f) => f.endsWith('.sealed')))
      throw new CorlError('CORL_ERR_RUN_SEALED', 'expected unsealed evaluation rows, got sealed ones', { where });
    const grid = (file: string): boolean[][][] => {
      const byId = new Map<string, boolean[][]>();
      for (const r of readEvalRows(file)) {
        if (r.id === undefined)
          throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected every evaluation row to name its problem', {
            where: file,
          });
        const at = byId.get(r.id) ?? [];
        at[r.agent] = [...r.correct];
        byId.set(r.id, at);
      }
      const own = [...byId.keys()].sort();
      ids ??= own;
      if (own.length !== ids.length || own.some((x, i) => x !== ids![i]))
        throw new CorlError(
          'CORL_ERR_RUN_CORRUPT',
          'expected every run to evaluate the same problems, got another set',
          {
            where: file,
          },
        );
      return own.map((id) => byId.get(id)!);
    };
    return { seed, start: grid(files.get(0)!), final: grid(files.get(steps[steps.length - 1]!)!) };
  });
  return { ids: ids ?? [], runs };
}

/** The seed indices both configs have, and each one's rows in that order. */
function matched(a: RunRows[], b: RunRows[]): [RunRows[], RunRows[]] {
  const bs = new Map(b.map((r) => [r.seed, r]));
  const both = a.filter((r) => bs.has(r.seed));
  return [both, both.map((r) => bs.get(r.seed)!)];
}

function scores(runs: readonly RunRows[], problems: readonly number[], K: number): RunScore[] {
  return runs.map((r) => ({
    final: subsampleScore(r.final, problems, K),
    start: subsampleScore(r.start, problems, K),
  }));
}

/**
 * The per-seed variance of the paired difference of final scores at each (n, K): `subsets` random
 * subsets of n problems (the same for both configs and every seed of one replicate), the first K
 * samples of each; the variance averaged over subsets.
 */
export function grid(a: RunRows[], b: RunRows[], problems: number, subsets = SUBSETS): GridPoint[] {
  const out: GridPoint[] = [];
  for (const n of SIZES.filter((x) => x <= problems))
    for (const K of SAMPLES) {
      const reps = n === problems ? 1 : subsets;
      let total = 0;
      for (let r = 0; r < reps; r++) {
        const chosen =
          n === problems
            ? Array.from({ length: n }, (_, i) => i)
            : new Rng(mixSeed('noise-slips', n, r)).shuffle(Array.from({ length: problems }, (_, i) => i)).slice(0, n);
        const sa = scores(a, chosen, K);
        const sb = scores(b, chosen, K);
        total += variance(sa.map((x, i) => x.final - sb[i]!.final));
      }
      out.push({ n, K, variance: total / reps });
    }
  return out;
}

/** Seconds of a run of `config` alone: the evaluation part at 200 × 8 and the rest, from a short run. */
export interface RunCost {
  readonly evalSeconds: number;
  readonly restSeconds: number;
}

/** Time 25 steps of each config (two evaluations) and scale to the config's full budget. */
async function timeConfigs(configs: Record<string, string>): Promise<Record<string, RunCost>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-bench-noise-'));
  try {
    const out: Record<string, RunCost> = {};
    for (const [name, file] of Object.entries(configs)) {
      const folder = path.join(dir, name);
      await runCompare({
        configs: [file],
        seeds: 1,
        firstSeed: 100,
        out: folder,
        progress: 'none',
        log: () => {},
        steps: 25,
      });
      const lines = fs
        .readFileSync(path.join(folder, name, 'seed-100', 'timing.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { step: number; evalMs: number; checkpointMs: number; totalMs: number });
      const steady = lines.filter((l) => l.step >= 2);
      const step = steady.reduce((s, l) => s + l.totalMs - l.evalMs - l.checkpointMs, 0) / steady.length / 1000;
      const evalOnce = lines[lines.length - 1]!.evalMs / 1000;
      const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as { trainer: { steps: number; evalEvery: number } };
      const evals = 1 + Math.ceil(cfg.trainer.steps / cfg.trainer.evalEvery);
      out[name] = { evalSeconds: evals * evalOnce, restSeconds: cfg.trainer.steps * step };
    }
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The costs an earlier run of this bench wrote (BENCH_NOISE_JSON), for every config named. */
function recordedCosts(file: string, names: readonly string[]): Record<string, RunCost> {
  const v = JSON.parse(fs.readFileSync(file, 'utf8')) as { costs?: Record<string, RunCost> };
  const missing = names.filter(
    (c) => typeof v.costs?.[c]?.evalSeconds !== 'number' || typeof v.costs[c]!.restSeconds !== 'number',
  );
  if (missing.length)
    throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected recorded costs of ${missing.join(', ')}, got none`, {
      where: file,
      hint: 'unset BENCH_NOISE_COSTS to time the configs now',
    });
  return v.costs!;
}

/** Minutes per seed of the pair at n problems and K samples (evaluation linear in n·K from 200 × 8). */
export function pairMinutes(costs: readonly RunCost[], n: number, K: number): number {
  return costs.reduce((s, c) => s + c.restSeconds + (c.evalSeconds * n * K) / (200 * 8), 0) / 60;
}

/** One design of a pair: its per-seed sd, the held-out size and samples it evaluates with, and its cost. */
export interface NoiseDesign {
  readonly name: string;
  readonly n: number;
  readonly K: number;
  readonly sd: number;
  /** Whether corl compare's verdict (the paired t interval of the primary metric) is what it measures. */
  readonly verdict: boolean;
  /** s² × minutes per seed of the pair. */
  readonly merit: number;
  readonly seeds: number;
  readonly minutes: number;
}

export const COMMITTED = 'common random numbers, final (the committed design)';
const GRID_SIZES = [50, 100, 200, 400, 800] as const;

/**
 * The designs of a pair: at the committed size, with and without common random numbers, final,
 * change and ANCOVA; then common random numbers and final at each size and samples of the grid, its
 * sd the measured one scaled by the fitted components (√(s²(n, K) / s²(size, 8))).
 */
export function designsOf(
  levers: PairLevers,
  comp: Components,
  size: number,
  costs: readonly RunCost[],
): NoiseDesign[] {
  const out: NoiseDesign[] = [];
  const add = (name: string, sd: number, n: number, K: number, verdict: boolean): void => {
    const m = pairMinutes(costs, n, K);
    const d = decisionTime(1, sd, 0.05, m);
    out.push({ name, n, K, sd, verdict, merit: sd * sd * m, seeds: d.seeds, minutes: d.minutes });
  };
  add(COMMITTED, levers.paired.final.sd, size, 8, true);
  add('common random numbers, ANCOVA on the step-0 score', levers.paired.ancova.sd, size, 8, false);
  add('independent runs, final', levers.independent.final.sd, size, 8, true);
  add('independent runs, change', levers.independent.change.sd, size, 8, true);
  add('independent runs, ANCOVA on the step-0 score', levers.independent.ancova.sd, size, 8, false);
  const at = varianceAt(comp, size, 8);
  for (const n of GRID_SIZES)
    for (const K of [1, 2, 4, 8])
      add(
        `common random numbers, final at ${n} × ${K}`,
        levers.paired.final.sd * Math.sqrt(varianceAt(comp, n, K) / at),
        n,
        K,
        true,
      );
  return out;
}

/** The design the plan's rule picks: the smallest s² × cost among those corl compare decides by. */
export function bestValid(designs: readonly NoiseDesign[]): NoiseDesign {
  return designs.filter((d) => d.verdict).reduce((best, d) => (d.merit < best.merit ? d : best));
}

const f2 = (x: number): string => x.toFixed(2);

function leverLines(l: PairLevers): string[] {
  return [
    `  common random numbers (seed index i of both), final:            sd ${f2(l.paired.final.sd)}`,
    `  common random numbers, change (last minus step 0):             sd ${f2(l.paired.change.sd)}`,
    `  common random numbers, ANCOVA on the shared step-0 score:      sd ${f2(l.paired.ancova.sd)} (slope ${f2(l.paired.ancova.slope)}, ${l.paired.ancova.df} df)`,
    `  independent runs, final:                                       sd ${f2(l.independent.final.sd)}`,
    `  independent runs, change:                                      sd ${f2(l.independent.change.sd)}`,
    `  independent runs, ANCOVA (slope pooled within configs):        sd ${f2(l.independent.ancova.sd)} (slope ${f2(l.independent.ancova.slope)}, ${l.independent.ancova.df} df)`,
    `  correlation of the two configs' final scores at one seed index: ${f2(l.correlation)}`,
  ];
}

export const bench: Bench = {
  name: 'noise',
  description:
    'variance levers on the same seeds of a committed comparison: common random numbers, the step-0 covariate, held-out size × samples per problem (docs/results/noise-slips)',
  async run() {
    const folder = path.resolve(process.env.BENCH_NOISE_FOLDER ?? path.join(ROOT, 'docs', 'results', 'headline-slips'));
    const put = (s: string): boolean => process.stdout.write(`${s}\n`);
    put(`comparison: ${path.relative(ROOT, folder) || folder}`);
    const names = [...new Set(PAIRS.flatMap((p) => [p.a, p.b]))];
    const rows = Object.fromEntries(names.map((c) => [c, readRunRows(folder, c)]));
    const problems = rows[names[0]!]!.ids.length;
    const json: Record<string, unknown> = { folder: path.relative(ROOT, folder), pairs: {} };
    const fitted: Record<string, { levers: PairLevers; points: GridPoint[]; comp: Components }> = {};
    for (const p of PAIRS) {
      const [a, b] = matched(rows[p.a]!.runs, rows[p.b]!.runs);
      const all = Array.from({ length: problems }, (_, i) => i);
      const sa = scores(a, all, 8);
      const sb = scores(b, all, 8);
      const levers = pairLevers(sa, sb);
      put(
        `\n${p.a} − ${p.b} (${p.role === 'choosing' ? 'the choosing pair' : 'reported, never used to choose'}), ${levers.seeds} seeds, ${problems} problems × 8 samples, points:`,
      );
      for (const l of leverLines(levers)) put(l);
      const points = grid(a, b, problems);
      const comp = fitComponents(points);
      put(
        `  per-seed sd of the paired difference of final by held-out size n (rows) and samples K (columns), ${SUBSETS} random subsets per n < ${problems}:`,
      );
      put(`    n \\ K ${SAMPLES.map((k) => String(k).padStart(6)).join('')}`);
      for (const n of SIZES.filter((x) => x <= problems))
        put(
          `    ${String(n).padStart(5)} ${SAMPLES.map((K) => f2(Math.sqrt(points.find((q) => q.n === n && q.K === K)!.variance)).padStart(6)).join('')}`,
        );
      put(
        `  fit s²(n, K) = A + B/n + C/(n·K): A ${f2(comp.A)}, B ${f2(comp.B)}, C ${f2(comp.C)} (points²); at ${problems} × 8: training ${f2(comp.A + comp.B / problems)}, evaluation sampling ${f2(comp.C / (problems * 8))}`,
      );
      fitted[`${p.a} − ${p.b}`] = { levers, points, comp };
      (json.pairs as Record<string, unknown>)[`${p.a} − ${p.b}`] = {
        role: p.role,
        seeds: a.map((r) => r.seed),
        a: sa,
        b: sb,
        levers,
        grid: points,
        components: comp,
      };
    }
    if (process.env.BENCH_NOISE_TIMING !== '0') {
      const load = os.loadavg()[0]!;
      const again = process.env.BENCH_NOISE_COSTS;
      put(
        again
          ? `\ncost per seed: the costs recorded in ${again} (an earlier run of this bench), not timed now`
          : `\ncost per seed: 25 steps of each config timed now (load average ${f2(load)} on ${os.availableParallelism()} cores${load > 0.5 ? ': the machine is busy, so these are not its idle figures' : ''}), scaled to the full budget`,
      );
      const files = Object.fromEntries(names.map((c) => [c, path.join(ROOT, 'configs', `${c}.json`)]));
      const costs = again ? recordedCosts(again, names) : await timeConfigs(files);
      for (const [c, t] of Object.entries(costs))
        put(
          `  ${c}: ${t.restSeconds.toFixed(0)} s training + ${t.evalSeconds.toFixed(0)} s evaluating (${((100 * t.evalSeconds) / (t.restSeconds + t.evalSeconds)).toFixed(0)}% evaluation, 200 × 8)`,
        );
      json.costs = costs;
      const choice: Record<string, NoiseDesign[]> = {};
      for (const p of PAIRS) {
        const { levers, comp } = fitted[`${p.a} − ${p.b}`]!;
        const designs = designsOf(levers, comp, problems, [costs[p.a]!, costs[p.b]!]);
        choice[`${p.a} − ${p.b}`] = designs;
        put(
          `\n${p.a} − ${p.b}: each design's per-seed sd, s² × cost per seed of the pair (one at a time, on this machine as timed), and the seeds and minutes to resolve a 1-point difference at 80% power (two-sided 5%):`,
        );
        for (const d of designs.filter((x) => x.n === problems && x.K === 8))
          put(
            `  ${d.name}${d.verdict ? '' : ' (not a verdict corl computes)'}: sd ${f2(d.sd)}, s² × cost ${d.merit.toFixed(1)} points²·min, ${d.seeds} seeds → ${d.minutes.toFixed(0)} min`,
          );
        put(
          `  held-out size × samples, common random numbers, final (the measured sd at ${problems} × 8 scaled by the fit; n > ${problems} extrapolated), s² × cost against ${problems} × 8:`,
        );
        put(`    n \\ K ${[1, 2, 4, 8].map((k) => String(k).padStart(6)).join('')}`);
        const base = designs.find((d) => d.name === COMMITTED)!;
        for (const n of GRID_SIZES)
          put(
            `    ${String(n).padStart(5)} ${[1, 2, 4, 8].map((K) => f2(designs.find((d) => d.n === n && d.K === K && d.name.startsWith('common random numbers, final at'))!.merit / base.merit).padStart(6)).join('')}`,
          );
      }
      const chosen = bestValid(choice[`${PAIRS[0]!.a} − ${PAIRS[0]!.b}`]!);
      const reported = choice[`${PAIRS[1]!.a} − ${PAIRS[1]!.b}`]!;
      put(
        `\nthe plan's rule (smallest s² × cost on ${PAIRS[0]!.a} − ${PAIRS[0]!.b} among the designs corl compare decides by): ${chosen.name}`,
      );
      const r = reported.find((d) => d.name === chosen.name)!;
      const c = reported.find((d) => d.name === COMMITTED)!;
      put(
        `  on ${PAIRS[1]!.a} − ${PAIRS[1]!.b}: sd ${f2(r.sd)}, ${r.seeds} seeds → ${r.minutes.toFixed(0)} min for 1 point, against the committed design's sd ${f2(c.sd)}, ${c.seeds} seeds → ${c.minutes.toFixed(0)} min`,
      );
      json.designs = choice;
      json.chosen = chosen.name;
    }
    if (process.env.BENCH_NOISE_JSON)
      fs.writeFileSync(process.env.BENCH_NOISE_JSON, JSON.stringify(json, null, 1) + '\n');
  },
};
