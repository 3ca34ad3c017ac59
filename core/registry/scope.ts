import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { ADVANTAGE_ESTIMATOR, type AdvantageEstimator } from '../contracts/advantage-estimator';
import { ANSWER_EXTRACTOR, type AnswerExtractor } from '../contracts/answer-extractor';
import { DIVERSITY_STRATEGY, type DiversityStrategy } from '../contracts/diversity-strategy';
import { EQUIVALENCE, type Equivalence } from '../contracts/equivalence';
import type { MetricsRecord, MetricsRun, MetricsSink } from '../contracts/metrics-sink';
import { GROUND_TRUTH, type GroundTruth } from '../contracts/problem';
import { TASK, type Task } from '../contracts/task';
import { TOPOLOGY, type Topology } from '../contracts/topology';
import { PLUGIN_CONTEXT, PLUGIN_OPTIONS, type PluginContext, type PluginDependencies } from '../contracts/plugin';
import { equivalenceFacade } from '../contracts/frozen';
import { CorlError, isCorlError } from '../errors';
import { isolatedContainer } from './container';
import { PLUGIN_REGISTRY } from './registry';

/**
 * What a run has created that its plugins may be handed. A plugin's own container holds the
 * label-free services created before it; `task` and `groundTruth` go only into the container of a
 * reward source whose manifest declares `readsGroundTruth`.
 */
export interface RunServices {
  /** The run's task (its `load()` returns the references): ground-truth-declaring reward sources only. */
  readonly task?: Task;
  /** The references of the task: ground-truth-declaring reward sources only. */
  readonly groundTruth?: GroundTruth;
  readonly extractor?: AnswerExtractor;
  readonly equivalence?: Equivalence;
  /**
   * The equivalence trusted with references (`grading`): injected as `EQUIVALENCE` into a reward
   * source that declares `readsGroundTruth` (which compares answers with references through it), so
   * the label-free `equivalence` never sees a reference.
   */
  readonly grading?: Equivalence;
  readonly topology?: Topology;
  readonly diversity?: DiversityStrategy;
  readonly advantage?: AdvantageEstimator;
}

/** What a plugin's manifest entitles it to. */
export interface Entitlement {
  /** It may be injected the task and its ground truth. */
  readonly groundTruth: boolean;
  /** It was made from labels (a reward source's `trainedOnLabels`): it may create plugins that were too. */
  readonly trainedOnLabels?: boolean;
}

// Each service crosses into a plugin's container as a frozen object of the contract's methods
// only: an instance's fields (caches, pools, options) stay out of reach.
function facade<T extends object>(methods: T): T {
  return Object.freeze(methods);
}

/** The run's equivalence as plugins see it: the one facade (core/contracts/frozen.ts). */
export { equivalenceFacade };

/** The run's extractor as plugins see it. */
export function extractorFacade(x: AnswerExtractor): AnswerExtractor {
  return facade({ extract: (text: string) => x.extract(text) });
}

/** The run's topology as plugins see it. */
export function topologyFacade(t: Topology): Topology {
  return facade({
    supervisors: (agent: number, agents: number) => Object.freeze([...t.supervisors(agent, agents)]),
    selfSupervised: t.selfSupervised,
    validate: (agents: number) => t.validate(agents),
  });
}

/** The run's diversity strategy as plugins see it. */
export function diversityFacade(d: DiversityStrategy): DiversityStrategy {
  return facade({ view: (problem, agent, agents) => d.view(problem, agent, agents) } satisfies DiversityStrategy);
}

/** The run's advantage estimator as plugins see it. */
export function advantageFacade(a: AdvantageEstimator): AdvantageEstimator {
  return facade({ estimate: (groups) => a.estimate(groups) } satisfies AdvantageEstimator);
}

/**
 * Metrics measured against references (docs/reference/metrics.md marks them *(ground truth)*):
 * every evaluation record, and these training metrics.
 */
export function measuredAgainstReferences(name: string, phase: MetricsRecord['phase']): boolean {
  return (
    phase === 'eval' || /(^|\/)accuracy(\/|$)|^label\/count\/|^exec\/tests_passed$|^verifier\/score_mean$/.test(name)
  );
}

/**
 * A metrics sink as a run hands it records. A sink the run trusts with references (a built-in, or
 * one whose manifest declares `readsReferences`) gets every record; any other gets training records
 * without the metrics measured against references (aggregates of labels, which a plugin could read
 * back step by step), no evaluation records, and a `start` whose config holds no task options (an
 * inline task's options are its problems and answers). `close` is the run's to call.
 */
