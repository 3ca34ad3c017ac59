// Pretraining as `corl pretrain` runs it and the public `pretrain` offers it: inputs checked (each
// named as its caller names it), the config loaded with `steps` as `pretrain.steps`, then the
// program of core/trainer/pretrain.ts.
import { pretrainAgents, type PretrainResult } from '../trainer/pretrain';
import { loadWith, type ConfigInput } from './config';
import { API_USAGE, intOption, knownOptions, shown, typedOptions, usageError, type Usage } from './usage';

/** Options of {@link pretrain}. */
export interface PretrainOptions {
  /** The checkpoint folder (several agents: one folder per agent name inside it); required. */
  readonly out: string;
  /** Only this agent (default: every agent, concurrently). */
  readonly agent?: number;
  /** Override `pretrain.steps`. */
  readonly steps?: number;
  /** Where status lines go (one per `pretrain.logEvery` steps); default: nowhere. */
  readonly log?: (line: string) => void;
}

export type { PretrainResult } from '../trainer/pretrain';

const PRETRAIN_OPTIONS: readonly (keyof PretrainOptions)[] = ['out', 'agent', 'steps', 'log'];

/**
 * Pretrain a config's policies on its task's worked solutions (supervised cross-entropy) exactly as
 * `corl pretrain` does, and save a checkpoint per agent that a config then starts from.
 */
export async function pretrain(config: ConfigInput, options: PretrainOptions): Promise<PretrainResult[]> {
  knownOptions(API_USAGE, options, PRETRAIN_OPTIONS);
  if (config === undefined || config === null)
    throw usageError(API_USAGE, 'config', `expected config to be a file path or a config object, got ${shown(config)}`);
  return runPretraining({ ...(options ?? {}), config }, API_USAGE);
}

/** One pretraining request: `corl pretrain` and the public API both come here. */
export interface PretrainRequest extends Partial<PretrainOptions> {
  readonly config: ConfigInput;
}

/** Run a pretraining request. */
export async function runPretraining(r: PretrainRequest, usage: Usage): Promise<PretrainResult[]> {
  typedOptions(usage, r, [
    ['out', 'string'],
    ['log', 'function'],
  ]);
  if (!r.out)
    throw usageError(
      usage,
      'out',
      `expected ${usage.code === 'CORL_ERR_CLI_USAGE' ? `${usage.name('out')} <dir>` : usage.name('out')} for the checkpoint, got none`,
    );
  const steps = intOption(usage, 'steps', r.steps, 1);
  const loaded = await loadWith(r.config, { overrides: steps === undefined ? {} : { 'pretrain.steps': steps } }, usage);
  const only = intOption(usage, 'agent', r.agent, 0);
  if (only !== undefined && only >= loaded.config.agents.length)
    throw usageError(
      usage,
      'agent',
      `expected ${usage.name('agent')} in [0, ${loaded.config.agents.length - 1}], got ${only}`,
    );
  return pretrainAgents(loaded, {
    ...(only !== undefined ? { agent: only } : {}),
    out: r.out,
    log: r.log ?? (() => undefined),
  });
}
