import * as path from 'node:path';
import type { AnswerExtractor } from '../contracts/answer-extractor';
import { ANSWER_EXTRACTOR } from '../contracts/answer-extractor';
import type { Equivalence } from '../contracts/equivalence';
import { EQUIVALENCE } from '../contracts/equivalence';
import type { ResolvedSelection } from '../contracts/plugin';
import type { RewardSource } from '../contracts/reward-source';
import { REWARD_SOURCE } from '../contracts/reward-source';
import type { Topology } from '../contracts/topology';
import { TOPOLOGY } from '../contracts/topology';
import { loadConfig, loadConfigValue, type LoadedConfig, type LoadOptions } from '../config/load';
import { serveRootSchema } from '../config/serve-schema';
import type { CorlConfig, ServeSettings } from '../config/types';
import { CorlError } from '../errors';
import { instantiate, type InstanceScope } from '../plugins/instantiate';
import { AnswerKeys } from '../trainer/answer-keys';

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
  return { loaded, config: loaded.config as unknown as ServeConfig };
}

/** Validate an in-memory serve config (tests, benchmarks). */
export async function loadServeConfigValue(value: unknown, options: LoadOptions & { baseDir?: string; name?: string } = {}): Promise<LoadedServeConfig> {
  const loaded = await loadConfigValue(value, { ...options, schema: serveRootSchema() });
  return { loaded, config: loaded.config as unknown as ServeConfig };
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
  /** Cached extraction and keys (the reward source's own `answerKeys` when it has one). */
  readonly keys: AnswerKeys;
  /** Whether the reward source reads references (requests must then carry them). */
  readonly supervised: boolean;
  /** Whether the reward source scores each completion on its own (manifest `pointwise`). */
  readonly pointwise: boolean;
  /** Absolute path of the label journal; undefined when `serve.journal` is false (labels in memory only). */
  readonly journalFile: string | undefined;
  /** Agent index by name; undefined when unknown. */
  agentIndex(name: string): number | undefined;
  /** Release the plugins. */
  close(): Promise<void>;
}

/** Instantiate a serve config's extractor, equivalence, topology and reward, registered under their tokens. */
export async function buildServeRuntime(served: LoadedServeConfig, options: { journal?: string } = {}): Promise<ServeRuntime> {
  const { loaded, config } = served;
  const { container, registry, baseDir } = loaded;
  const scope: InstanceScope = { container, registry, seed: config.seed, baseDir };
  const created: { close?: () => Promise<void> | void }[] = [];
  const close = async (): Promise<void> => {
    for (const c of created.reverse()) {
      try { await c.close?.(); } catch { /* best effort */ }
    }
  };
  try {
    const extractor = await instantiate('extractor', config.extractor, scope, 'extractor');
    container.register(ANSWER_EXTRACTOR, { useValue: extractor });
    const equivalence = await instantiate('equivalence', config.equivalence, scope, 'equivalence');
    created.push(equivalence);
    container.register(EQUIVALENCE, { useValue: equivalence });
    const topology = await instantiate('topology', config.topology, scope, 'topology');
    container.register(TOPOLOGY, { useValue: topology });
    const reward = await instantiate('reward', config.reward, scope, 'reward');
    created.push(reward);
    container.register(REWARD_SOURCE, { useValue: reward });
    const agents = config.agents.map((a) => a.name);
    const byName = new Map(agents.map((n, i) => [n, i]));
    const settings = config.serve;
    if (settings.getReward.agent !== undefined && !byName.has(settings.getReward.agent)) {
      throw new CorlError('CORL_ERR_CONFIG_INVALID', `expected serve.getReward.agent to name an agent (${agents.map((n) => `"${n}"`).join(', ')}), got "${settings.getReward.agent}"`, { where: 'serve.getReward.agent' });
    }
    const journalFile = options.journal === undefined && settings.journal === false ? undefined : path.resolve(options.journal ?? path.resolve(baseDir, settings.journal || `${config.name}.journal.jsonl`));
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
      keys: new AnswerKeys(extractor, equivalence, reward),
      supervised: loaded.supervised,
      pointwise,
      journalFile,
      agentIndex: (name) => byName.get(name),
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