export function metricsSinkFacade(sink: MetricsSink, trusted: boolean): MetricsSink {
  const start = sink.start
    ? (run: MetricsRun) =>
        sink.start!(trusted ? run : Object.freeze({ ...run, config: withoutTaskOptions(run.config) }))
    : undefined;
  if (trusted) return facade({ ...(start ? { start } : {}), write: (r: MetricsRecord) => sink.write(r) });
  return facade({
    ...(start ? { start } : {}),
    write(r: MetricsRecord) {
      if (r.phase === 'eval') return;
      const metrics = Object.fromEntries(
        Object.entries(r.metrics).filter(([name]) => !measuredAgainstReferences(name, r.phase)),
      );
      return sink.write(Object.freeze({ ...r, metrics: Object.freeze(metrics) }));
    },
  });
}

/** A config with its task reduced to the plugin's name. */
function withoutTaskOptions(config: unknown): unknown {
  const c = config as { task?: { use?: unknown } } | null;
  if (!c || typeof c !== 'object' || !c.task || typeof c.task !== 'object') return config;
  return Object.freeze({ ...c, task: Object.freeze({ use: c.task.use }) });
}

/** Tokens that lead to labels: held only by the container of a reward source that declares `readsGroundTruth`. */
const LABELLED: readonly InjectionToken<unknown>[] = [GROUND_TRUTH, TASK];
/** Tokens no plugin resolves: the registry would let it build a task of its own. */
const RUN_ONLY: readonly InjectionToken<unknown>[] = [PLUGIN_REGISTRY];

const tokenName = (token: InjectionToken<unknown>): string =>
  typeof token === 'function' ? token.name || 'a class' : String(token);

/**
 * The refusals of one plugin's container. A refused resolution throws `CORL_ERR_PLUGIN_CAPABILITY`
 * and is remembered, so that the same refusal surfaces even when tsyringe wraps it (a constructor's
 * `@inject` of a withheld token) or the plugin catches it.
 */
export class CapabilityGate {
  /** The first refusal, if any. */
  denied?: CorlError;
  /** The tokens this plugin may not resolve, whatever its containers hold. */
  readonly withheld: ReadonlySet<InjectionToken<unknown>>;

  constructor(
    private readonly owner: string,
    entitlement: Entitlement,
    private readonly listener?: (refusal: CorlError) => void,
  ) {
    this.withheld = new Set(entitlement.groundTruth ? RUN_ONLY : [...LABELLED, ...RUN_ONLY]);
  }

  /** Remember a refusal and tell the listener. */
  note(e: CorlError): CorlError {
    this.denied ??= e;
    this.listener?.(e);
    return e;
  }

  /** The coded refusal of `token`, remembered. */
  refuse(token: InjectionToken<unknown>, held: readonly string[]): CorlError {
    const name = tokenName(token);
    const labelled = LABELLED.includes(token);
    const e = new CorlError(
      'CORL_ERR_PLUGIN_CAPABILITY',
      labelled
        ? `expected "${this.owner}", which does not declare readsGroundTruth, to be injected only label-free services, got a request for "${name}"`
        : `expected "${this.owner}" to be injected one of the services the run holds for it (${held.join(', ') || 'none'}), got "${name}"`,
      {
        where: this.owner,
        hint: labelled
          ? 'a label-free plugin never receives ground truth or the task; a reward source that needs them declares readsGroundTruth in its manifest (a labelFree run then refuses it, and its runs are reported as supervised)'
          : "inject only the tokens docs/reference/contracts.md lists (PluginDefinition.inject); the registry, other agents' policies and the run's own objects are never injected",
      },
    );
    return this.note(e);
  }
}

/**
 * The container the run resolves one plugin instance's dependencies from: an isolated one (no
 * parent), holding the instance's options and context, the label-free services created before it
 * (as facades) and, when entitled, the task and its ground truth. The tokens it is not entitled to
 * are registered as refusals, for a coded error naming them. The plugin is never handed it.
 */
