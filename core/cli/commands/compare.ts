import * as path from 'node:path';
import type { Command } from 'commander';
import { runCompare } from '../../report/compare';
import { intFlag } from '../output';
import { CorlError } from '../../errors';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `corl compare`: run configs over seeds and tabulate them in the paper's shape. */
export function compareCommand(program: Command): void {
  program
    .command('compare')
    .description(
      'run several configs over several seeds (resumable) and print a results table; writes report.html with plots',
    )
    .argument('[configs...]', 'config files, one row each')
    .option('-c, --config <file>', 'a config file, one row; repeatable, after the arguments', collect, [])
    .option('--seeds <n>', 'seeds per config', '3')
    .option('--first-seed <i>', 'index of the first seed: runs seed-<i> … seed-<i + n − 1> (default 0)')
    .option('--steps <n>', 'override trainer.steps of every training config (evaluation-only configs stay at 0)')
    .option(
      '--out <dir>',
      'comparison folder (default: runs/compare-<date>-<time>); run again with the same --out to continue an interrupted comparison',
    )
    .option('--progress <mode>', 'auto | lines | none', 'auto')
    .option('--verdict', 'end with one plain line: the last config against each of the others, in points')
    .addHelpText(
      'after',
      '\nExamples:\n  corl compare configs/base.json configs/ttrl.json configs/co-rl.json --seeds 3 --out runs/cmp\n  corl compare configs/base.json configs/ttrl.json configs/co-rl.json --seeds 1 --verdict   # what npm start runs\n',
    )
    .action(
      async (
        given: string[],
        flags: {
          config: string[];
          seeds: string;
          firstSeed?: string;
          steps?: string;
          out?: string;
          progress: string;
          verdict?: boolean;
        },
      ) => {
        const configs = [...given, ...flags.config];
        if (configs.length === 0)
          throw new CorlError(
            'CORL_ERR_CLI_USAGE',
            'expected configs (`corl compare <config> <config>...` or `corl compare -c <config> -c <config>...`), got none',
            { where: '<configs...>' },
          );
        const seeds = intFlag('--seeds', flags.seeds, 1)!;
        const steps = intFlag('--steps', flags.steps, 0);
        const firstSeed = intFlag('--first-seed', flags.firstSeed, 0);
        const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
        const out = flags.out ?? path.join('runs', `compare-${stamp}`);
        if (!['auto', 'lines', 'none'].includes(flags.progress)) {
          throw new CorlError(
            'CORL_ERR_CLI_USAGE',
            `expected --progress auto, lines or none, got "${flags.progress}"`,
            { where: '--progress' },
          );
        }
        const progress = flags.progress as 'auto' | 'lines' | 'none';
        const result = await runCompare({
          configs,
          seeds,
          firstSeed,
          out,
          steps,
          progress,
          verdict: flags.verdict === true,
        });
        process.stdout.write(
          `\n${result.table}\n\nrows with GT = yes used ground truth in their reward (supervised)\nreport: ${result.report}\n${result.verdict ? `\n${result.verdict}\n` : ''}`,
        );
      },
    );
}
