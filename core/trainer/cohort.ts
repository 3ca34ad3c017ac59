import type { DependencyContainer } from 'tsyringe';
import type { AdvantageEstimator } from '../contracts/advantage-estimator';
import { ADVANTAGE_ESTIMATOR } from '../contracts/advantage-estimator';
import type { AnswerExtractor } from '../contracts/answer-extractor';
import { ANSWER_EXTRACTOR } from '../contracts/answer-extractor';
import type { Completion } from '../contracts/completion';
import type { DiversityStrategy } from '../contracts/diversity-strategy';
import { DIVERSITY_STRATEGY } from '../contracts/diversity-strategy';
import type { Equivalence } from '../contracts/equivalence';
import { EQUIVALENCE } from '../contracts/equivalence';
import type { MetricsSink } from '../contracts/metrics-sink';
import type { Policy, SampleRequest, SamplingOptions } from '../contracts/policy';
import { POLICY } from '../contracts/policy';
import { GROUND_TRUTH, type Problem } from '../contracts/problem';
import type { RewardSource } from '../contracts/reward-source';
import { REWARD_SOURCE } from '../contracts/reward-source';
import type { TaskData } from '../contracts/task';
import { TASK } from '../contracts/task';
import type { Topology } from '../contracts/topology';
import { TOPOLOGY } from '../contracts/topology';
import type { LoadedConfig } from '../config/load';
import { CorlError, isCorlError } from '../errors';
import { instantiate, type InstanceScope } from '../plugins/instantiate';
import { mixSeed, Rng } from '../util/rng';

/** One member of the cohort: its own container, policy and seed. */
export interface Agent {
  readonly index: number;
  readonly name: string;
  /** seed + index: initialization and sampling seeds derive from it. */
  readonly seed: number;
  readonly policy: Policy;
  readonly container: DependencyContainer;
}

/** Everything a run needs, built from a loaded config. */
export interface Cohort {
  readonly loaded: LoadedConfig;
  readonly data: TaskData;
  readonly agents: readonly Agent[];
  readonly topology: Topology;
  readonly reward: RewardSource;
  readonly diversity: DiversityStrategy;
  readonly extractor: AnswerExtractor;
  readonly equivalence: Equivalence;
  readonly advantage: AdvantageEstimator;
  readonly sinks: readonly MetricsSink[];
  /** Release every plugin that holds threads, sessions or processes. */
  close(): Promise<void>;
}

/**
 * Instantiate the plugins of a config. Run-wide plugins are registered under their contract tokens
 * in the run's container (so class-based plugins can inject them); each agent gets a child container
 * holding its own policy. Ground truth is registered for monitoring code only; reward sources that
 * do not declare `usesGroundTruth` never receive it through the trainer.
 */
export async function buildCohort(loaded: LoadedConfig): Promise<Cohort> {
  const { config, container, registry, baseDir } = loaded;
  const scope: InstanceScope = { container, registry, seed: config.seed, baseDir };
  const created: { close?: () => Promise<void> | void }[] = [];
  const closeAll = async (): Promise<void> => {
    for (const c of created.reverse()) {
      try { await c.close?.(); } catch { /* closing is best effort */ }
    }
  };
  try {
    const task = await instantiate('task', config.task, scope, 'task');
    container.register(TASK, { useValue: task });
    const data = await task.load();
    if (data.train.length === 0 && config.trainer.steps > 0) {
      throw new CorlError('CORL_ERR_TASK_DATA', 'expected at least one training problem, got an empty train split', { where: 'task' });
    }
    container.register(GROUND_TRUTH, { useValue: data.groundTruth });

    const extractor = await instantiate('extractor', config.extractor, scope, 'extractor');
    container.register(ANSWER_EXTRACTOR, { useValue: extractor });
    const equivalence = await instantiate('equivalence', config.equivalence, scope, 'equivalence');
    created.push(equivalence);
    container.register(EQUIVALENCE, { useValue: equivalence });
    const topology = await instantiate('topology', config.topology, scope, 'topology');
    container.register(TOPOLOGY, { useValue: topology });
    const diversity = await instantiate('diversity', config.diversity, scope, 'diversity');
    container.register(DIVERSITY_STRATEGY, { useValue: diversity });
    const advantage = await instantiate('advantage', config.advantage, scope, 'advantage');
    container.register(ADVANTAGE_ESTIMATOR, { useValue: advantage });
    const reward = await instantiate('reward', config.reward, scope, 'reward');
    created.push(reward);
    container.register(REWARD_SOURCE, { useValue: reward });
    const sinks: MetricsSink[] = [];
    for (const [i, sel] of config.metrics.entries()) {
      const sink = await instantiate('metrics', sel, scope, `metrics[${i}]`);
      created.push(sink);
      sinks.push(sink);
    }

    const agents: Agent[] = [];
    for (const [i, a] of config.agents.entries()) {
      const agentContainer = container.createChildContainer();
      const seed = config.seed + i;
      const policy = await instantiate('policy', a.policy, { ...scope, container: agentContainer, seed, agent: i }, `agents[${i}].policy`);
      created.push(policy);
      agentContainer.register(POLICY, { useValue: policy });
      agents.push({ index: i, name: a.name, seed, policy, container: agentContainer });
    }
    return { loaded, data, agents, topology, reward, diversity, extractor, equivalence, advantage, sinks, close: closeAll };
  } catch (e) {
    await closeAll();
    throw e;
  }
}

