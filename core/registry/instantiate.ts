import type { InjectionToken } from 'tsyringe';
import type {
  ManifestQueryContext,
  PluginContext,
  PluginKind,
  PluginKindMap,
  ResolvedSelection,
} from '../contracts/plugin';
import { CorlError, errorLine, isCorlError } from '../errors';
import { classOf, type PluginRegistry } from './registry';
import {
  CapabilityGate,
  construct,
  instanceContainer,
  resolveDependencies,
  type Entitlement,
  type PluginScopes,
  type RunServices,
} from './scope';

/** Where plugin instances are created: the registry, the seed, the agent, the base folder, the run's services. */
export interface InstanceScope {
  /** The run's registry (definitions, no data): used by the run, never handed to a plugin. */
  readonly registry: PluginRegistry;
  readonly seed: number;
  readonly agent?: number;
  readonly baseDir: string;
  /** What the run has created so far; each instance is injected what its manifest entitles it to. */
  readonly services?: RunServices;
  /** Remembers the instances and containers so that closing the run ends them. */
  readonly scopes?: PluginScopes;
  /** Told of every CORL_ERR_PLUGIN_CAPABILITY refusal, caught by the plugin or not. */
  readonly onRefusal?: (refusal: CorlError) => void;
  /** Told what each instance (nested ones included) is handed: its context and its injected dependencies (corl/testing's leak checks). */
  readonly onHanded?: (handed: { readonly use: string; readonly ctx: PluginContext; readonly deps: object }) => void;
}

/** The plugin whose `ctx.create` asks for a nested one. */
interface Creator {
  readonly use: string;
  readonly entitlement: Entitlement;
}

/** What a selection's manifest entitles its instance to: ground truth only for reward sources that declare it. */
export function entitlementOf(registry: PluginRegistry, kind: PluginKind, selection: ResolvedSelection): Entitlement {
  const q = manifestQueries(registry);
  return {
    groundTruth: kind === 'reward' && q.readsGroundTruth(selection),
    trainedOnLabels: kind === 'reward' && q.trainedOnLabels(selection),
  };
}

/**
 * Whether the run may hand a metrics sink the metrics measured against references: a built-in, or
 * one whose manifest declares `readsReferences`.
 */
export function sinkTrustedWithReferences(registry: PluginRegistry, selection: ResolvedSelection): boolean {
  return (
    registry.isBuiltin('metrics', selection.use) ||
    registry.get('metrics', selection.use).manifest.readsReferences === true
  );
}

/**
 * Whether the run may hand an equivalence references, to grade answers against them: a built-in, or
 * one whose manifest declares `readsReferences`. Any other is label-free and never sees one.
 */
export function trustedWithReferences(registry: PluginRegistry, selection: ResolvedSelection): boolean {
  return (
    registry.isBuiltin('equivalence', selection.use) ||
    registry.get('equivalence', selection.use).manifest.readsReferences === true
  );
}

/** A nested creation the creator's manifest does not allow: a task, or a reward source that reads ground truth. */
function refuseNested(
  creator: Creator | undefined,
  kind: PluginKind,
  selection: ResolvedSelection,
  entitlement: Entitlement,
): CorlError | undefined {
  if (!creator || creator.entitlement.groundTruth) return undefined;
  if (entitlement.groundTruth || kind === 'task') {
    return new CorlError(
      'CORL_ERR_PLUGIN_CAPABILITY',
      `expected "${creator.use}", which does not declare readsGroundTruth, to create only plugins without ground truth, got a request for ${kind === 'task' ? `the task "${selection.use}"` : `"${selection.use}", which reads ground truth`}`,
      {
        hint: `declare readsGroundTruth in the manifest of "${creator.use}" (a function of its options when only some parts need it)`,
      },
    );
  }
  // A label-free run checked the creator's manifest; a part made from labels must show there too.
  if (entitlement.trainedOnLabels && !creator.entitlement.trainedOnLabels) {
    return new CorlError(
      'CORL_ERR_PLUGIN_CAPABILITY',
      `expected "${creator.use}", which does not declare trainedOnLabels, to create only plugins made without labels, got a request for "${selection.use}", which was trained on labels`,
      {
        hint: `declare trainedOnLabels in the manifest of "${creator.use}" (a function of its options when only some parts need it, as corl:weighted does)`,
      },
    );
  }
  return undefined;
}

/**
 * Build a plugin instance from a validated selection: the composition root. The instance's
 * dependencies are resolved from a container of its own that the plugin never sees (see
 * `instanceContainer`), holding what its manifest entitles it to, and handed in: a factory's
 * declared `inject` as its third argument, a `fromClass` class's `@inject` constructor parameters.
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
  const nested = refuseNested(creator, kind, selection, entitlement);
  if (nested) {
    const refusal = where ? nested.at(where) : nested;
    scope.onRefusal?.(refusal);
    throw refusal;
  }
  const gate = new CapabilityGate(selection.use, entitlement, scope.onRefusal);
  const ctx: PluginContext = Object.freeze({
    seed: scope.seed,
    agent: scope.agent,
    baseDir: scope.baseDir,
    readsGroundTruth: (sel: ResolvedSelection) => queries.readsGroundTruth(sel),
    usesGroundTruth: (sel: ResolvedSelection) => queries.readsGroundTruth(sel),
    trainedOnLabels: (sel: ResolvedSelection) => queries.trainedOnLabels(sel),
    tokenStats: (sel: ResolvedSelection) => queries.tokenStats(sel),
    create: <N extends PluginKind>(k: N, sel: ResolvedSelection) =>
      instantiate(k, sel, scope, where, { use: selection.use, entitlement }),
  });
  const container = instanceContainer(scope.services ?? {}, entitlement, gate, { options: selection.options, ctx });
  scope.scopes?.adopt(container);
  let instance: PluginKindMap[K];
  try {
    const cls = classOf(def.create);
    if (cls) {
      scope.onHanded?.({ use: selection.use, ctx, deps: {} });
      instance = construct(container, cls as InjectionToken<PluginKindMap[K]>, gate);
    } else {
      const deps = resolveDependencies(container, def.inject, gate);
      scope.onHanded?.({ use: selection.use, ctx, deps });
      // the options were validated and defaulted against this definition's own schema
      instance = await def.create(selection.options as never, ctx, deps);
    }
  } catch (e) {
    // A plugin's own refusal of an option is placed at the selection's options in the config.
    if (isCorlError(e)) throw where && e.where?.startsWith('options') ? e.at(`${where}.${e.where}`) : e;
    // A refusal the plugin caught and replaced with an error of its own is reported as itself.
    if (gate.denied) throw gate.denied;
    throw new CorlError('CORL_ERR_PLUGIN_CREATE', `expected plugin "${selection.use}" to start, got ${errorLine(e)}`, {
      where,
      cause: e,
    });
  }
  // Nested instances belong to the plugin that created them, which closes them.
  if (!creator) scope.scopes?.own(instance);
  return instance;
}

/** Answers manifest questions (ground truth, token statistics) for a selection, nested ones included, once per options. */
export function manifestQueries(registry: PluginRegistry, kind: PluginKind = 'reward'): ManifestQueryContext {
  const q: ManifestQueryContext = {
    readsGroundTruth: (sel) => registry.answer(kind, sel, 'readsGroundTruth', q),
    usesGroundTruth: (sel) => registry.answer(kind, sel, 'readsGroundTruth', q),
    trainedOnLabels: (sel) => registry.answer(kind, sel, 'trainedOnLabels', q),
    tokenStats: (sel) => registry.answer(kind, sel, 'tokenStats', q),
  };
  return Object.freeze(q);
}
