// `compare` of the public API: `corl compare` from code, with the comparison's rows and paired
// verdicts as typed values.
import * as path from 'node:path';
import { loadPlan } from '../compare/plan';
import { defaultCompareOut, runCompare } from '../compare/run';
import { designFromParts, type Design } from '../report/design';
import type { ResultRow } from '../report/html';
import { PRIMARY_METRICS, type PairResult, type PrimaryMetric } from '../report/paired';
import { SPENDING, type Spending } from '../stats/sequential';
import { API_USAGE, choiceOption, intOption, knownOptions, shown, typedOptions, usageError } from './usage';

/** How a comparison decides (the flags of `corl compare` without a plan). */
export interface DesignOptions {
  /** `final` (average pass@1 at the last evaluation, the default) or `change` (minus step 0). */
  readonly metric?: PrimaryMetric;
  /** The differences a − b to decide (default: each config against the first). */
  readonly pairs?: readonly { readonly a: string; readonly b: string }[];
  /** Decide each config against each of these instead. */
  readonly against?: readonly string[];
  /** Two-sided error rate of the intervals (default 0.05). */
  readonly alpha?: number;
  /** Equivalence margin in points: a pair within ±margin by TOST is "equivalent". */
  readonly margin?: number;
  /** The effect in points whose seeds needed are reported (default: the margin, else 2). */
  readonly effect?: number;
  /** Add seeds look by look until every pair is resolved: seeds per config at each look (the last is the cap). */
  readonly untilResolved?: { readonly looks: readonly number[]; readonly boundary?: Spending | 'fixed' };
}

/** Options of {@link compare}. */
export interface CompareOptions {
  /** Seeds per config (default 3): run i uses the config's seed + 1000·i. */
  readonly seeds?: number;
  /** Index of the first seed (default 0). */
  readonly firstSeed?: number;
  /** Override `trainer.steps` of every training config (evaluation-only configs stay at 0). */
  readonly steps?: number;
  /** Folder of the comparison (default `runs/compare-<date>-<time>`); the same folder again continues it. */
  readonly out?: string;
  /** A pre-registered plan file: it names the configs, seeds, looks and rules (pass no configs then). */
  readonly plan?: string;
  /** How to decide without a plan. */
  readonly design?: DesignOptions;
  /** Runs at once (default 1). */
  readonly jobs?: number;
  /** Progress of each run on stderr: `none` (the default), `lines` or `auto`. */
  readonly progress?: 'none' | 'lines' | 'auto';
  /** Where status lines go (one per run started, skipped or resumed); default: nowhere. */
  readonly log?: (line: string) => void;
  /** Also give the one-line verdict of `corl compare --verdict`: the last config against each of the others. */
  readonly verdict?: boolean;
}

/** What a comparison gives: its table, its rows and its paired verdicts. */
export interface ComparisonResult {
  /** The comparison folder (`<out>/<config>/seed-<i>/` per run, results.json, report.html). */
  readonly out: string;
  /** The comparison's report.html. */
  readonly report: string;
  /** The results table as text (what `corl compare` prints). */
  readonly table: string;
  /** The verdicts, the look and the plan as text lines. */
  readonly summary: string;
  /** One row per config: held-out pass@1 per agent and on average (mean and sd over seeds), base and label accuracy. */
  readonly rows: readonly ResultRow[];
  /** The pairs as decided: mean difference in points, intervals and outcome. */
  readonly pairs: readonly PairResult[];
  /** Under a sequential design, whether it has stopped (every pair resolved, or the last look done). */
  readonly stopped?: boolean;
  /** The one-line verdict, when `verdict` was asked for. */
  readonly verdict?: string;
}

const COMPARE_OPTIONS: readonly (keyof CompareOptions)[] = [
  'seeds',
  'firstSeed',
  'steps',
  'out',
  'plan',
  'design',
  'jobs',
  'progress',
  'log',
  'verdict',
];

const DESIGN_OPTIONS: readonly (keyof DesignOptions)[] = [
  'metric',
  'pairs',
  'against',
  'alpha',
  'margin',
  'effect',
  'untilResolved',
];

/** A positive number (below `max`), or undefined. */
function positive(input: string, value: unknown, max = Infinity): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value >= max)
    throw usageError(
      API_USAGE,
      input,
      `expected options.${input} to be a number above 0${max < Infinity ? ` and below ${max}` : ''}, got ${shown(value)}`,
    );
  return value;
}