export function instanceContainer(
  services: RunServices,
  entitlement: Entitlement,
  gate: CapabilityGate,
  own: { readonly options: Readonly<Record<string, unknown>>; readonly ctx: PluginContext },
): DependencyContainer {
  const container = isolatedContainer();
  container.register(PLUGIN_OPTIONS, { useValue: own.options });
  container.register(PLUGIN_CONTEXT, { useValue: own.ctx });
  if (services.extractor) container.register(ANSWER_EXTRACTOR, { useValue: extractorFacade(services.extractor) });
  const equivalence = entitlement.groundTruth ? (services.grading ?? services.equivalence) : services.equivalence;
  if (equivalence) container.register(EQUIVALENCE, { useValue: equivalenceFacade(equivalence) });
  if (services.topology) container.register(TOPOLOGY, { useValue: topologyFacade(services.topology) });
  if (services.diversity) container.register(DIVERSITY_STRATEGY, { useValue: diversityFacade(services.diversity) });
  if (services.advantage) container.register(ADVANTAGE_ESTIMATOR, { useValue: advantageFacade(services.advantage) });
  if (entitlement.groundTruth) {
    if (services.groundTruth) container.register(GROUND_TRUTH, { useValue: services.groundTruth });
    if (services.task) container.register(TASK, { useValue: services.task });
  }
  for (const token of gate.withheld) {
    container.register(token, {
      useFactory: () => {
        throw gate.refuse(token, heldTokens(container, gate));
      },
    });
  }
  return container;
}

/**
 * Resolve a factory's declared dependencies (`inject`) from its instance container: a frozen object
 * of the same names. A token the container does not hold (withheld, or not created yet) is
 * CORL_ERR_PLUGIN_CAPABILITY; a class token is constructed there, its own `@inject`s checked alike.
 */
export function resolveDependencies(
  container: DependencyContainer,
  inject: PluginDependencies | undefined,
  gate: CapabilityGate,
): Readonly<Record<string, unknown>> {
  const deps: Record<string, unknown> = {};
  for (const [name, token] of Object.entries(inject ?? {})) deps[name] = construct(container, token, gate);
  return Object.freeze(deps);
}

/**
 * Resolve `token` (a class: construct it) in an instance container, turning tsyringe's failures into
 * coded ones: a withheld or unregistered token is the gate's refusal, anything else the first line
 * of tsyringe's message (it nests the reason of each constructor in the chain).
 */
export function construct<T>(container: DependencyContainer, token: InjectionToken<T>, gate: CapabilityGate): T {
  if (typeof token !== 'function' && !container.isRegistered(token))
    throw gate.refuse(token, heldTokens(container, gate));
  try {
    return container.resolve(token);
  } catch (e) {
    if (isCorlError(e)) throw e;
    if (gate.denied) throw gate.denied;
    const missing = /unregistered dependency token: "([^"]+)"/.exec(e instanceof Error ? e.message : '')?.[1];
    if (missing !== undefined) throw gate.refuse(missing, heldTokens(container, gate));
    throw e;
  }
}
/** The corl tokens a container can resolve, for messages. */
function heldTokens(container: DependencyContainer, gate: CapabilityGate): string[] {
  const known: InjectionToken<unknown>[] = [
    PLUGIN_OPTIONS,
    PLUGIN_CONTEXT,
    ANSWER_EXTRACTOR,
    EQUIVALENCE,
    TOPOLOGY,
    DIVERSITY_STRATEGY,
    ADVANTAGE_ESTIMATOR,
    GROUND_TRUTH,
    TASK,
  ];
  return known.filter((t) => !gate.withheld.has(t) && container.isRegistered(t)).map(tokenName);
}

/**
 * The plugin instances of one run (or one service, or one test) and the containers they were
 * created in. `close()` closes the instances the run created itself, last first (a composite closes
 * the parts it created), then disposes every container: a container a plugin kept refuses to
 * resolve anything afterwards, and tsyringe disposes the `Disposable` instances it constructed.
 */
export class PluginScopes {
  private readonly instances: { close?: () => unknown }[] = [];
  private readonly containers: DependencyContainer[] = [];
  private closing?: Promise<void>;

  /** Remember an instance the run must close. */
  own(instance: unknown): void {
    if (instance && typeof instance === 'object') this.instances.push(instance as { close?: () => unknown });
  }

  /** Remember a container to dispose at the end. */
  adopt(container: DependencyContainer): void {
    this.containers.push(container);
  }

  /** Close every owned instance (best effort, last first), then dispose every container. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const i of this.instances.splice(0).reverse()) {
        try {
          await i.close?.();
        } catch {
          /* closing is best effort */
        }
      }
      for (const c of this.containers.splice(0).reverse()) {
        try {
          await c.dispose();
        } catch {
          /* best effort */
        }
      }
    })();
    return this.closing;
  }
}
