import type { Command } from 'commander';
import { runTraining, type TrainRun } from '../../api/train';
import type { Usage } from '../../api/usage';
import { CorlError } from '../../errors';
import { configArgument, noConfig, pickConfig } from '../config-arg';
import { intFlag, pct, table } from '../output';

interface TrainFlags {
  config?: string;
  steps?: string;
  evalSplit?: string;
  out?: string;
  resume?: string;
  quiet?: boolean;
}

/** `corl train`: run a config, or resume a run. */
export function trainCommand(program: Command): void {
  configArgument(
    program.command('train').description('train a cohort on a config (Co-RL, TTRL, GT-reward, ...), or resume a run'),
  )
    .option('-c, --config <file>', 'config file (JSON, comments allowed)')
    .option('--steps <n>', 'override trainer.steps (on resume: continue up to this many steps)')
    .option(
      '--eval-split <split>',
      'override eval.split: "test" (held-out) or "validation" (a new run only), e.g. to measure base models with --steps 0',
    )
    .option('--out <dir>', 'run directory (default: runs/<name>-<date>-<time>)')
    .option('--resume <dir>', 'continue a run from its last checkpoint')
    .option('-q, --quiet', 'no progress output')
    .addHelpText(
      'after',
      '\nExamples:\n  corl train -c configs/co-rl.json\n  corl train -c configs/ttrl.json --steps 5 --out runs/try\n  corl train --resume runs/try --steps 10\n',
    )
    .action(async (config: string | undefined, flags: TrainFlags) => {
      const result = await runTrain({ ...flags, config: pickConfig(config, flags.config, 'corl train') });
      const out = process.stdout;
      out.write(
        `\n${result.readsGroundTruth ? 'supervised run (a reward source read ground truth)' : result.trainedOnLabels ? 'supervised run (a reward source was trained on labels)' : 'label-free run'}: ${result.steps} step(s)${result.stopped ? ' (stopped early, resumable)' : ''}\n`,
      );
      out.write(
        table([
          ['agent', 'family', 'base pass@1', 'final pass@1', 'change'],
          ...result.agents.map((a) => [
            a.name,
            a.family,
            pct(a.base),
            pct(a.final),
            a.base !== undefined && a.final !== undefined
              ? `${a.final >= a.base ? '+' : ''}${((a.final - a.base) * 100).toFixed(1)} pts`
              : '-',
          ]),
        ]) + '\n',
      );
      out.write(`run directory: ${result.runDir}\n`);
      out.write(`report: ${result.report}\n`);
    });
}

/** `corl train`'s names for its inputs, in its usage errors. */
const CLI_TRAIN: Usage = {
  code: 'CORL_ERR_CLI_USAGE',
  name: (input) =>
    ({ config: '-c', steps: '--steps', evalSplit: '--eval-split', out: '--out', resume: '--resume' })[input] ??
    `--${input}`,
};

async function runTrain(flags: TrainFlags): Promise<TrainRun> {
  const steps = intFlag('--steps', flags.steps, 0);
  if (flags.evalSplit !== undefined && flags.evalSplit !== 'test' && flags.evalSplit !== 'validation')
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected --eval-split test or validation, got "${flags.evalSplit}"`, {
      where: '--eval-split',
    });
  if (!flags.resume && !flags.config) throw noConfig('corl train', ' or --resume <run dir>');
  // Ctrl-C once: stop after this step with a checkpoint (resumable); twice: now.
  const stop = new AbortController();
  const onSigint = (): void => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort('Ctrl-C again to abort now');
  };
  process.on('SIGINT', onSigint);
  try {
    return await runTraining(
      {
        ...(flags.config !== undefined ? { config: flags.config } : {}),
        ...(flags.resume !== undefined ? { resume: flags.resume } : {}),
        ...(steps !== undefined ? { steps } : {}),
        ...(flags.evalSplit !== undefined ? { evalSplit: flags.evalSplit as 'test' | 'validation' } : {}),
        ...(flags.out !== undefined ? { out: flags.out } : {}),
        progress: flags.quiet ? 'none' : 'auto',
        signal: stop.signal,
        log: (line) => process.stderr.write(`${line}\n`),
      },
      CLI_TRAIN,
    );
  } finally {
    process.off('SIGINT', onSigint);
  }
}
