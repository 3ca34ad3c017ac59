import * as path from 'node:path';
import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import type { DependencyContainer } from 'tsyringe';
import type { JsonSchema } from '../contracts/plugin';
import { CorlError, errorLine, isCorlError } from '../errors';
import { readUserText } from '../util/files';
import { depthOf, MAX_JSON_DEPTH, tooDeep } from '../util/json';
import { createRunContainer } from '../registry/container';
import { instantiate, manifestQueries, trustedWithReferences } from '../registry/instantiate';
import { loadPluginModules } from '../registry/load';
import { PLUGIN_REGISTRY, type PluginRegistry } from '../registry/registry';
import { deepFreeze } from '../contracts/frozen';
import { lineColumn, lineStarts } from '../util/text';
import { rootSchema } from './root-schema';
import type { CorlConfig } from './types';
import { ConfigValidator, type ConfigIssue } from './validator';

/** A config ready to run: validated, defaulted, frozen, with the container its plugins live in. */
export interface LoadedConfig {
  readonly config: CorlConfig;
  /** Absolute path of the file, or undefined for an in-memory config. */
  readonly file?: string;
  /** Folder relative paths are resolved against. */
  readonly baseDir: string;
  /** The run's child container, host side only (it holds the registry; no plugin is ever handed it). */
  readonly container: DependencyContainer;
  readonly registry: PluginRegistry;
  /**
   * Whether a reward source reads ground truth (it gets `RewardContext.reference`). The run is then
   * reported as supervised, as it is when `trainedOnLabels`: "supervised" is the union of the two.
   */
  readonly readsGroundTruth: boolean;
  /**
   * Whether a reward source was trained on labels although it reads none (`trainedOnLabels`: a learned
   * verifier). It gets no references; the run is reported as supervised all the same.
   */
  readonly trainedOnLabels: boolean;
  /** Whether completions must carry token statistics. */
  readonly tokenStats: boolean;
  /** The config as given (overrides applied, before defaults): what a resume re-validates. */
  readonly source: unknown;
}

/** A config problem with its place in the file. */
export interface LocatedIssue extends ConfigIssue {
  readonly line?: number;
  readonly column?: number;
}

/** Options of {@link loadConfig}. */
export interface LoadOptions {
  /** Parent container (default: corl's own container, `corlContainer()`); the run gets a child of it. */
  readonly parent?: DependencyContainer;
  /** Changes applied to the raw config before validation (e.g. `--steps`), as dotted path → value. */
  readonly overrides?: Readonly<Record<string, unknown>>;
  /** Root schema to validate against instead of the training one (`corl serve` relaxes `task` and policies). */
  readonly schema?: JsonSchema;
  /** Metrics sink selections added after the config's own `metrics` (`corl serve --tensorboard DIR`). */
  readonly appendMetrics?: readonly unknown[];
}

/** The largest config file corl reads (an inline task's problems make the largest ones). */
const MAX_CONFIG_BYTES = 64 * 1024 * 1024;

/** Read, parse, validate and freeze a config file. Every problem is reported in one CORL_ERR_CONFIG_INVALID. */
export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = readUserText(abs, MAX_CONFIG_BYTES);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CorlError(
      'CORL_ERR_CONFIG_NOT_FOUND',
      `expected a readable config file, got ${code === 'ENOENT' ? 'no file' : code === 'EISDIR' ? 'a folder' : errorLine(e)} at ${abs}`,
      { where: file },
    );
  }
  return loadConfigText(text, { ...options, file: abs, name: path.basename(abs).replace(/\.jsonc?$/i, '') });
}

