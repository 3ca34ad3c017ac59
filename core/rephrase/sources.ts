// `corl rephrase` over a config: its problems (the config's task, train then held-out, or a JSONL
// file) and the policy that rephrases them (a config agent's, or a backend file's policy selection),
// then the rephrasing run of rephrase.ts, the policy closed at the end.
import * as path from 'node:path';
import type { ResolvedSelection } from '../contracts/plugin';
import type { Policy } from '../contracts/policy';
import { loadConfig, type LoadedConfig } from '../config/load';
import { ConfigValidator } from '../config/validator';
import { CorlError, errorLine } from '../errors';
import { instantiate } from '../registry/instantiate';
import { NotARegularFile, readUserText } from '../util/files';
import { parseJson } from '../util/json';
import { readProblemsJsonl, taskRows, type RephraseRow } from './input';
import { rephrase, type RephraseOptions, type RephraseSummary } from './rephrase';

/** What to rephrase with a config: where the problems and the policy come from, and how to run. */
export interface RephraseConfigOptions extends Omit<RephraseOptions, 'policy' | 'rows' | 'seed'> {
  /** A problems JSONL file (default: the config's task, train then held-out). */
  readonly in?: string;
  /** A JSON file with a policy selection (default: the policy of `agent`). */
  readonly backend?: string;
  /** The config agent whose policy rephrases, by index or name (default: the first). */
  readonly agent?: string;
}

/** Rephrase the problems of a config (or of `in`) with its agent's policy (or `backend`'s), seeded by the config. */
export async function rephraseConfig(configFile: string, o: RephraseConfigOptions): Promise<RephraseSummary> {
  const loaded = await loadConfig(configFile);
  const rows = o.in ? readProblemsJsonl(path.resolve(o.in)) : await configRows(loaded);
  const policy = o.backend ? await backendPolicy(loaded, path.resolve(o.backend)) : await agentPolicy(loaded, o.agent);
  try {
    const { in: _in, backend: _backend, agent: _agent, ...run } = o;
    return await rephrase({ ...run, policy, rows, seed: loaded.config.seed });
  } finally {
    await policy.close?.();
  }
}

async function configRows(loaded: LoadedConfig): Promise<RephraseRow[]> {
  const task = await instantiate(
    'task',
    loaded.config.task,
    { registry: loaded.registry, seed: loaded.config.seed, baseDir: loaded.baseDir },
    'task',
  );
  return taskRows(await task.load());
}

async function agentPolicy(loaded: LoadedConfig, agent: string | undefined): Promise<Policy> {
  const agents = loaded.config.agents;
  const index =
    agent === undefined ? 0 : /^\d+$/.test(agent) ? Number(agent) : agents.findIndex((a) => a.name === agent);
  if (index < 0 || index >= agents.length) {
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected --agent to be an index below ${agents.length} or one of ${agents.map((a) => `"${a.name}"`).join(', ')}, got "${agent}"`,
      { where: '--agent' },
    );
  }
  return instantiate(
    'policy',
    agents[index]!.policy,
    {
      registry: loaded.registry,
      seed: loaded.config.seed + index,
      agent: index,
      baseDir: loaded.baseDir,
    },
    `agents[${index}].policy`,
  );
}

async function backendPolicy(loaded: LoadedConfig, file: string): Promise<Policy> {
  let value: unknown;
  try {
    value = parseJson(readUserText(file));
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected a JSON file with a policy selection for --backend, got ${e instanceof NotARegularFile || e instanceof SyntaxError ? e.message : ((e as NodeJS.ErrnoException).code ?? errorLine(e))}`,
      { where: file },
    );
  }
  const baseDir = path.dirname(file);
  const data = { policy: value };
  const issues = new ConfigValidator(loaded.registry, baseDir).validate(
    { type: 'object', required: ['policy'], properties: { policy: { corlPlugin: 'policy' } } },
    data,
  );
  if (issues.length) {
    throw new CorlError(
      'CORL_ERR_CONFIG_INVALID',
      `expected a valid policy selection, got:\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}\n`,
      { where: file },
    );
  }
  return instantiate(
    'policy',
    data.policy as unknown as ResolvedSelection,
    {
      registry: loaded.registry,
      seed: loaded.config.seed,
      agent: 0,
      baseDir,
    },
    '--backend',
  );
}
