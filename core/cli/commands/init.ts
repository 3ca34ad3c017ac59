import type { Command } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { CorlError } from '../../errors';
import { callerNpmVersion, corlDependency, corlInstallAt, needsNpmrc, NPMRC, parseCorlChoice } from '../../util/npm';
import { corlRoot, PACKAGE_PREFIX } from '../../util/paths';
import { CORL_VERSION } from '../../version';
import { outputFolderProblem, readUserText } from '../../util/files';
import { errorLine } from '../../errors';
import { kubernetesFiles, slurmFiles, type JobFile } from '../../compare/jobs';
import { MAX_SEEDS } from '../../compare/plan';
import { intFlag } from '../output';

/** The shipped configs `corl init` copies: the default comparison (base, TTRL, Co-RL). */
export const INIT_CONFIGS = ['base.json', 'ttrl.json', 'co-rl.json'] as const;

/** What {@link initProject} wrote. */
export interface InitResult {
  readonly dir: string;
  /** Files written or changed, relative to `dir`, sorted. */
  readonly files: readonly string[];
  /** The dependency spec of corl in package.json (kept when it was already there). */
  readonly corlSpec: string;
  /** Whether `.npmrc` was written (an npm older than allowScripts). */
  readonly npmrc: boolean;
}

/** Inputs of {@link initProject}. */
export interface InitOptions {
  readonly dir: string;
  /**
   * The corl dependency, a `--corl` value as create-corl-plugin reads it (`file`, `registry`,
   * `tarball:<path>` or a tarball's path, an npm spec); default: where this corl came from. Decided by
   * `corlDependency` (`core/util/npm.ts`), which the scaffolder uses too.
   */
  readonly corl?: string;
  /** The npm that will install the project (default: the one running this, from its user agent). */
  readonly npmVersion?: string;
  /** Root of the corl whose configs are copied (default: the running one). */
  readonly root?: string;
  /** Write slurm/: the comparison's shards as an sbatch array job, its render step as a dependent job. */
  readonly slurm?: boolean;
  /** Write kubernetes/: the shards as an Indexed Job, the render step as a Job after it. */
  readonly kubernetes?: boolean;
  /** Shards of the cluster sweep (default 2). */
  readonly shards?: number;
  /** Seeds per config of the cluster sweep (default 4). */
  readonly seeds?: number;
}

/** The comparison folder of the cluster sweep `corl init --slurm` / `--kubernetes` writes. */
export const SWEEP_OUT = 'runs/sweep';

/** The job files the options ask for (none without --slurm or --kubernetes), checked. */
function jobFilesOf(o: InitOptions): JobFile[] {
  if (!o.slurm && !o.kubernetes) {
    if (o.shards !== undefined || o.seeds !== undefined)
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        'expected --shards and --seeds only with --slurm or --kubernetes, got them alone',
        {
          where: o.shards !== undefined ? '--shards' : '--seeds',
          hint: 'add --slurm, --kubernetes or both; nothing was written',
        },
      );
    return [];
  }
  const jobs = {
    configs: INIT_CONFIGS.map((c) => `configs/${c}`),
    seeds: o.seeds ?? 4,
    shards: o.shards ?? 2,
    out: SWEEP_OUT,
    name: 'corl-sweep',
  };
  return [...(o.slurm ? slurmFiles(jobs) : []), ...(o.kubernetes ? kubernetesFiles(jobs) : [])];
}

/**
 * A shipped config made to work where it is copied: every path that names something inside corl
 * (the checkpoints under models/) becomes a package reference, `$schema` points into the installed
 * package, and TensorBoard logs are on.
 */
export function portableConfig(text: string, from: string, root: string): Record<string, unknown> {
  const config = parseJsonc(text) as Record<string, unknown>;
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, rewrite(x)]));
    if (typeof v !== 'string' || !v.startsWith('.')) return v;
    const abs = path.resolve(from, v);
    const inside = path.relative(root, abs);
    if (inside.startsWith('..') || path.isAbsolute(inside) || !fs.existsSync(abs)) return v;
    return `${PACKAGE_PREFIX}corl/${inside.split(path.sep).join('/')}`;
  };
  const out = rewrite(config) as Record<string, unknown>;
  out.$schema = '../node_modules/corl/schema/corl.schema.json';
  if (out.metrics === undefined) out.metrics = ['corl:tensorboard'];
  return out;
}