/** Validate a config given as text (with positions for errors). */
export async function loadConfigText(
  given: string,
  options: LoadOptions & { file?: string; name?: string; baseDir?: string } = {},
): Promise<LoadedConfig> {
  // A UTF-8 byte-order mark (some Windows editors write one first) is not content: read as a space,
  // so that every line and column reported stays right.
  const text = given.charCodeAt(0) === 0xfeff ? ` ${given.slice(1)}` : given;
  const where = options.file ?? '<config>';
  // The parser and everything after it recurse: a config nested thousands deep is refused first.
  const deep = tooDeep(text);
  if (deep) {
    throw new CorlError(
      'CORL_ERR_CONFIG_PARSE',
      `expected JSON nested at most ${MAX_JSON_DEPTH} levels deep, got a deeper value here`,
      {
        where: `${where}:${deep.line}:${deep.column}`,
        data: deep,
        hint: 'no corl config needs that depth: look for runaway brackets there',
      },
    );
  }
  const parseErrors: ParseError[] = [];
  const tree = parseTree(text, parseErrors, { allowTrailingComma: true, disallowComments: false });
  const starts = lineStarts(text);
  if (parseErrors.length || !tree) {
    const first = parseErrors[0];
    const pos = first ? lineColumn(starts, first.offset) : { line: 1, column: 1 };
    throw new CorlError(
      'CORL_ERR_CONFIG_PARSE',
      `expected JSON, got ${first ? printParseErrorCode(first.error) : 'an empty file'} at line ${pos.line}, column ${pos.column}`,
      {
        where: `${where}:${pos.line}:${pos.column}`,
        data: { line: pos.line, column: pos.column },
      },
    );
  }
  const raw = JSON.parse(stripComments(text, tree)) as unknown;
  const locate = (issue: ConfigIssue): LocatedIssue => {
    const node = nearestNode(tree, issue.pointer);
    if (!node) return issue;
    return { ...issue, ...lineColumn(starts, node.offset) };
  };
  return loadConfigValue(raw, {
    ...options,
    locate,
    baseDir: options.baseDir ?? (options.file ? path.dirname(options.file) : process.cwd()),
  });
}

