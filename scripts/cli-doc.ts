// docs/reference/cli.md, generated from the commander programs themselves: `corl` with every
// command, and `create-corl-plugin`. What `--help` prints is what the page says.
import type { Command } from 'commander';
import { buildProgram } from '../core/cli/main';
import { buildScaffoldProgram } from '../core/scaffold/cli';

const WIDTH = 100;

/** The full help of a command (including text added before and after it), at a fixed width. */
export function helpText(cmd: Command): string {
  let text = '';
  cmd.configureHelp({ helpWidth: WIDTH });
  cmd.configureOutput({
    writeOut: (s) => {
      text += s;
    },
    writeErr: (s) => {
      text += s;
    },
    getOutHelpWidth: () => WIDTH,
    getErrHelpWidth: () => WIDTH,
  });
  cmd.outputHelp();
  return text.replace(/[ \t]+$/gm, '').trimEnd();
}

/** The whole page. */
export function cliReference(): string {
  const corl = buildProgram();
  const out = [
    '# Command line',
    '',
    '<!-- Generated from the commander programs (core/cli, core/scaffold/cli.ts) by `npm run gen`; do not edit by hand. -->',
    '',
    'Two binaries ship with corl: `corl` (train, validate, list, compare, ...) and `create-corl-plugin`',
    '(generate a plugin package). Exit status: 0 on success, 1 on a coded error (`CORL_ERR_*`, see',
    '[errors.md](errors.md)), 2 on a usage error, 70 on an internal error, 141 when the reader of its output goes away (`corl train | head`: it ends quietly, as a Unix tool killed by SIGPIPE does; a training run cut this way resumes with `--resume`).',
    '',
    '## corl',
    '',
    '```text',
    helpText(corl),
    '```',
    '',
  ];
  const walk = (cmd: Command, prefix: string): void => {
    for (const c of cmd.commands) {
      out.push(`### ${prefix} ${c.name()}`, '', '```text', helpText(c), '```', '');
      walk(c, `${prefix} ${c.name()}`);
    }
  };
  walk(corl, 'corl');
  out.push(
    '## create-corl-plugin',
    '',
    'Also reachable as `npx create-corl-plugin` and `npm exec --package=corl -- create-corl-plugin` where corl',
    'is installed, and as `npm init corl-plugin` once the `create-corl-plugin` package is installed (or',
    'published); see [writing a reward plugin](../guide/writing-a-reward-plugin.md).',
    '',
    '```text',
    helpText(buildScaffoldProgram({ out: () => undefined })),
    '```',
    '',
  );
  return out.join('\n');
}
