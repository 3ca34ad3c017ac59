import type { Command } from 'commander';
import { defaultCompareOut, runCompare, runShard } from '../../compare/run';
import { parseShard } from '../../compare/shard';
import { loadPlan, MAX_SEEDS } from '../../compare/plan';
import { designFromParts, type Design } from '../../report/design';
import { PRIMARY_METRICS, type PairSpec, type PrimaryMetric } from '../../report/paired';
import { SPENDING, type Spending } from '../../stats/sequential';
import { intFlag } from '../output';
import { CorlError } from '../../errors';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

interface CompareFlags {
  config: string[];
  seeds?: string;
  firstSeed?: string;
  steps?: string;
  out?: string;
  progress: string;
  verdict?: boolean;
  plan?: string;
  metric?: string;
  pairs?: string;
  against?: string;
  alpha?: string;
  margin?: string;
  effect?: string;
  untilResolved?: boolean;
  looks?: string;
  boundary?: string;
  jobs?: string;
  shard?: string;
  committed?: string;
}

/** A positive number flag ("2", "0.05"), within (0, max). */
function numberFlag(name: string, value: string | undefined, max = Infinity): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n >= max)
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected ${name} to be a number above 0${max < Infinity ? ` and below ${max}` : ''}, got "${value}"`,
      {
        where: name,
      },
    );
  return n;
}

/** `--pairs a:b,c:d`. */
function pairsFlag(value: string | undefined): PairSpec[] | undefined {
  if (value === undefined) return undefined;
  return value.split(',').map((part) => {
    const m = /^([A-Za-z0-9._-]+):([A-Za-z0-9._-]+)$/.exec(part.trim());
    if (!m || m[1] === m[2])
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        `expected --pairs as a:b,c:d with two different config names each, got "${part}"`,
        {
          where: '--pairs',
        },
      );
    return { a: m[1]!, b: m[2]! };
  });
}

/** `--looks 4,8,12`: increasing seed counts of at least 2. */
function looksFlag(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const looks = value.split(',').map((x) => intFlag('--looks', x.trim(), 2, MAX_SEEDS)!);
  looks.forEach((n, i) => {
    if (i > 0 && n <= looks[i - 1]!)
      throw new CorlError('CORL_ERR_CLI_USAGE', `expected --looks to increase, got ${value}`, { where: '--looks' });
  });
  return looks;
}

/** The design the flags describe (no plan). */
function designFlags(f: CompareFlags, firstSeed: number): Design | undefined {
  const metric = f.metric ?? 'final';
  if (!PRIMARY_METRICS.includes(metric as PrimaryMetric))
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected --metric ${PRIMARY_METRICS.join(' or ')}, got "${metric}"`, {
      where: '--metric',
    });
  const pairs = pairsFlag(f.pairs);
  if (pairs && f.against)
    throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --pairs or --against, got both', { where: '--against' });
  const looks = looksFlag(f.looks);
  if (f.untilResolved && !looks)
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      'expected --looks with --until-resolved (seeds per config at each look, e.g. 4,8,12), got none',
      {
        where: '--until-resolved',
        hint: 'or write a plan and pass --plan',
      },
    );
  if (looks && !f.untilResolved)
    throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --looks only with --until-resolved, got it alone', {
      where: '--looks',
    });
  if (f.untilResolved && f.seeds !== undefined)
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      'expected --looks to set the seeds with --until-resolved, got --seeds too',
      {
        where: '--seeds',
        hint: 'the last look is the seed cap',
      },
    );
  const boundary = f.boundary ?? 'lan-demets-pocock';
  if (![...SPENDING, 'fixed'].includes(boundary))
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected --boundary ${[...SPENDING, 'fixed'].join(', ')}, got "${boundary}"`,
      {
        where: '--boundary',
      },
    );
  const given = [f.metric, f.pairs, f.against, f.alpha, f.margin, f.effect, f.untilResolved, f.boundary].some(
    (x) => x !== undefined,
  );
  if (!given) return undefined;
  const margin = numberFlag('--margin', f.margin);
  const effect = numberFlag('--effect', f.effect);
  const alpha = numberFlag('--alpha', f.alpha, 0.5);
  return designFromParts(
    {
      metric: metric as PrimaryMetric,
      ...(pairs ? { pairs } : {}),
      ...(f.against ? { against: f.against.split(',').map((s) => s.trim()) } : {}),
      ...(alpha !== undefined ? { alpha } : {}),
      ...(margin !== undefined ? { margin } : {}),
      ...(effect !== undefined ? { effect } : {}),
      ...(looks ? { looks, boundary: boundary as Spending | 'fixed' } : {}),
    },
    firstSeed,
  );
}

/** Under a plan the plan fixes these. */
const PLAN_FIXES: readonly [keyof CompareFlags, string][] = [
  ['seeds', '--seeds'],
  ['firstSeed', '--first-seed'],
  ['steps', '--steps'],
  ['metric', '--metric'],
  ['pairs', '--pairs'],
  ['against', '--against'],
  ['alpha', '--alpha'],
  ['margin', '--margin'],
  ['effect', '--effect'],
  ['untilResolved', '--until-resolved'],
  ['looks', '--looks'],
  ['boundary', '--boundary'],
];

/** `corl compare`: run configs over seeds and tabulate them in the paper's shape, with paired verdicts. */
export function compareCommand(program: Command): void {
  program
    .command('compare')
    .description(
      'run several configs over several seeds (resumable), print a results table and paired verdicts (interval and outcome per pair); writes report.html with plots',
    )
    .argument('[configs...]', 'config files, one row each (none with --plan: the plan names them)')
    .option('-c, --config <file>', 'a config file, one row; repeatable, after the arguments', collect, [])
    .option('--seeds <n>', 'seeds per config (default 3)')
    .option('--first-seed <i>', 'index of the first seed: runs seed-<i> … seed-<i + n − 1> (default 0)')
    .option('--steps <n>', 'override trainer.steps of every training config (evaluation-only configs stay at 0)')
    .option(
      '--out <dir>',
      'comparison folder (default: runs/compare-<date>-<time>); run again with the same --out to continue an interrupted comparison',
    )
    .option('--progress <mode>', 'auto | lines | none', 'auto')
    .option(
      '--verdict',
      'end with one plain line: the last config against each of the others, in points with intervals (with one seed: the committed result of the same configs)',
    )
    .option(
      '--plan <file>',
      'run a pre-registered plan (configs, split, metric, pairs, margin, seeds, looks, boundary): recorded by its sha256; prints the predicted wall time of each look before it runs (a config timed briefly, or its runs already in --out); see docs/guide/statistics.md',
    )
    .option(
      '--metric <name>',
      'primary metric: final (average pass@1 at the last evaluation) or change (minus step 0); default final',
    )
    .option('--pairs <a:b,...>', 'the differences a − b to decide (default: each config against the first)')
    .option('--against <names>', 'decide each config against each of these configs (comma-separated)')
    .option('--alpha <a>', 'two-sided error rate of the intervals (default 0.05)')
    .option('--margin <points>', 'equivalence margin in points: a pair within ±margin by TOST is "equivalent"')
    .option('--effect <points>', 'the effect whose seeds needed are reported (default: the margin, else 2)')
    .option(
      '--until-resolved',
      'add seeds look by look (--looks) until every pair is ahead, behind or equivalent, with a Lan–DeMets group-sequential boundary',
    )
    .option('--looks <n,n,...>', 'with --until-resolved: seeds per config at each look; the last is the cap')
    .option('--boundary <name>', `with --until-resolved: ${[...SPENDING].join(' | ')} (default lan-demets-pocock)`)
    .option(
      '--jobs <n>',
      'runs at once, in this process (default 1; a 2-agent run already keeps about 1.7 cores busy: npm run bench seeds measures whether 2 helps)',
    )
    .option(
      '--shard <k/n|auto|auto/n>',
      'run only seeds k, k + n, … of the next look (every config at each), in this process, and stop without rendering: start n shards on the same --out (one per core or machine), then run without --shard to render and decide; auto takes k and n from a Slurm array task (SLURM_ARRAY_TASK_ID, _COUNT, _MIN, _MAX), auto/n takes k from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)',
    )
    .option('--committed <dir>', 'where the one-seed verdict looks for committed results (default docs/results)')
    .addHelpText(
      'after',
      '\nExamples:\n  corl compare configs/base.json configs/ttrl.json configs/co-rl.json --seeds 3 --out runs/cmp\n  corl compare configs/base.json configs/ttrl.json configs/co-rl.json --seeds 1 --verdict   # what npm start runs\n  corl compare configs/ttrl.json configs/co-rl-diff.json --until-resolved --looks 4,8,12 --margin 2 --out runs/seq\n  corl compare --plan docs/results/headline-slips/plan.json --out runs/headline-slips\n  corl compare --plan docs/results/headline-slips/plan.json --out runs/headline-slips --shard 1/2   # and --shard 2/2 beside it\n  sbatch --array=0-3 --wrap "npx corl compare a.json b.json --seeds 8 --out runs/sweep --shard auto"   # corl init --slurm writes the scripts\n',
    )
    .action(async (given: string[], flags: CompareFlags) => {
      const configs = [...given, ...flags.config];
      if (configs.length === 0 && flags.plan === undefined)
        throw new CorlError(
          'CORL_ERR_CLI_USAGE',
          'expected configs (`corl compare <config> <config>...` or `corl compare -c <config> -c <config>...`), or --plan, got none',
          { where: '<configs...>' },
        );
      const jobs = intFlag('--jobs', flags.jobs, 1);
      if (!['auto', 'lines', 'none'].includes(flags.progress)) {
        throw new CorlError('CORL_ERR_CLI_USAGE', `expected --progress auto, lines or none, got "${flags.progress}"`, {
          where: '--progress',
        });
      }
      const plan = flags.plan !== undefined ? loadPlan(flags.plan) : undefined;
      if (plan)
        for (const [key, name] of PLAN_FIXES)
          if (flags[key] !== undefined)
            throw new CorlError('CORL_ERR_PLAN_MISMATCH', `expected no ${name} with --plan, got ${name}`, {
              where: name,
              hint: 'the plan fixes the configs, seeds, looks, pairs and rules',
            });
      const seeds = intFlag('--seeds', flags.seeds ?? '3', 1, MAX_SEEDS)!;
      const steps = intFlag('--steps', flags.steps, 0);
      const firstSeed = intFlag('--first-seed', flags.firstSeed, 0, MAX_SEEDS * 100) ?? 0;
      const design = plan ? undefined : designFlags(flags, firstSeed);
      const out = flags.out ?? defaultCompareOut(plan);
      const shard = flags.shard !== undefined ? parseShard(flags.shard) : undefined;
      if (shard && flags.verdict)
        throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --verdict without --shard: a shard renders nothing', {
          where: '--shard',
          hint: 'run the comparison without --shard once every shard is done',
        });
      const options = {
        configs,
        seeds,
        firstSeed,
        out,
        steps,
        progress: flags.progress as 'auto' | 'lines' | 'none',
        verdict: flags.verdict === true,
        ...(plan ? { plan } : {}),
        ...(design ? { design } : {}),
        ...(jobs !== undefined ? { jobs } : {}),
        ...(flags.committed ? { committed: flags.committed } : {}),
      };
      // A Slurm requeue, scancel or a pod's deletion sends SIGTERM, a user's Ctrl-C SIGINT, a closed
      // terminal SIGHUP: exit at once, giving back the folder locks this process holds and removing
      // its temporary folders (a kill without it leaves the locks for the next run to break, the
      // folders in the system's tmp).
      for (const [signal, code] of [
        ['SIGTERM', 143],
        ['SIGINT', 130],
        ['SIGHUP', 129],
      ] as const)
        process.once(signal, () => {
          process.stderr.write(`corl compare: stopped by ${signal}; run the same command again to resume\n`);
          process.exit(code);
        });
      if (shard) {
        const done = await runShard(options, shard);
        process.stdout.write(`shard ${shard.index}/${shard.count}: seeds ${done.seeds.join(', ') || 'none'} ran\n`);
        return;
      }
      const result = await runCompare(options);
      process.stdout.write(
        `\n${result.table}\n\nrows with GT = yes read ground truth or were trained on labels (supervised)\n\n${result.summary}\nreport: ${result.report}\n${result.verdict ? `\n${result.verdict}\n` : ''}`,
      );
    });
}
