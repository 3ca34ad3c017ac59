import * as path from 'node:path';
import type { AnswerExtractor } from '../contracts/answer-extractor';
import type { Equivalence } from '../contracts/equivalence';
import type { MetricsSink } from '../contracts/metrics-sink';
import type { ResolvedSelection } from '../contracts/plugin';
import type { RewardSource } from '../contracts/reward-source';
import type { Topology } from '../contracts/topology';
import { loadConfig, loadConfigValue, type LoadedConfig, type LoadOptions } from '../config/load';
import { serveRootSchema } from '../config/serve-schema';
import type { CorlConfig, ServeSettings } from '../config/types';
import { CorlError } from '../errors';
import { createRunPlugins } from '../config/run-plugins';
import { heldPerAgent } from './connections';
import { ANSWER_CACHE_LIMITS, AnswerKeys, type AnswerCacheLimits } from '../reward/answer-keys';

/**
 * The service's answer cache keeps short texts only: a model's long completions almost never
 * repeat across posts (a retry is answered from the exchange), and hashing and holding each one
 * costs more than extracting it again.
 */
export const SERVE_ANSWER_CACHE: AnswerCacheLimits = { ...ANSWER_CACHE_LIMITS, longestText: 256 };

/** A serve config: a training config whose task and policies are optional, with its `serve` section filled in. */
export type ServeConfig = Omit<CorlConfig, 'task' | 'agents' | 'serve'> & {
  readonly task?: ResolvedSelection;
  readonly agents: readonly { readonly name: string; readonly policy?: ResolvedSelection }[];
  readonly serve: ServeSettings;
};

/** A loaded serve config. */
export interface LoadedServeConfig {
  readonly loaded: LoadedConfig;
  readonly config: ServeConfig;
}

/** Load and validate a serve config file (the serve root schema: no task or policies needed). */
export async function loadServeConfig(file: string, options: LoadOptions = {}): Promise<LoadedServeConfig> {
  const loaded = await loadConfig(file, { ...options, schema: serveRootSchema() });
  return { loaded, config: singleTurn(loaded.config as unknown as ServeConfig, file) };
}

/**
 * The service scores one group of completions per request: it never sees a discussion's rounds, so
 * a config with an `interaction` (a debate) is refused rather than served as if it had none.
 */
function singleTurn(config: ServeConfig, where: string): ServeConfig {
  const { interaction } = config;
  if (interaction)
    throw new CorlError(
      'CORL_ERR_CONFIG_INVALID',
      `expected no "interaction" in a serve config (corl serve scores single-turn groups), got "${interaction.use}"`,
      {
        where: `${where}: interaction`,
        hint: 'remove "interaction" and serve the verifier alone, or run the debate with corl train (docs/algorithms/maporl.md)',
      },
    );
  return config;
}

/** Validate an in-memory serve config (tests, benchmarks). */
export async function loadServeConfigValue(
  value: unknown,
  options: LoadOptions & { baseDir?: string; name?: string } = {},
): Promise<LoadedServeConfig> {
  const loaded = await loadConfigValue(value, { ...options, schema: serveRootSchema() });
  return { loaded, config: singleTurn(loaded.config as unknown as ServeConfig, options.name ?? 'config') };
}

