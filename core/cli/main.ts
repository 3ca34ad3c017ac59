import 'reflect-metadata';
import { Command, CommanderError } from 'commander';
import { CorlError } from '../errors';
import { CORL_VERSION } from '../version';
import { agreementCommand } from './commands/agreement';
import { answersCommand } from './commands/answers';
import { compareCommand } from './commands/compare';
import { evalCommand } from './commands/eval';
import { initCommand } from './commands/init';
import { listCommand } from './commands/list';
import { pretrainCommand } from './commands/pretrain';
import { rephraseCommand } from './commands/rephrase';
import { reportCommand } from './commands/report';
import { serveCommand } from './commands/serve';
import { trainCommand } from './commands/train';
import { validateCommand } from './commands/validate';
import { exitQuietlyOnBrokenPipe, reportError } from './output';

/** Every command of `corl`, in help order. Each file adds one command to the program. */
const COMMANDS: ((program: Command) => void)[] = [
  initCommand,
  trainCommand,
  pretrainCommand,
  evalCommand,
  agreementCommand,
  validateCommand,
  listCommand,
  compareCommand,
  reportCommand,
  answersCommand,
  serveCommand,
  rephraseCommand,
];

/** Build the `corl` program. */
export function buildProgram(): Command {
  const program = new Command('corl')
    .description('label-free RL rewards for reasoning models: Co-RL peer voting, TTRL, GRPO as plugins')
    .version(CORL_VERSION)
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(`CORL_ERR_CLI_USAGE: ${str.replace(/^error: /, '')}`) });
  for (const add of COMMANDS) add(program);
  for (const c of program.commands)
    c.exitOverride().configureOutput({
      outputError: (str, write) => write(`CORL_ERR_CLI_USAGE: ${str.replace(/^error: /, '')}`),
    });
  return program;
}

/** Run the CLI; resolves to the exit code. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  exitQuietlyOnBrokenPipe();
  const program = buildProgram();
  try {
    await program.parseAsync(argv as string[]);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // help and version exit with 0; usage errors were already printed with their code
      return e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
    }
    return e instanceof CorlError && e.code === 'CORL_ERR_CLI_USAGE' ? (reportError(e), 2) : reportError(e);
  }
}

if (require.main === module) {
  main().then((code) => {
    process.exitCode = code;
  });
}
