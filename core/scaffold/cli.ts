import * as path from 'node:path';
import * as readline from 'node:readline/promises';
import { Command, CommanderError } from 'commander';
import { CorlError, isCorlError } from '../errors';
import { reportError } from '../cli/output';
import { CORL_VERSION } from '../version';
import {
  checkKind,
  checkPackageName,
  checkPluginName,
  packageNameFor,
  pluginNameFor,
  TEMPLATE_KINDS,
  type TemplateKind,
} from './names';
import { parseCorlChoice, scaffold, type ScaffoldResult, type Toolchain } from './scaffold';

/** Flags of `create-corl-plugin`; each prompt has one. */
export interface ScaffoldFlags {
  kind?: string;
  name?: string;
  package?: string;
  description?: string;
  corl?: string;
  toolchain?: string;
  force?: boolean;
  yes?: boolean;
}

/** Asks one question; resolves to the answer (empty for the default). */
export type Ask = (question: string) => Promise<string>;

/** Where the CLI reads and writes; tests pass their own. */
export interface ScaffoldIO {
  readonly out: (s: string) => void;
  /** Present only on a terminal: without it nothing is asked. */
  readonly ask?: Ask;
}

/** Ask until `check` accepts the answer (or the default, on an empty answer). */
async function prompt<T>(
  ask: Ask,
  out: (s: string) => void,
  question: string,
  fallback: string | undefined,
  check: (v: string) => T,
): Promise<T> {
  for (;;) {
    const answer = (await ask(`${question}${fallback ? ` (${fallback})` : ''}: `)).trim() || fallback || '';
    try {
      return check(answer);
    } catch (e) {
      if (!isCorlError(e)) throw e;
      out(`  ${e.detail}\n`);
    }
  }
}

/** Resolve every input from flags, then prompts (on a terminal), then defaults; invalid flags are coded errors. */
export async function resolveInputs(
  dirArg: string | undefined,
  flags: ScaffoldFlags,
  io: ScaffoldIO,
): Promise<{ dir: string; kind: TemplateKind; name: string; packageName: string; description?: string }> {
  const ask = flags.yes ? undefined : io.ask;
  let dir = dirArg;
  if (!dir) {
    if (!ask)
      throw new CorlError('CORL_ERR_CLI_USAGE', 'expected the folder to create as the first argument, got none', {
        where: '<dir>',
        hint: 'e.g. `create-corl-plugin my-reward --kind reward`',
      });
    dir = await prompt(ask, io.out, 'folder to create', 'my-corl-plugin', (v) => v);
  }
  let kind: TemplateKind;
  if (flags.kind !== undefined || !ask) kind = checkKind(flags.kind);
  else kind = await prompt(ask, io.out, `plugin kind, one of ${TEMPLATE_KINDS.join(', ')}`, 'reward', checkKind);
  let packageName: string;
  const suggested = packageNameFor(dir);
  if (flags.package !== undefined) packageName = checkPackageName(flags.package);
  else if (ask) packageName = await prompt(ask, io.out, 'npm package name', suggested, checkPackageName);
  else if (suggested) packageName = suggested;
  else
    throw new CorlError(
      'CORL_ERR_SCAFFOLD_NAME',
      `expected a folder name usable as an npm package name, got ${JSON.stringify(path.basename(path.resolve(dir)))}`,
      { where: '--package', hint: 'pass --package <name>' },
    );
  let name: string;
  if (flags.name !== undefined) name = checkPluginName(flags.name);
  else if (ask)
    name = await prompt(ask, io.out, 'plugin name (scope:name)', pluginNameFor(packageName), checkPluginName);
  else name = checkPluginName(pluginNameFor(packageName));
  let description = flags.description;
  if (description === undefined && ask)
    description = (await ask("one-line description (keep the template's): ")).trim() || undefined;
  return { dir, kind, name, packageName, description };
}

/** Human-readable summary and next commands. */
export function summary(r: ScaffoldResult, kind: string, name: string): string {
  const lines = [
    `created ${r.dir}: a ${kind} plugin "${name}" (${r.files.length} files)`,
    `corl comes from ${r.corlSpec}`,
    ...(r.npmrc
      ? [
          '.npmrc tells onnxruntime-node not to download CUDA libraries (npm >= 11.19 reads "allowScripts" in package.json instead)',
        ]
      : []),
    r.toolchain === 'link'
      ? 'build and test tools are linked to the ones this corl was built with (npm install downloads nothing)'
      : 'build and test tools come from the npm registry',
    ...(r.unlinked.length ? [`not found next to corl, so fetched from the registry: ${r.unlinked.join(', ')}`] : []),
    '',
    'next:',
    ...r.next.map((c) => `  ${c}`),
    '',
    'npm test builds the plugin and runs its tests (the corl/testing contract suite included);',
    'npm run train trains a small cohort with it (corl.config.json).',
    '',
  ];
  return lines.join('\n');
}