/** The design the options describe (checked), or undefined for the default. */
function designOf(d: DesignOptions | undefined, firstSeed: number): Design | undefined {
  if (d === undefined) return undefined;
  knownOptions({ ...API_USAGE, name: (k) => `options.design.${k}` }, d, DESIGN_OPTIONS);
  const metric = choiceOption(API_USAGE, 'design.metric', d.metric, PRIMARY_METRICS) ?? 'final';
  const names = (v: unknown): boolean => Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string' && s);
  if (
    d.pairs !== undefined &&
    !(Array.isArray(d.pairs) && d.pairs.length > 0 && d.pairs.every((p) => names([p?.a, p?.b]) && p.a !== p.b))
  )
    throw usageError(
      API_USAGE,
      'design.pairs',
      `expected options.design.pairs as [{ a, b }, …] naming two different configs each, got ${shown(d.pairs)}`,
    );
  if (d.against !== undefined && !names(d.against))
    throw usageError(
      API_USAGE,
      'design.against',
      `expected options.design.against to be config names, got ${shown(d.against)}`,
    );
  if (d.pairs && d.against)
    throw usageError(API_USAGE, 'design.against', 'expected options.design.pairs or options.design.against, got both');
  const seq = d.untilResolved;
  if (seq !== undefined) {
    const looks: unknown = seq?.looks;
    if (
      !Array.isArray(looks) ||
      looks.length === 0 ||
      looks.some((n, i) => !Number.isInteger(n) || n < 2 || (i > 0 && n <= looks[i - 1]))
    )
      throw usageError(
        API_USAGE,
        'design.untilResolved',
        `expected options.design.untilResolved.looks to be increasing seed counts of at least 2, got ${shown(looks)}`,
      );
    choiceOption(API_USAGE, 'design.untilResolved.boundary', seq.boundary, [...SPENDING, 'fixed'] as const);
  }
  return designFromParts(
    {
      metric,
      ...(d.pairs ? { pairs: d.pairs } : {}),
      ...(d.against ? { against: d.against } : {}),
      ...optional('alpha', positive('design.alpha', d.alpha, 0.5)),
      ...optional('margin', positive('design.margin', d.margin)),
      ...optional('effect', positive('design.effect', d.effect)),
      ...(seq ? { looks: seq.looks, ...optional('boundary', seq.boundary) } : {}),
    },
    firstSeed,
  );
}

/** `{ [key]: value }`, or nothing when the value is undefined. */
function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

/**
 * Run configs over seeds and decide between them, exactly as `corl compare` does: the same folder,
 * runs, results table, paired verdicts and report. Finished runs in `out` are skipped and unfinished
 * ones resumed, so calling it again with the same `out` continues an interrupted comparison.
 */
export async function compare(configs: readonly string[], options: CompareOptions = {}): Promise<ComparisonResult> {
  knownOptions(API_USAGE, options, COMPARE_OPTIONS);
  if (!Array.isArray(configs) || configs.some((c) => typeof c !== 'string' || c === ''))
    throw usageError(
      API_USAGE,
      'configs',
      `expected configs to be an array of config file paths, got ${shown(configs)}`,
    );
  if (options.plan !== undefined && typeof options.plan !== 'string')
    throw usageError(
      API_USAGE,
      'plan',
      `expected options.plan to be the path of a plan file, got ${shown(options.plan)}`,
    );
  const plan = options.plan !== undefined ? loadPlan(options.plan) : undefined;
  if (plan)
    for (const k of ['seeds', 'firstSeed', 'steps', 'design'] as const)
      if (options[k] !== undefined)
        throw usageError(
          API_USAGE,
          k,
          `expected no options.${k} with a plan, got one`,
          'the plan fixes the configs, seeds, looks, pairs and rules',
        );
  if (!plan && configs.length === 0)
    throw usageError(
      API_USAGE,
      'configs',
      'expected at least one config to compare, got none',
      'name config files, or pass options.plan',
    );
  const seeds = intOption(API_USAGE, 'seeds', options.seeds, 1) ?? 3;
  const firstSeed = intOption(API_USAGE, 'firstSeed', options.firstSeed, 0) ?? 0;
  const steps = intOption(API_USAGE, 'steps', options.steps, 0);
  const jobs = intOption(API_USAGE, 'jobs', options.jobs, 1);
  const progress = choiceOption(API_USAGE, 'progress', options.progress, ['none', 'lines', 'auto'] as const) ?? 'none';
  if (options.design?.untilResolved && options.seeds !== undefined)
    throw usageError(
      API_USAGE,
      'seeds',
      'expected options.design.untilResolved.looks to set the seeds, got options.seeds too',
      'the last look is the seed cap',
    );
  typedOptions(API_USAGE, options, [
    ['out', 'string'],
    ['log', 'function'],
    ['verdict', 'boolean'],
  ]);
  const design = plan ? undefined : designOf(options.design, firstSeed);
  const out = options.out ?? defaultCompareOut(plan);
  const result = await runCompare({
    configs,
    seeds,
    firstSeed,
    out,
    ...(steps !== undefined ? { steps } : {}),
    progress,
    log: options.log ?? (() => undefined),
    verdict: options.verdict === true,
    ...(plan ? { plan } : {}),
    ...(design ? { design } : {}),
    ...(jobs !== undefined ? { jobs } : {}),
  });
  return {
    out: path.resolve(out),
    report: result.report,
    table: result.table,
    summary: result.summary,
    rows: result.rows,
    pairs: result.verdicts.pairs,
    ...(result.verdicts.stopped !== undefined ? { stopped: result.verdicts.stopped } : {}),
    ...(result.verdict !== undefined ? { verdict: result.verdict } : {}),
  };
}
