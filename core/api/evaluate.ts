// Evaluation as a program: a config's policies on its held-out split or a benchmark file, as
// `corl eval` runs it and the public `evaluate` offers it: inputs checked (each named as its caller
// names it), the config loaded with the overrides they make, the run context built, evaluated and closed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoadedConfig } from '../config/load';
import { CorlError } from '../errors';
import { lookOpened, sealedRunOf } from '../report/opened';
import { resolveConfigPath } from '../util/paths';
import { buildRunContext } from '../trainer/run-context';
import {
  BENCHMARK_FORMATS,
  guessFormat,
  runBenchmark,
  type BenchmarkFormat,
  type EvalSummary,
} from '../trainer/benchmark';
import { CountLines, defaultCountProgress, NoCountProgress, type CountProgress } from '../trainer/progress';
import { loadWith, type ConfigInput } from './config';
import {
  API_USAGE,
  choiceOption,
  intOption,
  knownOptions,
  numberOption,
  shown,
  typedOptions,
  usageError,
  type Usage,
} from './usage';

/** Options of {@link evaluate}. */
export interface EvaluateOptions {
  /** A benchmark JSONL file to evaluate on instead of the config's held-out split (read by `corl:jsonl`). */
  readonly data?: string;
  /** The answer format of `data` (default: `math` when its first row has "problem", `plain` when it has "prompt", else `gsm8k`). */
  readonly format?: BenchmarkFormat;
  /** The prompt template of `data`; `{question}` is replaced by the problem text. */
  readonly template?: string;
  /** Override `eval.samples`. */
  readonly samples?: number;
  /** Which agents: `all` (the default), an index or a name. */
  readonly agent?: number | string;
  /** Budget-fair ensembles of every pair of agents, maj@2m over m samples of each (default `eval.ensemble`). */
  readonly ensemble?: number;
  /** Evaluate the first n problems (default `eval.maxProblems`; 0: all). */
  readonly limit?: number;
  /** Problems per sampling call (default 32); 0: all in one call, as the trainer's evaluation. */
  readonly batch?: number;
  /** Override `eval.sampling.temperature`. */
  readonly temperature?: number;
  /** Override `eval.sampling.maxTokens`. */
  readonly maxTokens?: number;
  /** Write `<agent>.jsonl` per agent (one row per problem) and summary.json in this folder. */
  readonly out?: string;
  /** Progress on stderr: `none` (the default), `lines`, or `auto` (a bar on a terminal, lines elsewhere). */
  readonly progress?: 'none' | 'lines' | 'auto';
}

export type { EvalAgentSummary, EvalSummary } from '../trainer/benchmark';

const EVALUATE_OPTIONS: readonly (keyof EvaluateOptions)[] = [
  'data',
  'format',
  'template',
  'samples',
  'agent',
  'ensemble',
  'limit',
  'batch',
  'temperature',
  'maxTokens',
  'out',
  'progress',
];

/**
 * Evaluate a config's policies exactly as `corl eval` does: pass@1 and maj@K per agent, budget-fair
 * ensembles and the agreement of every pair, graded as the trainer grades its evaluation.
 */
export async function evaluate(config: ConfigInput, options: EvaluateOptions = {}): Promise<EvalSummary> {
  knownOptions(API_USAGE, options, EVALUATE_OPTIONS);
  if (config === undefined || config === null)
    throw usageError(API_USAGE, 'config', `expected config to be a file path or a config object, got ${shown(config)}`);
  return runEvaluation({ ...options, config }, API_USAGE);
}

/** One evaluation request: `corl eval` and the public API both come here. */
export interface EvaluateRequest extends EvaluateOptions {
  readonly config: ConfigInput;
}

/** The benchmark-file inputs go with `data`, and must make sense. */
export function checkDataOptions(r: EvaluateOptions, usage: Usage): void {
  const n = (input: string) => usage.name(input);
  typedOptions(usage, r, [
    ['data', 'string'],
    ['template', 'string'],
    ['out', 'string'],
  ]);
  if (r.format !== undefined && !r.data)
    throw usageError(
      usage,
      'format',
      `expected ${n('format')} only with ${n('data')}, got ${n('format')} alone`,
      `the config's task knows its own format; pass ${n('data')} <file> to evaluate on a benchmark file`,
    );
  if (r.template !== undefined && !r.data)
    throw usageError(
      usage,
      'template',
      `expected ${n('template')} only with ${n('data')}, got ${n('template')} alone`,
      "set the task's own template option instead",
    );
  if (r.format !== undefined && !(BENCHMARK_FORMATS as readonly string[]).includes(r.format))
    throw usageError(
      usage,
      'format',
      `expected ${n('format')} to be one of ${BENCHMARK_FORMATS.join(', ')}, got "${r.format}"`,
    );
  if (r.template !== undefined && !r.template.includes('{question}'))
    throw usageError(usage, 'template', `expected ${n('template')} to contain {question}, got "${r.template}"`);
}

