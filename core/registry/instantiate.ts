import type { DependencyContainer } from 'tsyringe';
import type {
  ManifestQueryContext,
  PluginContext,
  PluginKind,
  PluginKindMap,
  ResolvedSelection,
} from '../contracts/plugin';
import { PLUGIN_CONTEXT, PLUGIN_OPTIONS } from '../contracts/plugin';
import { CorlError, isCorlError } from '../errors';
import type { PluginRegistry } from './registry';
import {
  CapabilityGate,
  guardContainer,
  registerServices,
  type Entitlement,
  type PluginScopes,
  type RunServices,
} from './scope';

/** Where plugin instances are created: the parent of their containers, the seed, the agent, the base folder, the run's services. */
export interface InstanceScope {
  /**
   * Parent of each instance's own container: the run's container, which holds the plugin registry
   * (definitions, no data) and never a service, so no path leads from a plugin's container to ground truth.
   */
  readonly container: DependencyContainer;
  readonly registry: PluginRegistry;
  readonly seed: number;
  readonly agent?: number;
  readonly baseDir: string;
  /** What the run has created so far; each instance's container gets what its manifest entitles it to. */
  readonly services?: RunServices;
  /** Remembers the instances and containers so that closing the run ends them. */
  readonly scopes?: PluginScopes;
  /** Told of every CORL_ERR_PLUGIN_CAPABILITY refusal, caught by the plugin or not. */
  readonly onRefusal?: (refusal: CorlError) => void;
}

/** The plugin whose `ctx.create` asks for a nested one. */
interface Creator {
  readonly use: string;
  readonly entitlement: Entitlement;
}

/** What a selection's manifest entitles its instance to: ground truth only for reward sources that declare it. */
export function entitlementOf(registry: PluginRegistry, kind: PluginKind, selection: ResolvedSelection): Entitlement {
  return { groundTruth: kind === 'reward' && manifestQueries(registry).usesGroundTruth(selection) };
}

/**
 * Build a plugin instance from a validated selection, in a container of its own (a child of
 * `scope.container`) holding its options, its context and the services its manifest entitles it to.
 * A factory that throws gives CORL_ERR_PLUGIN_CREATE (coded errors pass through).
 */
export async function instantiate<K extends PluginKind>(
  kind: K,
  selection: ResolvedSelection,
  scope: InstanceScope,
  where?: string,
  creator?: Creator,
): Promise<PluginKindMap[K]> {
  const def = scope.registry.get(kind, selection.use);
  const queries = manifestQueries(scope.registry);
  const entitlement = entitlementOf(scope.registry, kind, selection);
  if (creator && !creator.entitlement.groundTruth && (entitlement.groundTruth || kind === 'task')) {
    const refusal = new CorlError(
      'CORL_ERR_PLUGIN_CAPABILITY',
      `expected "${creator.use}", which does not declare usesGroundTruth, to create only plugins without ground truth, got a request for ${kind === 'task' ? `the task "${selection.use}"` : `"${selection.use}", which reads ground truth`}`,
      {
        where,
        hint: `declare usesGroundTruth in the manifest of "${creator.use}" (a function of its options when only some parts need it)`,
      },
    );
    scope.onRefusal?.(refusal);
    throw refusal;
  }
  const raw = scope.container.createChildContainer();
  scope.scopes?.adopt(raw);
  const gate = new CapabilityGate(selection.use, entitlement, scope.onRefusal);
  const ctx: PluginContext = Object.freeze({
    container: guardContainer(raw, gate),
    seed: scope.seed,
    agent: scope.agent,
    baseDir: scope.baseDir,
    usesGroundTruth: (sel: ResolvedSelection) => queries.usesGroundTruth(sel),
    trainedOnLabels: (sel: ResolvedSelection) => queries.trainedOnLabels(sel),
    tokenStats: (sel: ResolvedSelection) => queries.tokenStats(sel),
    create: <N extends PluginKind>(k: N, sel: ResolvedSelection) =>
      instantiate(k, sel, scope, where, { use: selection.use, entitlement }),
  });
  raw.register(PLUGIN_OPTIONS, { useValue: selection.options });
  raw.register(PLUGIN_CONTEXT, { useValue: ctx });
  registerServices(raw, scope.services ?? {}, entitlement, gate);
  let instance: PluginKindMap[K];
  try {
    // the options were validated and defaulted against this definition's own schema
    instance = await def.create(selection.options as never, ctx);
  } catch (e) {
    if (isCorlError(e)) throw e;
    // A refusal tsyringe wrapped (a constructor's @inject of a withheld token) is reported as itself.
    if (gate.denied) throw gate.denied;
    throw new CorlError(
      'CORL_ERR_PLUGIN_CREATE',
      `expected plugin "${selection.use}" to start, got ${(e as Error)?.message ?? String(e)}`,
      { where, cause: e },
    );
  }
  // Nested instances belong to the plugin that created them, which closes them.
  if (!creator) scope.scopes?.own(instance);
  return instance;
}

/** Answers manifest questions (ground truth, token statistics) for a selection, nested ones included. */
export function manifestQueries(registry: PluginRegistry, kind: PluginKind = 'reward'): ManifestQueryContext {
  // A resolved selection's options were validated against its plugin's schema: they are that plugin's options.
  const q: ManifestQueryContext = {
    usesGroundTruth(sel) {
      const m = registry.get(kind, sel.use).manifest;
      return typeof m.usesGroundTruth === 'function'
        ? m.usesGroundTruth(sel.options as never, q)
        : m.usesGroundTruth === true;
    },
    trainedOnLabels(sel) {
      const m = registry.get(kind, sel.use).manifest;
      return typeof m.trainedOnLabels === 'function'
        ? m.trainedOnLabels(sel.options as never, q)
        : m.trainedOnLabels === true;
    },
    tokenStats(sel) {
      const m = registry.get(kind, sel.use).manifest;
      return typeof m.tokenStats === 'function' ? m.tokenStats(sel.options as never, q) : m.tokenStats === true;
    },
  };
  return q;
}
