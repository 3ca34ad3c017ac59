import type { DependencyContainer } from 'tsyringe';
import { ADVANTAGE_ESTIMATOR, type AdvantageEstimator } from '../contracts/advantage-estimator';
import { ANSWER_EXTRACTOR, type AnswerExtractor } from '../contracts/answer-extractor';
import { DIVERSITY_STRATEGY, type DiversityStrategy } from '../contracts/diversity-strategy';
import { EQUIVALENCE, type Equivalence } from '../contracts/equivalence';
import { GROUND_TRUTH, type GroundTruth } from '../contracts/problem';
import { TASK, type Task } from '../contracts/task';
import { TOPOLOGY, type Topology } from '../contracts/topology';

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
  return facade({ key: (answer: string) => e.key(answer), equal: (a: string, b: string) => e.equal(a, b) });
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

/**
 * Register in a plugin's own container what its entitlement allows: the label-free services always,
 * the task and ground truth only when entitled. Services are registered as facades.
 */
export function registerServices(container: DependencyContainer, services: RunServices, entitlement: Entitlement): void {
  if (services.extractor) container.register(ANSWER_EXTRACTOR, { useValue: extractorFacade(services.extractor) });
  if (services.equivalence) container.register(EQUIVALENCE, { useValue: equivalenceFacade(services.equivalence) });
  if (services.topology) container.register(TOPOLOGY, { useValue: topologyFacade(services.topology) });
  if (services.diversity) container.register(DIVERSITY_STRATEGY, { useValue: diversityFacade(services.diversity) });
  if (services.advantage) container.register(ADVANTAGE_ESTIMATOR, { useValue: advantageFacade(services.advantage) });
  if (entitlement.groundTruth) {
    if (services.groundTruth) container.register(GROUND_TRUTH, { useValue: services.groundTruth });
    if (services.task) container.register(TASK, { useValue: services.task });
  }
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
        try { await i.close?.(); } catch { /* closing is best effort */ }
      }
      for (const c of this.containers.splice(0).reverse()) {
        try { await c.dispose(); } catch { /* best effort */ }
      }
    })();
    return this.closing;
  }
}
