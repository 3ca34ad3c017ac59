import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { PluginContext } from '../../../core/contracts/plugin';
import type { RewardContext, RewardResult, RewardSource } from '../../../core/contracts/reward-source';
import type { WorkOptions } from '../../../core/contracts/work';
import { CorlError } from '../../../core/errors';
import { describeStat, kernelFileSystem } from '../../../core/util/files';
import { definePlugin } from '../../../core/registry/define';
import { batchOf, prepare, type CallOptions } from './calls';
import { HostGone, PythonHost, type HostOptions, type HostReady } from './process';

const IDENTIFIER = '^[A-Za-z_][A-Za-z0-9_]*$';

/** What the function is and what it receives: in the config for corl:python, fixed in code by definePythonReward (define.ts). */
export const FUNCTION_PROPERTIES = {
  module: {
    type: 'string',
    minLength: 1,
    description:
      'the Python file defining the function (e.g. "reward.py", relative to the config file), or a dotted module name the interpreter can import',
  },
  function: {
    type: 'string',
    pattern: IDENTIFIER,
    description: 'the function to call (default: reward_func for signature "trl", compute_score for "verl")',
  },
  signature: {
    enum: ['trl', 'verl'],
    default: 'trl',
    description:
      "trl: reward_func(prompts, completions, **kwargs) on a group (or a step) of completions, returning a float or None each, as TRL's GRPOTrainer calls it; verl: compute_score(data_source, solution_str, ground_truth, extra_info) per completion",
  },
  groundTruth: {
    type: 'boolean',
    default: false,
    description:
      "pass the reference answer (a supervised run): as the referenceColumn keyword (trl) or ground_truth (verl). false: label-free, the function never sees a reference, and verl-style ground_truth is the supervisors' plurality label",
  },
  referenceColumn: {
    type: 'string',
    pattern: IDENTIFIER,
    default: 'solution',
    description:
      'the keyword a TRL-style function gets the reference under with groundTruth (TRL\'s accuracy_reward reads "solution")',
  },
  format: {
    enum: ['standard', 'conversational'],
    default: 'standard',
    description:
      'TRL dataset format: standard passes prompts and completions as strings; conversational as [{"role": "user"|"assistant", "content": ...}] message lists',
  },
} as const;

/** How it runs: options of corl:python and of every reward made with definePythonReward (define.ts). */
const RUNTIME_PROPERTIES = {
  python: {
    type: 'string',
    minLength: 1,
    default: 'python3',
    description: 'the interpreter: a name on PATH or a path (relative to the config file), e.g. ".venv/bin/python"',
  },
  batch: {
    enum: ['group', 'step'],
    default: 'group',
    description:
      "trl: one call per group of K completions (what corl serve does too), or one call per agent and step with every group, as GRPOTrainer's batch; all calls of a step travel in one message either way",
  },
  labelRule: {
    enum: ['pool', 'teacher', 'majority'],
    default: 'pool',
    description: "how pseudo_label is voted from the supervisors' answers (as corl:vote's rule)",
  },
  labelThreshold: {
    type: 'number',
    minimum: 0,
    maximum: 1,
    default: 0,
    description: 'minimum vote share of pseudo_label; below it there is no label (None)',
  },
  timeoutSeconds: {
    type: 'number',
    exclusiveMinimum: 0,
    default: 300,
    description:
      'limit on importing the module and on answering one step (or one served group); past it the process is killed',
  },
  stderr: {
    enum: ['forward', 'discard'],
    default: 'forward',
    description:
      'the function\'s prints and tracebacks: forwarded to corl\'s stderr ("python| " before each line), or discarded (the last line still appears in errors)',
  },
} as const;

const PYTHON_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['module'],
  properties: { ...FUNCTION_PROPERTIES, ...RUNTIME_PROPERTIES },
  additionalProperties: false,
} as const satisfies JSONSchema;

