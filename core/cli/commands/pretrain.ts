import type { Command } from 'commander';
import { runPretraining } from '../../api/pretrain';
import type { Usage } from '../../api/usage';
import { CorlError } from '../../errors';
import type { PretrainResult } from '../../trainer/pretrain';
import { intFlag, pct, table } from '../output';
import { noConfig, pickConfig } from '../config-arg';

interface PretrainFlags {
  config?: string;
  agent?: string;
  out?: string;
  steps?: string;
  quiet?: boolean;
}

/** `corl pretrain`: supervised cross-entropy on the task's pretraining text, then a checkpoint per agent. */
export function pretrainCommand(program: Command): void {
  program
    .command('pretrain')
    .argument('[config]', 'config file (the same as -c <file>)')
    .description(
      "pretrain the agents' policies on the task's worked solutions (supervised cross-entropy) and save checkpoints",
    )
    .option('-c, --config <file>', 'config file (its task, agents and pretrain section)')
    .option('--agent <i>', 'pretrain only agent i (default: every agent, concurrently)')
    .option('--out <dir>', 'where to write the checkpoint (several agents: one folder per agent name inside it)')
    .option('--steps <n>', 'override pretrain.steps')
    .option('-q, --quiet', 'no progress output')
    .addHelpText(
      'after',
      '\nExamples:\n  corl pretrain -c configs/pretrain/slips/alpha.json --out models/my-alpha\n  corl pretrain -c configs/co-rl.json --agent 0 --out models/family-a --steps 200\n\nA config then starts from it with the policy option "checkpoint": "models/family-a".\n',
    )
    .action(async (config: string | undefined, flags: PretrainFlags) => {
      flags.config = pickConfig(config, flags.config, 'corl pretrain');
      const results = await runPretrain(flags);
      const split = results[0]?.split === 'validation' ? 'validation' : 'held-out';
      process.stdout.write(
        table([
          ['agent', 'family', 'steps', 'final loss', `${split} pass@1`, 'checkpoint'],
          ...results.map((r) => [r.name, r.family, String(r.steps), r.loss.toFixed(4), pct(r.accuracy), r.dir]),
        ]) + '\n',
      );
    });
}

/** `corl pretrain`'s names for its inputs, in its usage errors. */
const CLI_PRETRAIN: Usage = {
  code: 'CORL_ERR_CLI_USAGE',
  name: (input) => (input === 'config' ? '-c' : `--${input}`),
};

/** Pretrain as the flags say; resolves to one result per pretrained agent. */
export async function runPretrain(flags: PretrainFlags): Promise<PretrainResult[]> {
  if (!flags.config) throw noConfig('corl pretrain');
  if (!flags.out)
    throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --out <dir> for the checkpoint, got none', { where: '--out' });
  const steps = intFlag('--steps', flags.steps, 1);
  const agent = intFlag('--agent', flags.agent, 0);
  return runPretraining(
    {
      config: flags.config,
      out: flags.out,
      ...(steps !== undefined ? { steps } : {}),
      ...(agent !== undefined ? { agent } : {}),
      log: (line) => {
        if (!flags.quiet) process.stderr.write(`${line}\n`);
      },
    },
    CLI_PRETRAIN,
  );
}