const README = (spec: string): string => `# A corl lab

Made by \`corl init\`: the default comparison of corl's embedded benchmark (the untrained base
models, TTRL and Co-RL), with configs that find the models shipped in the installed corl package
(\`"checkpoint": "package:corl/models/slips/alpha"\`), so they train from this folder and from any
copy of it.

\`\`\`sh
npm install                               # corl (${spec}), without onnxruntime-node's CUDA download
npx corl validate configs/co-rl.json      # every check a run makes before its first step
npx corl train configs/co-rl.json         # one Co-RL run: runs/co-rl-<date>-<time>/ (report.html, metrics.jsonl)
npm run compare                           # base, TTRL and Co-RL on one seed, ending with a verdict line
\`\`\`

Every run also writes TensorBoard event files into \`tensorboard/\` of its run folder
(\`"metrics": ["corl:tensorboard"]\`): \`tensorboard --logdir runs\`, or \`wandb sync --sync-tensorboard
runs/<run>/tensorboard\`. Paths in a config are relative to the config file; \`package:corl/...\`
names a file of the installed corl. Write your own reward with \`npx create-corl-plugin my-reward --kind reward\`;
the guides are in \`node_modules/corl/docs/guide/\`.
`;

/** The README's part on the cluster sweep, when its job files were written. */
function clusterReadme(o: InitOptions): string {
  if (!o.slurm && !o.kubernetes) return '';
  const lines = [
    '',
    '## The sweep on a cluster',
    '',
    `The three configs over ${o.seeds ?? 4} seeds each, in ${o.shards ?? 2} shards, into \`${SWEEP_OUT}\` (the render step`,
    'writes its `report.html` once every shard is done):',
    '',
    '```sh',
    ...(o.slurm
      ? ['bash slurm/submit.sh        # an sbatch array job, then the render job (--dependency=afterok)']
      : []),
    ...(o.kubernetes
      ? ['bash kubernetes/submit.sh   # an Indexed Job on the volume corl-sweep-lab, then the render Job']
      : []),
    '```',
    '',
    'How they work, and what a requeue or a replaced pod does: `node_modules/corl/docs/guide/clusters.md`.',
    '',
  ];
  return lines.join('\n');
}

