import type { Command } from 'commander';
import { loadConfig } from '../../config/load';
import { createRunPlugins } from '../../config/run-plugins';
import { loadServeConfig } from '../../serve/setup';
import { readUserText } from '../../util/files';
import { parseJson } from '../../util/json';
import { noConfig, pickConfig } from '../config-arg';

/** Whether a file is a `corl serve` config: its `$schema` names the serve schema, or it has a `serve` section and no task. */
function isServeConfig(file: string): boolean {
  let v: unknown;
  try {
    v = parseJson(readUserText(file));
  } catch {
    return false;
  } // loadConfig reports unreadable or bad JSON
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  if (typeof o.$schema === 'string' && /corl-serve\.schema\.json$/.test(o.$schema)) return true;
  return 'serve' in o && !('task' in o);
}

/** `corl validate`: check a config without running it. */
export function validateCommand(program: Command): void {
  program
    .command('validate')
    .description(
      'validate a config: schema, plugin names and options, label-free and topology checks; all problems at once',
    )
    .argument('[config]', 'config file (the same as -c <file>)')
    .option('-c, --config <file>', 'config file')
    .option('--print', 'print the resolved config (defaults applied)')
    .option(
      '--schema-only',
      'check the schema and plugin options only; skip creating the plugins (opening task files, checkpoints, patterns)',
    )
    .action(async (given: string | undefined, flags: { config?: string; print?: boolean; schemaOnly?: boolean }) => {
      const file = pickConfig(given, flags.config, 'corl validate');
      if (!file) throw noConfig('corl validate');
      if (isServeConfig(file)) {
        const served = await loadServeConfig(file);
        const c = served.config;
        if (flags.print) process.stdout.write(JSON.stringify(c, null, 2) + '\n');
        process.stdout.write(
          `ok: ${file}: serve config (corl serve -c ${file}): ${c.agents.length} agent(s), reward ${c.reward.use}, topology ${c.topology.use}; ${served.loaded.readsGroundTruth ? 'supervised (requests carry references)' : 'label-free'}\n`,
        );
        return;
      }
      const loaded = await loadConfig(file);
      const c = loaded.config;
      if (flags.print) process.stdout.write(JSON.stringify(c, null, 2) + '\n');
      let created = '';
      if (!flags.schemaOnly) {
        // The same creation `corl train` does before its first step: task data loaded, checkpoints
        // opened, architectures and patterns checked. A config that validates, trains.
        const plugins = await createRunPlugins(loaded, 'training');
        try {
          const data = plugins.data!;
          created = `; plugins created (${data.train.length} train / ${data.heldOut.length} held-out problems)`;
        } finally {
          await plugins.close();
        }
      }
      process.stdout.write(
        `ok: ${file}: ${c.agents.length} agent(s), reward ${c.reward.use}, topology ${c.topology.use}, ${c.trainer.steps} step(s); ${loaded.readsGroundTruth ? 'supervised (reads ground truth)' : loaded.trainedOnLabels ? 'supervised (a reward source was trained on labels; it reads none)' : 'label-free'}${created}\n`,
      );
    });
}
