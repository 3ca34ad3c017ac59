import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { ADVANTAGE_ESTIMATOR, type AdvantageEstimator } from '../contracts/advantage-estimator';
import { ANSWER_EXTRACTOR, type AnswerExtractor } from '../contracts/answer-extractor';
import { DIVERSITY_STRATEGY, type DiversityStrategy } from '../contracts/diversity-strategy';
import { EQUIVALENCE, type Equivalence } from '../contracts/equivalence';
import { GROUND_TRUTH, type GroundTruth } from '../contracts/problem';
import { TASK, type Task } from '../contracts/task';
import { TOPOLOGY, type Topology } from '../contracts/topology';
import type { WorkOptions } from '../contracts/work';
import { CorlError, isCorlError } from '../errors';
import { PLUGIN_REGISTRY } from './registry';

/**
 * What a run has created that its plugins may be handed. A plugin's own container holds the
 * label-free services created before it; `task` and `groundTruth` go only into the container of a
 * reward source whose manifest declares `usesGroundTruth`.
 */
export interface RunServices {
  /** The run's task (its `load()` returns the references): ground-truth-declaring reward sources only. */
  readonly task?: Task;
  /** The references of the task: ground-truth-declaring reward sources only. */
  readonly groundTruth?: GroundTruth;
  readonly extractor?: AnswerExtractor;
  readonly equivalence?: Equivalence;
  readonly topology?: Topology;
  readonly diversity?: DiversityStrategy;
  readonly advantage?: AdvantageEstimator;
}

/** What a plugin's manifest entitles its container to. */
export interface Entitlement {
  /** It may hold the task and its ground truth. */
  readonly groundTruth: boolean;
}

// Each service crosses into a plugin's container as a frozen object of the contract's methods
// only: an instance's fields (caches, pools, options) stay out of reach.
function facade<T extends object>(methods: T): T {
  return Object.freeze(methods);
}

/** The run's equivalence as plugins see it: `key` and `equal`, nothing else (no caches, no `close`). */
export function equivalenceFacade(e: Equivalence): Equivalence {
  return facade({
    key: (answer: string) => e.key(answer),
    equal: (a: string, b: string, work?: WorkOptions) => e.equal(a, b, work),
  });
}

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

/** Tokens that lead to labels: held only by the container of a reward source that declares `usesGroundTruth`. */
const LABELLED: readonly InjectionToken<unknown>[] = [GROUND_TRUTH, TASK];
/** Tokens of the run's container no plugin resolves: the registry would let it build a task of its own. */
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
        ? `expected "${this.owner}", which does not declare usesGroundTruth, to resolve only label-free services, got a request for "${name}"`
        : `expected "${this.owner}" to resolve a token its container holds (${held.join(', ') || 'none'}), got "${name}"`,
      {
        where: this.owner,
        hint: labelled
          ? 'a label-free plugin never receives ground truth or the task; a reward source that needs them declares usesGroundTruth in its manifest (a labelFree run then refuses it, and its runs are reported as supervised)'
          : "resolve only the tokens PluginContext.container lists in docs/reference/contracts.md; the registry, other agents' policies and the run's own objects are never there",
      },
    );
    return this.note(e);
  }
}

/**
 * Register in a plugin's own container what its entitlement allows: the label-free services always,
 * the task and ground truth only when entitled. Services are registered as facades; the tokens the
 * plugin is not entitled to are registered as refusals, so that nothing in a parent container (a
 * test's `setup`, the run's registry) shows through.
 */
export function registerServices(
  container: DependencyContainer,
  services: RunServices,
  entitlement: Entitlement,
  gate: CapabilityGate,
): void {
  if (services.extractor) container.register(ANSWER_EXTRACTOR, { useValue: extractorFacade(services.extractor) });
  if (services.equivalence) container.register(EQUIVALENCE, { useValue: equivalenceFacade(services.equivalence) });
  if (services.topology) container.register(TOPOLOGY, { useValue: topologyFacade(services.topology) });
  if (services.diversity) container.register(DIVERSITY_STRATEGY, { useValue: diversityFacade(services.diversity) });
  if (services.advantage) container.register(ADVANTAGE_ESTIMATOR, { useValue: advantageFacade(services.advantage) });
  const refuse = (token: InjectionToken<unknown>): void => {
    container.register(token, {
      useFactory: () => {
        throw gate.refuse(token, heldTokens(container, gate));
      },
    });
  };
  if (entitlement.groundTruth) {
    if (services.groundTruth) container.register(GROUND_TRUTH, { useValue: services.groundTruth });
    if (services.task) container.register(TASK, { useValue: services.task });
  }
  gate.withheld.forEach(refuse);
}