export const RUNTIME_OPTIONS_SCHEMA = {
  type: 'object',
  properties: RUNTIME_PROPERTIES,
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
export type PythonOptions = FromSchema<typeof PYTHON_OPTIONS_SCHEMA>;

/** Names an option in errors: `corl:python options.module`. */
export type Where = (option: string) => string;

/** Resolve `module` and `python` against the config's folder, refusing a .py file that is not there. */
function locate(options: PythonOptions, baseDir: string, where: Where): { module: string; python: string } {
  const module = options.module.endsWith('.py') ? path.resolve(baseDir, options.module) : options.module;
  if (options.module.endsWith('.py') && !fs.existsSync(module)) {
    throw new CorlError(
      'CORL_ERR_PYTHON_IMPORT',
      `expected a Python file at ${module} ("${options.module}", relative to the config's folder), got none`,
      { where: where('module') },
    );
  }
  // The interpreter would block reading a FIFO, or read a device without end, until timeoutSeconds:
  // a module file (or a dotted name's file in the config's folder) must be a regular file.
  const files = options.module.endsWith('.py')
    ? [module]
    : [`${options.module.split('.').join('/')}.py`, `${options.module.split('.').join('/')}/__init__.py`].map((f) =>
        path.resolve(baseDir, f),
      );
  for (const file of files) {
    const problem = sourceProblem(file);
    if (problem)
      throw new CorlError(
        'CORL_ERR_PYTHON_IMPORT',
        `expected a Python file at ${file} ("${options.module}", relative to the config's folder), got ${problem}`,
        { where: where('module'), hint: 'point `module` at a .py file' },
      );
  }
  const python = /[\\/]/.test(options.python) ? path.resolve(baseDir, options.python) : options.python;
  return { module, python };
}

/** Why an existing path cannot be a module's source (a FIFO, a device, a kernel file), or undefined. */
function sourceProblem(file: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return undefined;
  }
  if (st.isDirectory()) return undefined; // a package folder named like a file: Python says what is wrong
  const kfs = kernelFileSystem(file);
  if (kfs) return `a file of the kernel's ${kfs} file system`;
  return st.isFile() ? undefined : describeStat(st);
}

/**
 * What a run should be told at start where corl:python changes what a label means without a word:
 * a label-free verl-style function gets the supervisors' plurality label as `ground_truth`; a
 * label-free function that never reads what it is handed of its supervisors makes the topology a
 * no-op, and `label/accuracy` then describes a label it does not use (its results carry
 * `python/label_unused` = 1, and the report marks that column).
 */
export function pythonNotices(
  name: string,
  options: Pick<PythonOptions, 'signature' | 'groundTruth'>,
  ready: Pick<HostReady, 'supervision'>,
): string[] {
  if (options.groundTruth) return [];
  const out: string[] = [];
  if (options.signature === 'verl')
    out.push(
      `corl:python notice: ${name} runs label-free (groundTruth: false): its ground_truth argument is the supervisors' plurality label (the pseudo-label, as extra_info.pseudo_label), never the reference; a problem whose supervisors give no label is not scored (reward 0). Set groundTruth: true for a supervised run.`,
    );
  if (ready.supervision === 'ignores')
    out.push(
      `corl:python notice: ${name} never reads what it is handed of its supervisors (${options.signature === 'verl' ? 'ground_truth, extra_info' : 'pseudo_label, matches_pseudo_label, supervisor_answer_keys, or a **kwargs'}): its rewards cannot depend on them, so every topology gives the same rewards (corl:ring those of corl:self), and label/accuracy measures corl's pseudo-label, which this function does not use (python/label_unused = 1; the report marks its label acc).`,
    );
  return out;
}