/** Validate an in-memory config object (a deep copy is validated; the argument is not modified). */
export async function loadConfigValue(
  value: unknown,
  options: LoadOptions & {
    file?: string;
    name?: string;
    baseDir?: string;
    locate?: (i: ConfigIssue) => LocatedIssue;
  } = {},
): Promise<LoadedConfig> {
  const where = options.file ?? '<config>';
  const baseDir = options.baseDir ?? process.cwd();
  const locate = options.locate ?? ((i: ConfigIssue) => i);
  if (depthOf(value) > MAX_JSON_DEPTH) {
    throw invalid(where, [
      {
        pointer: '',
        path: '(root)',
        message: `expected a value nested at most ${MAX_JSON_DEPTH} levels deep, got a deeper one`,
      },
    ]);
  }
  const data = structuredClone(value) as Record<string, unknown>;
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw invalid(where, [
      {
        pointer: '',
        path: '(root)',
        message: `expected an object, got ${Array.isArray(data) ? 'an array' : typeof data}`,
      },
    ]);
  }
  for (const [dotted, v] of Object.entries(options.overrides ?? {})) setPath(data, dotted, v);
  // A `metrics` that is not a list is left as it is, for validation to name.
  if (options.appendMetrics?.length && (data.metrics === undefined || Array.isArray(data.metrics)))
    data.metrics = [...((data.metrics as unknown[] | undefined) ?? []), ...structuredClone(options.appendMetrics)];
  const source = structuredClone(data);

  const container = await createRunContainer(options.parent);
  const registry = container.resolve(PLUGIN_REGISTRY);
  if (Array.isArray(data.plugins) && data.plugins.every((p) => typeof p === 'string')) {
    try {
      await loadPluginModules(registry, data.plugins as string[], baseDir);
    } catch (e) {
      if (!isCorlError(e)) throw e;
      const index = (data.plugins as string[]).findIndex((p) => e.detail.includes(`"${p}"`));
      const issue = locate({
        pointer: `/plugins${index >= 0 ? `/${index}` : ''}`,
        path: `plugins${index >= 0 ? `[${index}]` : ''}`,
        message: e.detail,
      });
      throw e.at(formatWhere(where, issue));
    }
  }

  const validator = new ConfigValidator(registry, baseDir);
  const issues = validator.validate(options.schema ?? rootSchema(), data).map(locate);
  if (issues.length) throw invalid(where, issues);

  // Derived defaults.
  if (data.name === undefined) data.name = options.name ?? 'run';
  if (data.dataSeed === undefined) data.dataSeed = data.seed;
  const agents = data.agents as { name?: string }[];
  agents.forEach((a, i) => {
    if (a.name === undefined) a.name = `agent-${i}`;
  });
  const semantic: ConfigIssue[] = [];
  const seenNames = new Map<string, number>();
  agents.forEach((a, i) => {
    const j = seenNames.get(a.name!);
    if (j !== undefined)
      semantic.push({
        pointer: `/agents/${i}/name`,
        path: `agents[${i}].name`,
        message: `expected a unique agent name, got "${a.name}" (also agents[${j}])`,
      });
    seenNames.set(a.name!, i);
  });
  const ev = data.eval as { samples: number; ensemble: number };
  if (ev.ensemble > ev.samples) {
    semantic.push({
      pointer: '/eval/ensemble',
      path: 'eval.ensemble',
      message: `expected at most eval.samples (${ev.samples}) samples per agent in the ensemble, got ${ev.ensemble}`,
    });
  }
  const tr = data.trainer as { groupSize: number; trainSamples: number };
  if (tr.trainSamples !== 0 && (tr.trainSamples < 2 || tr.trainSamples > tr.groupSize)) {
    semantic.push({
      pointer: '/trainer/trainSamples',
      path: 'trainer.trainSamples',
      message:
        tr.trainSamples < 2
          ? `expected at least 2 trained samples per group (GRPO normalizes within the group), or 0 to train on all, got ${tr.trainSamples}`
          : `expected at most trainer.groupSize (${tr.groupSize}) trained samples per group (the N trained are the first of the M voted over), got ${tr.trainSamples}; raise trainer.groupSize or lower trainer.trainSamples`,
    });
  }
  if (semantic.length) throw invalid(where, semantic.map(locate));

  const config = deepFreeze(data) as unknown as CorlConfig;
  const at = (slot: string) => formatWhere(where, locate({ pointer: `/${slot}`, path: slot, message: '' }));
  const { readsGroundTruth, trainedOnLabels, tokenStats } = manifestLabelUse(config, registry, at);
  checkGrading(config, registry, readsGroundTruth, at);
  const topology = await instantiate('topology', config.topology, { registry, seed: config.seed, baseDir }, 'topology');
  try {
    topology.validate(config.agents.length);
  } catch (e) {
    if (!isCorlError(e)) throw e;
    const issue = locate({ pointer: '/topology', path: 'topology', message: '' });
    throw e.at(formatWhere(where, issue));
  }
  return {
    config,
    file: options.file,
    baseDir,
    container,
    registry,
    readsGroundTruth,
    trainedOnLabels,
    tokenStats,
    source,
  };
}

/**
 * How the config's reward uses labels, asked of its manifest once (every later asking, for
 * entitlements and nested creation, gets the same answers); a `labelFree` config refuses one that
 * reads ground truth or was trained on labels.
 */
function manifestLabelUse(
  config: CorlConfig,
  registry: PluginRegistry,
  at: (slot: string) => string,
): { readsGroundTruth: boolean; trainedOnLabels: boolean; tokenStats: boolean } {
  const queries = manifestQueries(registry);
  const ask = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      if (!isCorlError(e)) throw e;
      throw e.at(at('reward'));
    }
  };
  const readsGroundTruth = ask(() => queries.readsGroundTruth(config.reward));
  const trainedOnLabels = ask(() => queries.trainedOnLabels(config.reward));
  const tokenStats = ask(() => queries.tokenStats(config.reward));
  if (config.labelFree && (readsGroundTruth || trainedOnLabels)) {
    throw new CorlError(
      'CORL_ERR_CONFIG_LABEL_FREE',
      `expected only label-free reward sources because "labelFree" is true, got "${config.reward.use}", which ${readsGroundTruth ? 'reads ground truth' : 'was trained on labelled data (a learned verifier)'}`,
      {
        where: at('reward'),
        hint: 'a source trained on labels reads none at run time, but the run is not label-free; set "labelFree": false',
      },
    );
  }
  return { readsGroundTruth, trainedOnLabels, tokenStats };
}

