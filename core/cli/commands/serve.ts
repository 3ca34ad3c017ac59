import type { Command } from 'commander';
import * as path from 'node:path';
import { CorlError } from '../../errors';
import { RewardServer } from '../../serve/server';
import { loadServeConfig } from '../../serve/setup';
import { outputFolderProblem, readUserText } from '../../util/files';
import { intFlag } from '../output';
import { noConfig, pickConfig } from '../config-arg';

interface ServeFlags {
  config?: string;
  host?: string;
  port?: string;
  journal?: string;
  tokenFile?: string;
  tokensFile?: string;
  allowNoToken?: boolean;
  tensorboard?: string;
}

/** A token file is a line of text: anything larger is not one. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/** Read the bearer token: --token-file, else CORL_SERVE_TOKEN, else none. */
function readToken(file: string | undefined): string | undefined {
  if (file) {
    let text: string;
    try {
      // Opened without blocking and only if regular: a FIFO or /dev/zero is refused, never waited on.
      text = readUserText(file, MAX_TOKEN_FILE_BYTES);
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        `expected --token-file to be a readable file, got ${(e as Error).message} (${file})`,
        { where: '--token-file' },
      );
    }
    const t = text.trim();
    if (!t)
      throw new CorlError('CORL_ERR_CLI_USAGE', `expected a token in ${file}, got an empty file`, {
        where: '--token-file',
      });
    return t;
  }
  const env = process.env.CORL_SERVE_TOKEN?.trim();
  return env ? env : undefined;
}

/** `corl serve`: reward plugins over HTTP for external trainers, and the cross-agent label exchange. */
export function serveCommand(program: Command): void {
  program
    .command('serve')
    .argument('[config]', 'config file (the same as -c <file>)')
    .description(
      "serve a config's reward to external trainers (OpenRLHF /get_reward, verl and TRL /v1/groups) and exchange pseudo-labels between separate trainer jobs",
    )
    .option('-c, --config <file>', 'config with agents, topology, reward (and an optional "serve" section)')
    .option('--host <address>', 'address to bind (default: serve.host, 127.0.0.1)')
    .option('--port <n>', 'port (default: serve.port, 8470; 0 = any free port)')
    .option('--journal <file>', 'label journal (default: serve.journal, or <name>.journal.jsonl beside the config)')
    .option(
      '--tokens-file <file>',
      'agent tokens, a JSON file {agent: token} (default: serve.tokens): each agent posts only with its own token, only as itself',
    )
    .option(
      '--token-file <file>',
      'the service token in this file (or set CORL_SERVE_TOKEN): with agent tokens it reads GET /metrics; without, every agent shares it',
    )
    .option('--allow-no-token', 'allow binding beyond loopback without a token (trusted networks only)')
    .option(
      '--tensorboard <dir>',
      "write per-agent TensorBoard event files of the label-free diagnostics to <dir>/<agent>/ (adds corl:tensorboard to the config's metrics sinks)",
    )
    .addHelpText(
      'after',
      '\nExamples:\n  corl serve -c configs/serve/co-rl.json\n  corl serve -c configs/serve/co-rl.json --tensorboard runs/tb   # then: tensorboard --logdir runs/tb\n  corl serve -c serve.json --tokens-file tokens.json --host 0.0.0.0 --port 9000\n\nRoutes: POST /get_reward, POST /v1/groups, GET /health, GET /metrics (docs/guide/serve.md).\n',
    )
    .action(async (config: string | undefined, flags: ServeFlags) => {
      flags.config = pickConfig(config, flags.config, 'corl serve');
      if (!flags.config) throw noConfig('corl serve');
      const port = intFlag('--port', flags.port, 0);
      if (port !== undefined && port > 65535)
        throw new CorlError('CORL_ERR_CLI_USAGE', `expected --port of at most 65535, got ${port}`, { where: '--port' });
      if (flags.tensorboard !== undefined && flags.tensorboard.trim() === '')
        throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --tensorboard to name a folder, got an empty string', {
          where: '--tensorboard',
        });
      // the flag's folder is checked here, so a bad one is named as the flag, not as the sink it becomes
      const tbProblem =
        flags.tensorboard === undefined ? undefined : outputFolderProblem(path.resolve(flags.tensorboard));
      if (tbProblem)
        throw new CorlError(
          'CORL_ERR_CLI_USAGE',
          `expected --tensorboard to name a folder for event files, got ${tbProblem} at ${path.resolve(flags.tensorboard!)}`,
          { where: '--tensorboard', hint: 'give a folder path (it is created), outside /proc, /sys and /dev' },
        );
      const tensorboard =
        flags.tensorboard === undefined
          ? []
          : [{ use: 'corl:tensorboard', options: { dir: path.resolve(flags.tensorboard), runFolders: false } }];
      const served = await loadServeConfig(flags.config, { appendMetrics: tensorboard });
      const server = await RewardServer.start(served, {
        host: flags.host,
        port,
        journal: flags.journal,
        token: readToken(flags.tokenFile),
        tokensFile: flags.tokensFile,
        allowNoToken: flags.allowNoToken,
        log: (line) => process.stderr.write(`${line}\n`),
      });
      const rt = server.runtime;
      if (flags.tensorboard !== undefined)
        process.stderr.write(
          `tensorboard: per-agent event files under ${path.resolve(flags.tensorboard)} (tensorboard --logdir ${path.resolve(flags.tensorboard)})\n`,
        );
      process.stdout.write(
        `corl serve: listening on ${server.url} (agents ${rt.agents.join(', ')}; reward ${rt.config.reward.use}; topology ${rt.config.topology.use}${rt.pointwise ? '; pointwise' : ''})\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = (signal: string): void => {
          process.stderr.write(`corl serve: ${signal}, stopping (waiting requests get 503; the journal is flushed)\n`);
          process.off('SIGINT', onInt);
          process.off('SIGTERM', onTerm);
          server.close().then(resolve, (e) => {
            process.stderr.write(`${(e as Error).message}\n`);
            resolve();
          });
        };
        const onInt = (): void => stop('SIGINT');
        const onTerm = (): void => stop('SIGTERM');
        process.on('SIGINT', onInt);
        process.on('SIGTERM', onTerm);
      });
    });
}