/** Write package.json (merged when present), .npmrc when needed, configs/, README.md and .gitignore into `dir`. */
export function initProject(o: InitOptions): InitResult {
  const dir = path.resolve(o.dir);
  const root = o.root ?? corlRoot();
  // Everything is checked before anything is written: a folder that cannot be one, a package.json that
  // is not a package's, a file in the way.
  const problem = outputFolderProblem(dir);
  if (problem !== undefined)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected a folder for the project, got ${problem} at ${dir}`, {
      where: dir,
      hint: 'give corl init a folder of your own (it is created if missing); nothing was written',
    });
  const existingPkg = readPackageJson(path.join(dir, 'package.json'));
  const configsProblem = outputFolderProblem(path.join(dir, 'configs'));
  if (configsProblem !== undefined)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected configs to be a folder, got ${configsProblem}`, {
      where: path.join(dir, 'configs'),
      hint: 'move it away, or run corl init in a new folder; nothing was written',
    });
  const jobFiles = jobFilesOf(o);
  for (const sub of new Set(jobFiles.map((f) => path.dirname(f.path)))) {
    const bad = outputFolderProblem(path.join(dir, sub));
    if (bad !== undefined)
      throw new CorlError('CORL_ERR_CLI_USAGE', `expected ${sub} to be a folder, got ${bad}`, {
        where: path.join(dir, sub),
        hint: 'move it away, or run corl init in a new folder; nothing was written',
      });
  }
  const targets = [...INIT_CONFIGS.map((c) => path.join('configs', c)), 'README.md', ...jobFiles.map((f) => f.path)];
  const taken = targets.filter((t) => fs.existsSync(path.join(dir, t)));
  if (taken.length)
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected a folder without ${taken.join(', ')}, got ${dir} with ${taken.length === 1 ? 'it' : 'them'}`,
      { where: dir, hint: 'run corl init in a new folder, or move those files away; nothing was written' },
    );
  // A corl the package.json already depends on is kept; otherwise the one rule create-corl-plugin uses too.
  const spec =
    (existingPkg?.dependencies as Record<string, string> | undefined)?.corl ??
    corlDependency(corlInstallAt(root, CORL_VERSION), o.corl === undefined ? undefined : parseCorlChoice(o.corl));
  const files = undoOnFailure(dir, [...targets, 'package.json', '.npmrc', '.gitignore'], () =>
    writeProject(o, dir, root, { existingPkg, spec, jobFiles }),
  );
  return { dir, files: files.sort(), corlSpec: spec, npmrc: files.includes('.npmrc') };
}

/** Write the project's files (everything was checked before); returns the files written. */
function writeProject(
  o: InitOptions,
  dir: string,
  root: string,
  what: { existingPkg: Record<string, unknown> | undefined; spec: string; jobFiles: readonly JobFile[] },
): string[] {
  const { existingPkg, spec, jobFiles } = what;
  fs.mkdirSync(path.join(dir, 'configs'), { recursive: true });
  const files: string[] = [];
  for (const name of INIT_CONFIGS) {
    const from = path.join(root, 'configs', name);
    const config = portableConfig(fs.readFileSync(from, 'utf8'), path.dirname(from), root);
    fs.writeFileSync(path.join(dir, 'configs', name), JSON.stringify(config, null, 2) + '\n');
    files.push(`configs/${name}`);
  }
  const pkgFile = path.join(dir, 'package.json');
  const pkg = existingPkg ?? {
    name:
      path
        .basename(dir)
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, '-') || 'corl-lab',
    version: '0.1.0',
    private: true,
  };
  pkg.dependencies = { ...(pkg.dependencies as Record<string, string> | undefined), corl: spec };
  pkg.scripts = {
    train: 'corl train configs/co-rl.json',
    compare: 'corl compare configs/base.json configs/ttrl.json configs/co-rl.json --seeds 1 --verdict',
    ...(pkg.scripts as Record<string, string> | undefined),
  };
  pkg.allowScripts = { ...(pkg.allowScripts as Record<string, boolean> | undefined), 'onnxruntime-node': false };
  fs.writeFileSync(pkgFile, JSON.stringify(pkg, null, 2) + '\n');
  files.push('package.json');
  const npmrc = needsNpmrc('npmVersion' in o ? o.npmVersion : callerNpmVersion());
  if (npmrc && !fs.existsSync(path.join(dir, '.npmrc'))) {
    fs.writeFileSync(path.join(dir, '.npmrc'), NPMRC);
    files.push('.npmrc');
  }
  for (const f of jobFiles) {
    fs.mkdirSync(path.join(dir, path.dirname(f.path)), { recursive: true });
    fs.writeFileSync(path.join(dir, f.path), f.text, { mode: f.executable ? 0o755 : 0o644 });
    files.push(f.path);
  }
  fs.writeFileSync(path.join(dir, 'README.md'), README(spec) + clusterReadme(o));
  files.push('README.md');
  if (!fs.existsSync(path.join(dir, '.gitignore'))) {
    fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\nruns/\n');
    files.push('.gitignore');
  }
  return files;
}

/**
 * Run `write`; when it fails, leave nothing of it behind: the folders it created (from the first
 * missing ancestor of `dir` down) are removed, and in a folder that was there, the `targets` it
 * created are removed and the ones it replaced (package.json) get their old bytes back.
 */
function undoOnFailure<T>(dir: string, targets: readonly string[], write: () => T): T {
  let first: string | undefined;
  for (let up = dir; !fs.existsSync(up) && path.dirname(up) !== up; up = path.dirname(up)) first = up;
  const before = new Map<string, Buffer | undefined>();
  const folders = new Set<string>();
  if (first === undefined)
    for (const t of targets) {
      const file = path.join(dir, t);
      before.set(file, fs.existsSync(file) ? fs.readFileSync(file) : undefined);
      for (let d = path.dirname(file); d !== dir && !fs.existsSync(d); d = path.dirname(d)) folders.add(d);
    }
  try {
    return write();
  } catch (e) {
    if (first !== undefined) fs.rmSync(first, { recursive: true, force: true });
    for (const [file, bytes] of before)
      if (bytes === undefined) fs.rmSync(file, { force: true });
      else fs.writeFileSync(file, bytes);
    for (const d of [...folders].sort((a, b) => b.length - a.length))
      if (fs.existsSync(d) && fs.readdirSync(d).length === 0) fs.rmdirSync(d);
    throw e;
  }
}

interface InitFlags {
  corl?: string;
  slurm?: boolean;
  kubernetes?: boolean;
  shards?: string;
  seeds?: string;
}

/** `corl init`: a project folder of one's own whose configs train where they are. */
export function initCommand(program: Command): void {
  program
    .command('init')
    .description(
      "start a project of your own: package.json (installs offline), configs that name corl's shipped models by package reference, a README",
    )
    .argument('[dir]', 'folder to set up (default: the current one)', '.')
    .option(
      '--corl <spec>',
      'the corl dependency: file (this corl), registry (^version), tarball:<path> or a .tgz path, or an npm spec (default: where this corl came from)',
    )
    .option(
      '--slurm',
      "write slurm/: the comparison's shards as an sbatch array job (corl compare --shard auto) and its render step as a job after them (--dependency=afterok); submit with bash slurm/submit.sh",
    )
    .option(
      '--kubernetes',
      "write kubernetes/: the comparison's shards as an Indexed Job (--shard auto/<n>) and its render step as a Job after it; apply with bash kubernetes/submit.sh",
    )
    .option('--shards <n>', 'with --slurm or --kubernetes: shards of the sweep (default 2)')
    .option('--seeds <n>', 'with --slurm or --kubernetes: seeds per config of the sweep (default 4)')
    .addHelpText(
      'after',
      '\nExamples:\n  mkdir my-lab && cd my-lab\n  ONNXRUNTIME_NODE_INSTALL=skip npx --yes --package=../corl-0.1.0.tgz corl init\n  npm install && npx corl train configs/co-rl.json\n  npx corl init my-sweep --slurm --kubernetes --shards 4 --seeds 8   # then: bash slurm/submit.sh\n',
    )
    .action((dir: string, flags: InitFlags) => {
      let r: InitResult;
      const shards = intFlag('--shards', flags.shards, 1);
      const seeds = intFlag('--seeds', flags.seeds, 1, MAX_SEEDS);
      try {
        r = initProject({
          dir,
          ...(flags.corl !== undefined ? { corl: flags.corl } : {}),
          ...(flags.slurm ? { slurm: true } : {}),
          ...(flags.kubernetes ? { kubernetes: true } : {}),
          ...(shards !== undefined ? { shards } : {}),
          ...(seeds !== undefined ? { seeds } : {}),
        });
      } catch (e) {
        if (e instanceof CorlError) throw e;
        throw new CorlError('CORL_ERR_IO', `expected to write the project into ${dir}, got ${errorLine(e)}`, {
          where: dir,
        });
      }
      const shown = path.relative(process.cwd(), r.dir) || '.';
      process.stdout.write(
        `wrote ${r.files.join(', ')} in ${shown} (corl: ${r.corlSpec})\nnext:\n${shown === '.' ? '' : `  cd ${shown}\n`}  npm install\n  npx corl train configs/co-rl.json\n${flags.slurm ? '  bash slurm/submit.sh          # the sweep on Slurm\n' : ''}${flags.kubernetes ? '  bash kubernetes/submit.sh     # the sweep on Kubernetes\n' : ''}`,
      );
    });
}

/** The package.json already in the folder (undefined without one), checked: an object whose merged fields are objects of strings. */
function readPackageJson(file: string): Record<string, unknown> | undefined {
  if (!fs.existsSync(file)) return undefined;
  const refuse = (got: string, where: string = file): never => {
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected package.json to be a package's JSON object, got ${got}`, {
      where,
      hint: 'fix package.json (npm reads it too), or run corl init in a new folder; nothing was written',
    });
  };
  let value: unknown;
  try {
    value = JSON.parse(readUserText(file, 16 * 1024 * 1024));
  } catch (e) {
    return refuse(e instanceof SyntaxError ? `invalid JSON (${e.message})` : errorLine(e));
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return refuse(value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);
  const pkg = value as Record<string, unknown>;
  for (const field of ['dependencies', 'scripts', 'allowScripts'] as const) {
    const v = pkg[field];
    if (v === undefined) continue;
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      refuse(
        `a "${field}" that is ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`,
        `${file} ${field}`,
      );
    for (const [k, x] of Object.entries(v as Record<string, unknown>))
      if (
        typeof x !== (field === 'allowScripts' ? 'boolean' : 'string') &&
        !(field === 'allowScripts' && typeof x === 'string')
      )
        refuse(`${field}.${k} = ${JSON.stringify(x)?.slice(0, 40)}`, `${file} ${field}.${k}`);
  }
  return pkg;
}
