import type { DependencyContainer } from 'tsyringe';
import type { ManifestQueryContext, PluginContext, PluginKind, PluginKindMap, ResolvedSelection } from '../contracts/plugin';
import { CorlError, isCorlError } from '../errors';
import type { PluginRegistry } from './registry';

/** Where a plugin instance lives: the run's container, its seed, its agent, its base folder. */
export interface InstanceScope {
  readonly container: DependencyContainer;
  readonly registry: PluginRegistry;
  readonly seed: number;
  readonly agent?: number;
  readonly baseDir: string;
}

/** Build a plugin instance from a validated selection. A factory that throws gives CORL_ERR_PLUGIN_CREATE (coded errors pass through). */
export async function instantiate<K extends PluginKind>(kind: K, selection: ResolvedSelection, scope: InstanceScope, where?: string): Promise<PluginKindMap[K]> {
  const def = scope.registry.get(kind, selection.use);
  const ctx: PluginContext = {
    container: scope.container,
    seed: scope.seed,
    agent: scope.agent,
    baseDir: scope.baseDir,
    create: (k, sel) => instantiate(k, sel, scope, where),
  };
  try {
    return await def.create(selection.options, ctx);
  } catch (e) {
    if (isCorlError(e)) throw e;
    throw new CorlError('CORL_ERR_PLUGIN_CREATE', `expected plugin "${selection.use}" to start, got ${(e as Error)?.message ?? String(e)}`, { where, cause: e });
  }
}

/** Answers manifest questions (ground truth, token statistics) for a selection, nested ones included. */
export function manifestQueries(registry: PluginRegistry, kind: PluginKind = 'reward'): ManifestQueryContext {
  const q: ManifestQueryContext = {
    usesGroundTruth(sel) {
      const m = registry.get(kind, sel.use).manifest;
      return typeof m.usesGroundTruth === 'function' ? m.usesGroundTruth(sel.options, q) : m.usesGroundTruth === true;
    },
    tokenStats(sel) {
      const m = registry.get(kind, sel.use).manifest;
      return typeof m.tokenStats === 'function' ? m.tokenStats(sel.options, q) : m.tokenStats === true;
    },
  };
  return q;
}
