import type { Command } from 'commander';
import { loadConfig } from '../../config/load';

/** `corl validate`: check a config without running it. */
export function validateCommand(program: Command): void {
  program
    .command('validate')
    .description('validate a config: schema, plugin names and options, label-free and topology checks; all problems at once')
    .argument('<config>', 'config file')
    .option('--print', 'print the resolved config (defaults applied)')
    .action(async (file: string, flags: { print?: boolean }) => {
      const loaded = await loadConfig(file);
      const c = loaded.config;
      if (flags.print) process.stdout.write(JSON.stringify(c, null, 2) + '\n');
      process.stdout.write(`ok: ${file}: ${c.agents.length} agent(s), reward ${c.reward.use}, topology ${c.topology.use}, ${c.trainer.steps} step(s); ${loaded.supervised ? 'supervised (uses ground truth)' : 'label-free'}\n`);
    });
}