/** A reward source calling the Python function the options name (see corl:python). */
export async function createPythonReward(
  options: PythonOptions,
  ctx: PluginContext,
  where: Where,
): Promise<RewardSource> {
  const { module, python } = locate(options, ctx.baseDir, where);
  const fn = options.function ?? (options.signature === 'verl' ? 'compute_score' : 'reward_func');
  const calls: CallOptions = options;
  const hostOptions: HostOptions = {
    python,
    cwd: ctx.baseDir,
    timeoutMs: options.timeoutSeconds * 1000,
    where,
    name: `${path.basename(options.module)}:${fn}`,
    setup: {
      module,
      function: fn,
      signature: options.signature,
      format: options.format,
      // A parameter the function cannot do without and corl never passes here: refused at start.
      withheld: options.groundTruth || options.signature === 'verl' ? [] : [options.referenceColumn],
    },
    ...(options.stderr === 'forward'
      ? { forward: (line: string) => void process.stderr.write(`python| ${line}\n`) }
      : {}),
  };
  let host: PythonHost | undefined = await PythonHost.start(hostOptions);
  for (const line of pythonNotices(hostOptions.name, options, host.ready)) process.stderr.write(`${line}\n`);
  const unused = !options.groundTruth && host.ready.supervision === 'ignores';
  const mark = (results: RewardResult[]): RewardResult[] =>
    unused ? results.map((r) => ({ ...r, metrics: { ...r.metrics, 'python/label_unused': 1 } })) : results;
  let starting: Promise<PythonHost> | undefined;
  // One host at a time: concurrent requests that find it dead (corl serve) wait for the same fresh one.
  const live = async (): Promise<PythonHost> => {
    if (host && !host.dead) return host;
    starting ??= (async () => {
      const old = host;
      host = undefined;
      await old?.close();
      host = await PythonHost.start(hostOptions);
      return host;
    })().finally(() => {
      starting = undefined;
    });
    return starting;
  };
  const scoreMany = async (contexts: readonly RewardContext[], work?: WorkOptions): Promise<RewardResult[]> => {
    const prepared = [];
    for (const c of contexts) prepared.push(await prepare(c, calls, work));
    const batch = batchOf(prepared, calls, ctx.seed, where('groundTruth'));
    if (!batch.calls.length) return mark(batch.read([]));
    const step = contexts[0] ? `global_step ${contexts[0].step}` : 'a request';
    const ask = async (): Promise<unknown[]> =>
      (await live()).request(batch.calls, `the ${batch.calls.length} call(s) of ${step}`, (i) => batch.describe(i));
    let answers: unknown[];
    try {
      answers = await ask();
    } catch (e) {
      // Queued behind a request that killed the process (corl serve scores groups concurrently): once more, on a fresh one.
      if (!(e instanceof HostGone)) throw e;
      answers = await ask().catch((again: unknown) => {
        throw again instanceof HostGone ? again.failure : again;
      });
    }
    return mark(batch.read(answers));
  };
  return {
    scoreMany,
    async score(rc: RewardContext, work?: WorkOptions): Promise<RewardResult> {
      return (await scoreMany([rc], work))[0]!;
    },
    async close() {
      await starting?.catch(() => undefined);
      const h = host;
      host = undefined;
      await h?.close();
    },
  };
}

/**
 * A researcher's Python reward function, hosted in a long-lived process (host.py) and called over a
 * pipe: TRL's `reward_func(prompts, completions, **kwargs)` or verl's `compute_score`. Label-free
 * unless `groundTruth` is set; the label-free context it gets is the supervisors' plurality label
 * (`pseudo_label`) and answer keys. Guide: docs/guide/python-rewards.md.
 */
export const pythonReward = definePlugin({
  manifest: {
    name: 'corl:python',
    kind: 'reward',
    description:
      "A Python reward function in a long-lived process: TRL's reward_func(prompts, completions, **kwargs), or verl's compute_score with groundTruth",
    corl: '^0.1.0',
    readsGroundTruth: (options: PythonOptions) => options.groundTruth,
    options: PYTHON_OPTIONS_SCHEMA,
  },
  create(options: PythonOptions, ctx: PluginContext): Promise<RewardSource> {
    return createPythonReward(options, ctx, (option) => `corl:python options.${option}`);
  },
});
