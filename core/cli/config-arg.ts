// One way to name a config on every command: as the first argument (`corl train co-rl.json`) or
// with -c (`corl train -c co-rl.json`); both forms work everywhere, and two different files are
// refused with the form to use.
import type { Command } from 'commander';
import { CorlError } from '../errors';

/** Add `[config]` as an optional argument beside the command's `-c, --config <file>`. */
export function configArgument(command: Command, description = 'config file (the same as -c <file>)'): Command {
  return command.argument('[config]', description);
}

/**
 * The config a command was given: the argument or `-c`, which must agree when both are present.
 * `usage` is the command's name for the hint (e.g. `corl train`).
 */
export function pickConfig(
  positional: string | undefined,
  flag: string | undefined,
  usage: string,
): string | undefined {
  if (positional !== undefined && flag !== undefined && positional !== flag)
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected one config, got two: "${positional}" (argument) and "${flag}" (-c)`,
      { where: '-c', hint: `name it once: \`${usage} <config>\` or \`${usage} -c <config>\`` },
    );
  return flag ?? positional;
}

/** The error of a command run without a config: both forms shown. */
export function noConfig(usage: string, alternative = ''): CorlError {
  return new CorlError(
    'CORL_ERR_CLI_USAGE',
    `expected a config (\`${usage} <config>\` or \`${usage} -c <config>\`)${alternative}, got none`,
    { where: '-c' },
  );
}