/** Sample from one agent and check the policy kept its contract (aligned, equal lengths, finite log-probabilities). */
export async function sampleChecked(agent: Agent, requests: readonly SampleRequest[], options: SamplingOptions, what: string): Promise<Completion[][]> {
  let out: Completion[][];
  try {
    out = await agent.policy.sample(requests, options);
  } catch (e) {
    throw agentFailure(agent, what, e);
  }
  const bad = (msg: string): CorlError => new CorlError('CORL_ERR_POLICY_OUTPUT', msg, { where: `agents[${agent.index}] (${agent.name}) ${what}` });
  if (!Array.isArray(out) || out.length !== requests.length) throw bad(`expected ${requests.length} completion groups, got ${Array.isArray(out) ? out.length : typeof out}`);
  out.forEach((group, i) => {
    if (!Array.isArray(group) || group.length !== options.n) throw bad(`expected ${options.n} completions for request ${i}, got ${Array.isArray(group) ? group.length : typeof group}`);
    group.forEach((c, k) => {
      if (typeof c?.text !== 'string' || !Array.isArray(c.tokenIds) && !ArrayBuffer.isView(c.tokenIds)) throw bad(`expected {text, tokenIds, logprobs} for request ${i} completion ${k}, got ${JSON.stringify(c)?.slice(0, 80)}`);
      if (c.logprobs.length !== c.tokenIds.length) throw bad(`expected ${c.tokenIds.length} logprobs for request ${i} completion ${k}, got ${c.logprobs.length}`);
      for (let t = 0; t < c.logprobs.length; t++) {
        if (!Number.isFinite(c.logprobs[t])) throw bad(`expected finite logprobs, got ${c.logprobs[t]} at request ${i} completion ${k} token ${t}`);
      }
    });
  });
  return out;
}

/** Wrap a plugin failure in CORL_ERR_RUN_AGENT_FAILED (coded errors keep their code). */
export function agentFailure(agent: Agent | undefined, what: string, e: unknown): CorlError {
  if (isCorlError(e)) return e;
  const who = agent ? `agent ${agent.index} (${agent.name})` : 'the run';
  return new CorlError('CORL_ERR_RUN_AGENT_FAILED', `expected ${what} of ${who} to succeed, got ${(e as Error)?.message ?? String(e)}`, { cause: e });
}

/**
 * The problems of step `step`: an endless stream of epochs, each a permutation of the train split
 * seeded by (dataSeed, epoch). The same for every agent, and a pure function of the step, so a
 * resumed run sees exactly the problems an uninterrupted one does.
 */
export function batchAt(train: readonly Problem[], step: number, batchSize: number, dataSeed: number): Problem[] {
  const out: Problem[] = [];
  const n = train.length;
  let pos = step * batchSize;
  let epoch = -1;
  let order: Problem[] = [];
  while (out.length < batchSize) {
    const e = Math.floor(pos / n);
    if (e !== epoch) { epoch = e; order = new Rng(mixSeed(dataSeed, 'data', e)).shuffle(train); }
    out.push(order[pos % n]!);
    pos++;
  }
  return out;
}
