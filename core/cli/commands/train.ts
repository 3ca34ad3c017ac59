import * as path from 'node:path';
import type { Command } from 'commander';
import { loadConfig, loadConfigValue, type LoadedConfig } from '../../config/load';
import { CorlError } from '../../errors';
import { defaultProgress, NoProgress } from '../../trainer/progress';
import { labelUse, RunDirectory } from '../../trainer/run-dir';
import { train, type TrainResult } from '../../trainer/trainer';
import { configArgument, noConfig, pickConfig } from '../config-arg';
import { intFlag, pct, table } from '../output';
import { writeRunReport } from '../../report/write';
import { portableText } from '../../report/portable';

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
      if (!result) return;
      const out = process.stdout;
      out.write(
        `\n${result.supervised ? 'supervised run (a reward source read ground truth)' : result.trainedOnLabels ? 'supervised run (a reward source was trained on labels)' : 'label-free run'}: ${result.steps} step(s)${result.stopped ? ' (stopped early, resumable)' : ''}\n`,
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
      out.write(`report: ${await writeRunReport(result.runDir)}\n`);
    });
}

async function runTrain(flags: TrainFlags): Promise<TrainResult | undefined> {
  const steps = intFlag('--steps', flags.steps, 0);
  const overrides: Record<string, unknown> = steps === undefined ? {} : { 'trainer.steps': steps };
  if (flags.evalSplit !== undefined) {
    if (flags.evalSplit !== 'test' && flags.evalSplit !== 'validation')
      throw new CorlError('CORL_ERR_CLI_USAGE', `expected --eval-split test or validation, got "${flags.evalSplit}"`, {
        where: '--eval-split',
      });
    if (flags.resume)
      throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --eval-split on a new run only, got it with --resume', {
        where: '--eval-split',
        hint: 'a run keeps the split it started with; start a new run to evaluate on another split',
      });
    overrides['eval.split'] = flags.evalSplit;
  }
  let loaded: LoadedConfig;
  // A new run's folder is made once its plugins loaded (checkpoints and data opened): a config that
  // cannot start leaves no folder behind.
  let run: RunDirectory | undefined;
  let makeRun: (() => Promise<RunDirectory>) | undefined;
  if (flags.resume) {
    if (flags.out)
      throw new CorlError('CORL_ERR_CLI_USAGE', 'expected either --out or --resume, got both', { where: '--out' });
    const resumed = RunDirectory.resume(flags.resume);
    run = resumed.run;
    if (resumed.note) process.stderr.write(`${resumed.note}\n`);
    const meta = run.meta();
    const source = run.source() as Record<string, unknown>;
    if (flags.config) {
      const given = await loadConfig(flags.config);
      const started = await loadConfigValue(source, { baseDir: meta.baseDir });
      if (!sameExceptSteps(given.config, started.config)) {
        throw new CorlError(
          'CORL_ERR_RUN_MISMATCH',
          `expected ${flags.config} to match the config the run started with (only trainer.steps may change), got a different config`,
          { where: '-c' },
        );
      }
    }
    loaded = await loadConfigValue(source, {
      baseDir: meta.baseDir,
      overrides,
      file: meta.configFile,
      name: (source.name as string) ?? path.basename(run.dir),
    });
    const state = run.state();
    if (loaded.config.trainer.steps < state.nextStep) {
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        `expected --steps of at least ${state.nextStep} (the steps already done), got ${loaded.config.trainer.steps}`,
        { where: '--steps' },
      );
    }
    if (state.finished && loaded.config.trainer.steps === state.nextStep) {
      process.stderr.write(
        `run ${run.dir} already finished ${state.nextStep} step(s); pass --steps N to train further\n`,
      );
    }
    if (steps !== undefined) {
      await run.writeConfig(loaded.config, loaded.source);
      if (state.finished && steps > state.nextStep) await run.writeState({ ...state, finished: false });
    }
  } else {
    if (!flags.config) throw noConfig('corl train', ' or --resume <run dir>');
    loaded = await loadConfig(flags.config, { overrides });
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    const out = flags.out ?? path.join('runs', `${loaded.config.name}-${stamp}`);
    const fresh = loaded;
    makeRun = async () => {
      run = await RunDirectory.create(out, fresh.config, fresh.source, {
        configFile: fresh.file,
        baseDir: fresh.baseDir,
        ...labelUse(fresh),
      });
      process.stderr.write(`run directory: ${run.dir}\n`);
      return run;
    };
  }
  let stop = false;
  const progress = flags.quiet ? new NoProgress() : defaultProgress(loaded.config.trainer.logEvery);
  const onSigint = (): void => {
    if (stop) process.exit(130);
    stop = true;
    progress.note('interrupt: stopping after this step with a checkpoint (Ctrl-C again to abort now)');
  };
  process.on('SIGINT', onSigint);
  try {
    return await train(loaded, {
      run: run ?? makeRun!,
      resume: flags.resume !== undefined,
      progress,
      shouldStop: () => stop,
    });
  } catch (e) {
    // the run's page says it failed, at the top, with what it logged before (no folder: nothing to report)
    if (!run) throw e;
    try {
      process.stderr.write(
        `report: ${await writeRunReport(run.dir, portableText((e as Error).message ?? String(e)))}\n`,
      );
    } catch {
      // nothing readable to report (e.g. no metrics yet): the error itself is what matters
    }
    throw e;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

function sameExceptSteps(a: unknown, b: unknown): boolean {
  const strip = (c: unknown): unknown => {
    const config = c as { trainer?: object } | null;
    return { ...config, trainer: { ...config?.trainer, steps: 0 } };
  };
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}