/**
 * A run that grades answers against references (training: monitoring and evaluation; any run whose
 * reward reads ground truth) does so with `grading`, else `equivalence`: it must be an equivalence
 * the run trusts with references, a built-in or one that declares `readsReferences`. A label-free
 * equivalence is never handed a reference.
 */
function checkGrading(
  config: CorlConfig,
  registry: PluginRegistry,
  readsGroundTruth: boolean,
  at: (slot: string) => string,
): void {
  const grades = (config as { task?: unknown }).task !== undefined || readsGroundTruth;
  const grader = config.grading ?? config.equivalence;
  if (!grades || trustedWithReferences(registry, grader)) return;
  const slot = config.grading ? 'grading' : 'equivalence';
  throw new CorlError(
    'CORL_ERR_CONFIG_GRADING',
    `expected ${config.grading ? '"grading"' : 'an equivalence'} trusted with references to grade answers against them${readsGroundTruth ? ` (the reward "${config.reward.use}" reads ground truth)` : ''}, got "${grader.use}", which is label-free (not a built-in, and its manifest does not declare readsReferences)`,
    {
      where: at(slot),
      hint: `set "grading" to a built-in equivalence (e.g. "corl:math"), or declare readsReferences: true in the manifest of "${grader.use}" if the run may trust it with references`,
    },
  );
}

function formatWhere(file: string, issue: LocatedIssue): string {
  return `${file}${issue.line ? `:${issue.line}:${issue.column}` : ''} ${issue.path}`;
}

function invalid(file: string, issues: LocatedIssue[]): CorlError {
  const lines = issues.map(
    (i) => `  ${file}${i.line ? `:${i.line}:${i.column}` : ''}  ${i.path}: ${i.message}${i.hint ? ` (${i.hint})` : ''}`,
  );
  const paths = issues.every((i) => i.problem === 'path');
  return new CorlError(
    paths ? 'CORL_ERR_CONFIG_PATH' : 'CORL_ERR_CONFIG_INVALID',
    paths
      ? `expected every path of the config to name a file or folder, got ${issues.length} that ${issues.length === 1 ? 'does' : 'do'} not:\n${lines.join('\n')}\n`
      : `expected a valid config, got ${issues.length} problem${issues.length === 1 ? '' : 's'}:\n${lines.join('\n')}\n`,
    {
      hint: paths
        ? 'relative paths are resolved from the config file\'s folder; corl\'s own models are "package:corl/models/..." wherever corl is installed'
        : 'fix each field listed; `corl list` shows every plugin and its options',
      data: { issues },
    },
  );
}

/** The node at a JSON pointer, or its nearest existing ancestor (for values filled in by defaults). */
function nearestNode(tree: Node, pointer: string): Node | undefined {
  const segs = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (let n = segs.length; n >= 0; n--) {
    const loc = segs.slice(0, n).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    const node = findNodeAtLocation(tree, loc);
    if (node) {
      // For a property, point at its key, where editors put the cursor.
      return n === segs.length && node.parent?.type === 'property' ? (node.parent.children?.[0] ?? node) : node;
    }
  }
  return undefined;
}

/** Re-serialize the parsed tree as strict JSON (comments and trailing commas dropped). */
function stripComments(_text: string, tree: Node): string {
  const toValue = (n: Node): unknown => {
    switch (n.type) {
      case 'object': {
        const o: Record<string, unknown> = {};
        for (const p of n.children ?? []) o[p.children![0]!.value as string] = toValue(p.children![1]!);
        return o;
      }
      case 'array':
        return (n.children ?? []).map(toValue);
      default:
        return n.value;
    }
  };
  return JSON.stringify(toValue(tree));
}

function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let o: Record<string, unknown> = obj;
  for (const k of keys.slice(0, -1)) {
    if (!o[k] || typeof o[k] !== 'object') o[k] = {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys[keys.length - 1]!] = value;
}