/** Build the `create-corl-plugin` program. `io` decides whether it may prompt. */
export function buildScaffoldProgram(io: ScaffoldIO): Command {
  const program = new Command('create-corl-plugin')
    .description(
      'generate a corl plugin package from templates/<kind>/: source, options schema, manifest, register(plugins), mocha + chai tests, README and a training config',
    )
    .version(CORL_VERSION)
    .argument('[dir]', 'folder to create (new or empty)')
    .option('-k, --kind <kind>', `plugin kind: ${TEMPLATE_KINDS.join(', ')}`)
    .option('-n, --name <scope:name>', 'plugin name (default: local:<package name>)')
    .option('-p, --package <name>', 'npm package name (default: the folder name)')
    .option('-d, --description <text>', 'one-line description for the manifest and package.json')
    .option(
      '--corl <spec>',
      "how the package depends on corl: file (default: file:<the tarball this corl was installed from>, else file:<this corl's folder>; offline), registry (^<this version> from npm), tarball:<path> (file:<that tarball>), or any npm spec",
    )
    .option(
      '--toolchain <mode>',
      'link: typescript, mocha, chai and @types are file: links to the copies this corl uses (offline, same versions); registry: semver ranges from npm (default: link when corl is a checkout with its dependencies)',
    )
    .option('-f, --force', 'write into a non-empty folder (files with the same names are replaced)')
    .option('-y, --yes', 'never prompt; take defaults for what is not given')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s),
      outputError: (str, write) => write(`CORL_ERR_CLI_USAGE: ${str.replace(/^error: /, '')}`),
    })
    .addHelpText(
      'after',
      [
        '',
        'Prompts appear only on a terminal, for what the flags leave out; elsewhere defaults apply and a',
        'missing --kind is an error.',
        '',
        'Examples:',
        '  npx create-corl-plugin my-reward --kind reward --name lab:length-penalty',
        '  npm exec --package=corl -- create-corl-plugin my-task --kind task',
        '  npm init corl-plugin my-topology -- --kind topology   (with the create-corl-plugin package installed)',
        '',
      ].join('\n'),
    )
    .action(async (dir: string | undefined, flags: ScaffoldFlags) => {
      if (flags.toolchain !== undefined && flags.toolchain !== 'link' && flags.toolchain !== 'registry') {
        throw new CorlError(
          'CORL_ERR_CLI_USAGE',
          `expected --toolchain link or registry, got ${JSON.stringify(flags.toolchain)}`,
          { where: '--toolchain' },
        );
      }
      const corl = flags.corl === undefined ? undefined : parseCorlChoice(flags.corl);
      const inputs = await resolveInputs(dir, flags, io);
      const result = scaffold({
        ...inputs,
        force: flags.force,
        corl,
        toolchain: flags.toolchain as Toolchain | undefined,
      });
      io.out(summary(result, inputs.kind, inputs.name));
    });
  return program;
}

/** Run the CLI; resolves to the exit code (0 ok, 1 coded error, 2 usage). */
export async function main(argv: readonly string[] = process.argv, io?: ScaffoldIO): Promise<number> {
  let rl: readline.Interface | undefined;
  const terminal = process.stdin.isTTY && process.stdout.isTTY;
  const ioUsed: ScaffoldIO = io ?? {
    out: (s) => process.stdout.write(s),
    ...(terminal
      ? {
          ask: (q: string) =>
            (rl ??= readline.createInterface({ input: process.stdin, output: process.stdout })).question(q),
        }
      : {}),
  };
  try {
    await buildScaffoldProgram(ioUsed).parseAsync(argv as string[]);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError)
      return e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
    const code = reportError(e);
    return isCorlError(e, 'CORL_ERR_CLI_USAGE') ? 2 : code;
  } finally {
    rl?.close();
  }
}

if (require.main === module) {
  main().then((code) => {
    process.exitCode = code;
  });
}