/** Run an evaluation request. */
export async function runEvaluation(r: EvaluateRequest, usage: Usage): Promise<EvalSummary> {
  checkDataOptions(r, usage);
  const parsed = parseOptions(r, usage);
  const loaded = await loadWith(r.config, { overrides: parsed.overrides }, usage);
  const ev = loaded.config.eval;
  const m = parsed.ensemble ?? ev.ensemble;
  if (m > ev.samples)
    throw usageError(
      usage,
      'ensemble',
      `expected ${usage.name('ensemble')} at most the samples per problem (${ev.samples}), got ${m}`,
      `raise ${usage.name('samples')} or lower ${usage.name('ensemble')}`,
    );
  const chosen = chosenAgents(loaded.config.agents, r.agent === undefined ? 'all' : String(r.agent), usage);
  if (parsed.ensemble !== undefined && chosen.length < 2)
    throw usageError(
      usage,
      'ensemble',
      `expected ${usage.name('ensemble')} with at least two agents, got ${chosen.length}`,
      `use ${usage.name('agent')} all with a config of two or more agents`,
    );
  if (parsed.data === null) refuseSealedRuns(loaded);
  const ctx = await buildRunContext(loaded);
  const progress = progressOf(r.progress);
  try {
    return await runBenchmark(ctx, {
      config: loaded.file ?? (typeof r.config === 'string' ? r.config : loaded.config.name),
      agents: chosen,
      ...(parsed.limit !== undefined ? { limit: parsed.limit } : {}),
      batch: parsed.batch,
      ensemble: m,
      data: parsed.data,
      format: parsed.format,
      ...(r.out !== undefined ? { out: r.out } : {}),
      progress,
    });
  } finally {
    progress.stop();
    await ctx.close();
  }
}

/**
 * A config's own split evaluated from a planned run (its config.json, or a checkpoint any option
 * names inside the run) before the plan's look opened that run would recompute the held-out
 * results the seal hides, uncounted: refused. A benchmark file (`data`) is not the plan's split.
 */
function refuseSealedRuns(loaded: LoadedConfig): void {
  const found: [string, string][] = loaded.file ? [['the config file', loaded.file]] : [];
  const walk = (v: unknown, at: string): void => {
    if (typeof v === 'string') {
      try {
        const p = resolveConfigPath(v, loaded.baseDir);
        if (fs.existsSync(p)) found.push([at, p]);
      } catch {
        // a package reference to no installed package: no path of a run
      }
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`));
    else if (v !== null && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) walk(x, at ? `${at}.${k}` : k);
  };
  walk(loaded.config, '');
  for (const [where, p] of found) {
    const run = sealedRunOf(p);
    if (!run || lookOpened(run)) continue;
    throw new CorlError(
      'CORL_ERR_RUN_SEALED',
      `expected a config whose evaluation reads no planned run before the plan's look, got ${where} at ${p}, inside ${run.run}: a run of the planned comparison ${run.comparison}, whose held-out results are sealed until the look`,
      {
        where: where === 'the config file' ? p : where,
        hint: `see the results at the plan's look (corl compare --plan <plan> --out ${run.comparison}); after it, corl eval may evaluate the run's checkpoints, or now on another benchmark with --data <file>`,
      },
    );
  }
}

function progressOf(progress: EvaluateOptions['progress']): CountProgress {
  return progress === 'auto' ? defaultCountProgress() : progress === 'lines' ? new CountLines() : new NoCountProgress();
}

/** The numeric options, and the config overrides they and `data` make (a benchmark file replaces the task). */
function parseOptions(
  r: EvaluateOptions,
  usage: Usage,
): {
  overrides: Record<string, unknown>;
  ensemble: number | undefined;
  limit: number | undefined;
  batch: number;
  data: string | null;
  format: string | null;
} {
  const samples = intOption(usage, 'samples', r.samples, 1);
  const ensemble = intOption(usage, 'ensemble', r.ensemble, 1);
  const limit = intOption(usage, 'limit', r.limit, 0);
  const batch = intOption(usage, 'batch', r.batch, 0) ?? 32;
  const temperature = numberOption(usage, 'temperature', r.temperature, 0);
  const maxTokens = intOption(usage, 'maxTokens', r.maxTokens, 1);
  choiceOption(usage, 'progress', r.progress, ['none', 'lines', 'auto'] as const);
  if (r.agent !== undefined && typeof r.agent !== 'string' && typeof r.agent !== 'number')
    throw usageError(
      usage,
      'agent',
      `expected ${usage.name('agent')} to be all, an index or a name, got ${shown(r.agent)}`,
    );
  const overrides: Record<string, unknown> = {};
  if (samples !== undefined) overrides['eval.samples'] = samples;
  if (temperature !== undefined) overrides['eval.sampling.temperature'] = temperature;
  if (maxTokens !== undefined) overrides['eval.sampling.maxTokens'] = maxTokens;
  let data: string | null = null;
  let format: string | null = null;
  if (r.data) {
    data = path.resolve(r.data);
    format = r.format ?? guessFormat(data);
    overrides.task = {
      use: 'corl:jsonl',
      options: { heldOut: data, format, ...(r.template !== undefined ? { template: r.template } : {}) },
    };
    overrides['trainer.steps'] = 0; // an evaluation-only task has no train split
  }
  return { overrides, ensemble, limit, batch, data, format };
}

/** The indices `agent` names: all, an index, or a name. */
function chosenAgents(agents: readonly { name: string }[], which: string, usage: Usage): number[] {
  const chosen =
    which === 'all'
      ? agents.map((_, i) => i)
      : [/^\d+$/.test(which) ? Number(which) : agents.findIndex((a) => a.name === which)];
  if (chosen.some((i) => i < 0 || i >= agents.length)) {
    throw new CorlError(
      usage.code,
      `expected ${usage.name('agent')} to be all, an index below ${agents.length} or one of ${agents.map((a) => `"${a.name}"`).join(', ')}, got "${which}"`,
      { where: usage.name('agent') },
    );
  }
  return chosen;
}