/** The corl tokens a container can resolve, for messages. */
function heldTokens(raw: DependencyContainer, gate: CapabilityGate): string[] {
  const known: InjectionToken<unknown>[] = [
    'corl.PluginOptions',
    'corl.PluginContext',
    ANSWER_EXTRACTOR,
    EQUIVALENCE,
    TOPOLOGY,
    DIVERSITY_STRATEGY,
    ADVANTAGE_ESTIMATOR,
    GROUND_TRUTH,
    TASK,
  ];
  return known.filter((t) => !gate.withheld.has(t) && raw.isRegistered(t, true)).map(tokenName);
}

/**
 * The container a plugin is handed: a frozen object with tsyringe's `DependencyContainer` methods
 * over the plugin's own child container, and nothing else (no `parent`, so no walk up to the run's
 * container). Resolving a withheld or unregistered token throws `CORL_ERR_PLUGIN_CAPABILITY`; a
 * class is constructed from the plugin's own container (its `@inject` tokens checked the same way).
 * Children it creates are guarded alike.
 */
export function guardContainer(raw: DependencyContainer, gate: CapabilityGate): DependencyContainer {
  const check = (token: InjectionToken<unknown>): void => {
    if (gate.withheld.has(token)) throw gate.refuse(token, heldTokens(raw, gate));
    if (typeof token !== 'function' && !raw.isRegistered(token, true)) throw gate.refuse(token, heldTokens(raw, gate));
  };
  const rethrow = (e: unknown): never => {
    if (!isCorlError(e) && gate.denied) throw gate.denied;
    throw e;
  };
  const guarded: DependencyContainer = Object.freeze({
    register(token: InjectionToken<unknown>, provider: unknown, options?: unknown) {
      (raw.register as (...a: unknown[]) => unknown)(token, provider, options);
      return guarded;
    },
    registerSingleton(from: InjectionToken<unknown>, to?: InjectionToken<unknown>) {
      (raw.registerSingleton as (...a: unknown[]) => unknown)(from, to);
      return guarded;
    },
    registerType(from: InjectionToken<unknown>, to: InjectionToken<unknown>) {
      raw.registerType(from, to);
      return guarded;
    },
    registerInstance(token: InjectionToken<unknown>, instance: unknown) {
      raw.registerInstance(token, instance);
      return guarded;
    },
    resolve<T>(token: InjectionToken<T>): T {
      check(token);
      try {
        return raw.resolve(token);
      } catch (e) {
        return rethrow(e);
      }
    },
    resolveAll<T>(token: InjectionToken<T>): T[] {
      check(token);
      try {
        return raw.resolveAll(token);
      } catch (e) {
        return rethrow(e);
      }
    },
    isRegistered: (token: InjectionToken<unknown>, recursive?: boolean) => raw.isRegistered(token, recursive),
    reset() {
      // Clearing the container would drop its refusals and let a parent's registrations show through.
      throw gate.note(
        new CorlError(
          'CORL_ERR_PLUGIN_CAPABILITY',
          "expected a plugin to leave its container's registrations in place, got reset()",
          { hint: 'register what you need on top of them, or in a child container (createChildContainer())' },
        ),
      );
    },
    clearInstances: () => raw.clearInstances(),
    createChildContainer: () => guardContainer(raw.createChildContainer(), gate),
    beforeResolution: (...a: Parameters<DependencyContainer['beforeResolution']>) => raw.beforeResolution(...a),
    afterResolution: (...a: Parameters<DependencyContainer['afterResolution']>) => raw.afterResolution(...a),
    dispose: () => raw.dispose(),
  } as unknown as DependencyContainer);
  return guarded;
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
