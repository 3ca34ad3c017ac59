import type { AdvantageEstimator } from '../contracts/advantage-estimator';
import type { AnswerExtractor } from '../contracts/answer-extractor';
import type { DiversityStrategy } from '../contracts/diversity-strategy';
import type { Equivalence } from '../contracts/equivalence';
import type { Interaction } from '../contracts/interaction';
import type { MetricsSink } from '../contracts/metrics-sink';
import type { PluginKind, PluginKindMap, ResolvedSelection } from '../contracts/plugin';
import type { Policy } from '../contracts/policy';
import type { RewardSource } from '../contracts/reward-source';
import type { Task, TaskData } from '../contracts/task';
import type { Topology } from '../contracts/topology';
import type { LoadedConfig } from './load';
import { CorlError } from '../errors';
import { checkRunData, evalCount } from './data-checks';
import { checkMemory } from './memory';
import { deepFreeze } from '../contracts/frozen';
import {
  instantiate,
  sinkTrustedWithReferences,
  trustedWithReferences,
  type InstanceScope,
} from '../registry/instantiate';
import { equivalenceFacade, metricsSinkFacade, PluginScopes, type RunServices } from '../registry/scope';

/** Which plugins to create: all of a training config, or what a reward service scores with. */
export type PluginSet = 'training' | 'scoring';

/** The plugins of one run (or one service), and how to end them. */
export interface RunPlugins {
  /** The task and its loaded data (`training` only); train and held-out problems are frozen. */
  readonly task?: Task;
  readonly data?: TaskData;
  readonly extractor: AnswerExtractor;
  /** The equivalence rewards and votes use, as a facade (`key`, `equal`): the trainer never hands it a reference. */
  readonly equivalence: Equivalence;
  /**
   * The equivalence that grades against references (monitoring and evaluation; a reward source that
   * reads ground truth compares through it): `grading`, else a second instance of `equivalence`,
   * trusted with references. Created for `training`, and for `scoring` when the reward reads
   * ground truth or the grader is trusted with references (a built-in, or one that declares
   * `readsReferences`: a service's label-free diagnostics). The instance whose keys reach
   * label-free rewards never sees a reference.
   */
  readonly grading?: Equivalence;
  readonly topology: Topology;
  readonly reward: RewardSource;
  readonly diversity?: DiversityStrategy;
  readonly advantage?: AdvantageEstimator;
  /** The interaction protocol (`training` only, when the config has one). */
  readonly interaction?: Interaction;
  readonly sinks: readonly MetricsSink[];
  /** One policy per agent, in order (`training` only); agent i has seed `config.seed + i`. */
  readonly policies: readonly Policy[];
  /** Close every instance (last created first) and dispose every plugin's container. */
  close(): Promise<void>;
}

/**
 * Create a config's plugins in the order each may depend on the ones before: task (and its data),
 * extractor, equivalence, topology, diversity, advantage, interaction, reward, metrics sinks, policies. Each
 * instance lives in a container of its own holding only what its manifest entitles it to (see
 * `PluginContext.container`); ground truth reaches only a reward source that declares it. The one
 * path for `corl train`, `corl validate`, `corl eval` and `corl serve`; on a failure, what was
 * created is closed before the error is thrown.
 */
export async function createRunPlugins(loaded: LoadedConfig, set: PluginSet = 'training'): Promise<RunPlugins> {
  const { config, registry, baseDir } = loaded;
  const scopes = new PluginScopes();
  let services: RunServices = {};
  const make = <K extends PluginKind>(
    kind: K,
    selection: ResolvedSelection,
    where: string,
    extra: Partial<InstanceScope> = {},
  ): Promise<PluginKindMap[K]> =>
    instantiate(kind, selection, { registry, seed: config.seed, baseDir, services, scopes, ...extra }, where);
  try {
    let task: Task | undefined;
    let data: TaskData | undefined;
    if (set === 'training') {
      task = await make('task', config.task, 'task');
      data = await task.load();
      if (data.train.length === 0 && config.trainer.steps > 0) {
        throw new CorlError('CORL_ERR_TASK_DATA', 'expected at least one training problem, got an empty train split', {
          where: 'task',
        });
      }
      // Problems travel to every plugin (diversity, rewards, policies' requests): none may change them.
      deepFreeze(data.train);
      deepFreeze(data.heldOut);
      services = { task, groundTruth: data.groundTruth };
    }
    const extractor = await make('extractor', config.extractor, 'extractor');
    services = { ...services, extractor };
    // The instance rewards and votes use, never handed a reference; and one that grades against
    // references (training, or a reward that reads ground truth): `grading`, else a second instance
    // of `equivalence`, which config loading checked the run trusts with them.
    const equivalence = await make('equivalence', config.equivalence, 'equivalence');
    // A service grades too where its grader may be trusted with references: a label-free reward's
    // pseudo-labels are then graded against the references trainers send (diagnostics only).
    const grades =
      set === 'training' ||
      loaded.readsGroundTruth ||
      (set === 'scoring' && trustedWithReferences(loaded.registry, config.grading ?? config.equivalence));
    const grading = grades
      ? equivalenceFacade(
          await make('equivalence', config.grading ?? config.equivalence, config.grading ? 'grading' : 'equivalence'),
        )
      : undefined;
    services = { ...services, equivalence, grading };
    const topology = await make('topology', config.topology, 'topology');
    services = { ...services, topology };
    let diversity: DiversityStrategy | undefined;
    let advantage: AdvantageEstimator | undefined;
    let interaction: Interaction | undefined;
    if (set === 'training') {
      diversity = await make('diversity', config.diversity, 'diversity');
      services = { ...services, diversity };
      advantage = await make('advantage', config.advantage, 'advantage');
      services = { ...services, advantage };
      checkRunData(config, data!, diversity);
      if (config.interaction) interaction = await make('interaction', config.interaction, 'interaction');
      // Before any policy is created: a step or an evaluation that cannot fit in memory is refused.
      checkMemory(config, registry, { evalProblems: evalCount(config, data!), rounds: interaction?.rounds ?? 0 });
    }
    const reward = await make('reward', config.reward, 'reward');
    const sinks: MetricsSink[] = [];
    const policies: Policy[] = [];
    // A service writes its own records (per-agent diagnostics, core/serve/board.ts) to the same sinks.
    for (const [i, sel] of config.metrics.entries()) {
      const sink = await make('metrics', sel, `metrics[${i}]`);
      sinks.push(metricsSinkFacade(sink, sinkTrustedWithReferences(registry, sel)));
    }
    if (set === 'training') {
      for (const [i, a] of config.agents.entries()) {
        policies.push(await make('policy', a.policy, `agents[${i}].policy`, { seed: config.seed + i, agent: i }));
      }
    }
    return {
      task,
      data,
      extractor,
      equivalence: equivalenceFacade(equivalence),
      grading,
      topology,
      reward,
      diversity,
      advantage,
      interaction,
      sinks,
      policies,
      close: () => scopes.close(),
    };
  } catch (e) {
    await scopes.close();
    throw e;
  }
}