/** The plugins a service scores with: the very instances and contracts the trainer uses. */
export interface ServeRuntime {
  readonly loaded: LoadedConfig;
  readonly config: ServeConfig;
  readonly settings: ServeSettings;
  /** Agent names, by index. */
  readonly agents: readonly string[];
  readonly topology: Topology;
  readonly reward: RewardSource;
  readonly extractor: AnswerExtractor;
  readonly equivalence: Equivalence;
  /**
   * The equivalence trusted with references: a reward that reads ground truth compares answers with
   * them through it, and a label-free reward's pseudo-labels and rewards are graded with it
   * (diagnostics, never handed to a plugin that votes). Absent when the grader is not trusted.
   */
  readonly grading?: Equivalence;
  /** Cached extraction and keys through the run's extractor and equivalence (the reward pipeline adds the source's own `answerKeys`). */
  readonly keys: AnswerKeys;
  /** Whether the reward source reads ground truth (requests must then carry references). */
  readonly readsGroundTruth: boolean;
  /** Whether the reward source was trained on labels although it reads none (a learned verifier). */
  readonly trainedOnLabels: boolean;
  /** Whether the reward source scores each completion on its own (manifest `pointwise`). */
  readonly pointwise: boolean;
  /** Whether the reward source reads per-token statistics (manifest `tokenStats`: RENT, Intuitor). */
  readonly tokenStats: boolean;
  /** The config's metrics sinks (`metrics`), which the service writes its per-agent points to (core/serve/board.ts). */
  readonly sinks: readonly MetricsSink[];
  /** Each sink's plugin name, for messages. */
  readonly sinkNames: readonly string[];
  /** Absolute path of the label journal; undefined when `serve.journal` is false (labels in memory only). */
  readonly journalFile: string | undefined;
  /** The most POST requests one agent may have in progress at once (serve.maxHeldPerAgent, or its share of one peer's places). */
  readonly maxHeld: number;
  /** Agent index by name; undefined when unknown. */
  agentIndex(name: string): number | undefined;
  /** Release the plugins. */
  close(): Promise<void>;
}

/** Instantiate a serve config's extractor, equivalence, topology and reward, through the trainer's own path (`createRunPlugins`). */
export async function buildServeRuntime(
  served: LoadedServeConfig,
  options: { journal?: string } = {},
): Promise<ServeRuntime> {
  const { loaded, config } = served;
  const { registry, baseDir } = loaded;
  const plugins = await createRunPlugins(loaded, 'scoring');
  try {
    const { extractor, equivalence, grading, topology, reward, sinks } = plugins;
    const agents = config.agents.map((a) => a.name);
    const byName = new Map(agents.map((n, i) => [n, i]));
    const settings = config.serve;
    if (settings.getReward.agent !== undefined && !byName.has(settings.getReward.agent)) {
      throw new CorlError(
        'CORL_ERR_CONFIG_INVALID',
        `expected serve.getReward.agent to name an agent (${agents.map((n) => `"${n}"`).join(', ')}), got "${settings.getReward.agent}"`,
        { where: 'serve.getReward.agent' },
      );
    }
    if (settings.getReward.groupBy === 'label' && !loaded.readsGroundTruth) {
      // OpenRLHF's label column is usually the reference answer: groups keyed by it would put the
      // prompts that share an answer together, and match peers across them, so the rewards would
      // carry label equality to a reward that is meant to read no label.
      throw new CorlError(
        'CORL_ERR_CONFIG_INVALID',
        `expected serve.getReward.groupBy "prompt" because "${config.reward.use}" is label-free, got "label": groups keyed by the label column would tell the reward which prompts share an answer`,
        {
          where: 'serve.getReward.groupBy',
          hint: 'group by "prompt" (every agent posts the same prompt text), or post explicit problem ids to POST /v1/samples (docs/integrations/openrlhf.md, the agent executor)',
        },
      );
    }
    const maxHeld = heldPerAgent(settings, agents.length);
    const journalFile =
      options.journal === undefined && settings.journal === false
        ? undefined
        : path.resolve(options.journal ?? path.resolve(baseDir, settings.journal || `${config.name}.journal.jsonl`));
    const pointwise = registry.get('reward', config.reward.use).manifest.pointwise === true;
    return {
      loaded,
      config,
      settings,
      agents,
      topology,
      reward,
      extractor,
      equivalence,
      ...(grading ? { grading } : {}),
      keys: new AnswerKeys(extractor, equivalence, SERVE_ANSWER_CACHE),
      readsGroundTruth: loaded.readsGroundTruth,
      trainedOnLabels: loaded.trainedOnLabels,
      pointwise,
      tokenStats: loaded.tokenStats,
      sinks,
      sinkNames: config.metrics.map((m) => m.use),
      journalFile,
      maxHeld,
      agentIndex: (name) => byName.get(name),
      close: plugins.close,
    };
  } catch (e) {
    await plugins.close();
    throw e;
  }
}
