import type { AdvantageEstimator } from '../contracts/advantage-estimator';
import type { AnswerExtractor } from '../contracts/answer-extractor';
import type { Completion } from '../contracts/completion';
import type { DiversityStrategy } from '../contracts/diversity-strategy';
import type { Equivalence } from '../contracts/equivalence';
import type { Interaction } from '../contracts/interaction';
import type { MetricsSink } from '../contracts/metrics-sink';
import type { Policy, SampleRequest, SamplingOptions } from '../contracts/policy';
import type { Problem } from '../contracts/problem';
import type { RewardSource } from '../contracts/reward-source';
import type { TaskData } from '../contracts/task';
import type { Topology } from '../contracts/topology';
import type { LoadedConfig } from '../config/load';
import { CorlError, errorLine, isCorlError } from '../errors';
import { createRunPlugins } from '../config/run-plugins';
import { chatDiscussionPrompt, chatEvaluationPrompt } from '../discussion/prompts';
import { mixSeed, Rng } from '../util/rng';
import type { DiscussionFormat } from './discussion';
import { NO_INTERACTION } from './no-interaction';

/** One member of the cohort (the agents of a run): its policy and seed. */
export interface Agent {
  readonly index: number;
  readonly name: string;
  /** seed + index: initialization and sampling seeds derive from it. */
  readonly seed: number;
  readonly policy: Policy;
}

/**
 * The run context: everything a run needs, built from a loaded config (the cohort of agents, the data,
 * the plugins and the task's prompt formats). Not to be confused with the cohort, which is `agents`.
 */
export interface RunContext {
  readonly loaded: LoadedConfig;
  readonly data: TaskData;
  readonly agents: readonly Agent[];
  readonly topology: Topology;
  readonly reward: RewardSource;
  readonly diversity: DiversityStrategy;
  readonly extractor: AnswerExtractor;
  /** The equivalence of rewards, votes and answer keys; it is never handed a reference. */
  readonly equivalence: Equivalence;
  /** Another instance of the same equivalence, for grading against references (metrics, evaluation). */
  readonly grading: Equivalence;
  readonly advantage: AdvantageEstimator;
  /** The interaction protocol: agents discuss each problem for its rounds (`NO_INTERACTION`, zero rounds, when the config has none). */
  readonly interaction: Interaction;
  /** `neighbours[a]`: whose previous turns agent `a` reads in a discussion round (the topology's supervisors). */
  readonly neighbours: readonly (readonly number[])[];
  /** The task's discussion prompt format (the chat default when the task has none). */
  readonly discussionPrompt: DiscussionFormat;
  /**
   * The task's evaluation prompt format for `evaluate` rounds, as a discussion format of one turn:
   * `Task.evaluationPrompt`, else its discussion prompt with that turn, else the chat default.
   */
  readonly evaluationPrompt: DiscussionFormat;
  readonly sinks: readonly MetricsSink[];
  /** Release every plugin that holds threads, sessions or processes, and dispose their containers. */
  close(): Promise<void>;
}

/**
 * Instantiate the plugins of a config (see `createRunPlugins`: each in its own container, ground
 * truth only for a reward source that declares it). The trainer keeps the ground truth for its
 * monitoring; reward sources get `RewardContext.reference` only when they declare `readsGroundTruth`.
 */
export async function buildRunContext(loaded: LoadedConfig): Promise<RunContext> {
  const p = await createRunPlugins(loaded, 'training');
  const agents: Agent[] = loaded.config.agents.map((a, i) => ({
    index: i,
    name: a.name,
    seed: loaded.config.seed + i,
    policy: p.policies[i]!,
  }));
  const N = agents.length;
  const neighbours = agents.map((a) => Object.freeze([...p.topology.supervisors(a.index, N)]));
  if (p.interaction) {
    try {
      p.interaction.validate(N, neighbours);
    } catch (e) {
      await p.close();
      throw e;
    }
  }
  const task = p.task;
  const discussionPrompt: DiscussionFormat = task?.discussionPrompt
    ? (prompt, turns) => task.discussionPrompt!(prompt, turns)
    : chatDiscussionPrompt;
  const evaluationPrompt: DiscussionFormat = (prompt, turns) =>
    task?.evaluationPrompt
      ? task.evaluationPrompt(prompt, turns[0]!)
      : task?.discussionPrompt
        ? task.discussionPrompt(prompt, turns)
        : chatEvaluationPrompt(prompt, turns[0]!);
  return {
    loaded,
    data: p.data!,
    agents,
    topology: p.topology,
    reward: p.reward,
    diversity: p.diversity!,
    extractor: p.extractor,
    equivalence: p.equivalence,
    grading: p.grading!,
    advantage: p.advantage!,
    interaction: p.interaction ?? NO_INTERACTION,
    neighbours,
    discussionPrompt,
    evaluationPrompt,
    sinks: p.sinks,
    close: p.close,
  };
}

/** The sampling settings of the trainer's config: every round of a step and the judge's samples use them. */
export function trainSampling(ctx: Pick<RunContext, 'loaded'>): Omit<SamplingOptions, 'n' | 'seed'> {
  const tc = ctx.loaded.config.trainer;
  return {
    temperature: tc.sampling.temperature,
    topP: tc.sampling.topP,
    maxTokens: tc.sampling.maxTokens,
    stop: tc.sampling.stop,
    tokenStats: ctx.loaded.tokenStats,
  };
}

/** Sample from one agent and check the policy kept its contract (aligned, equal lengths, finite log-probabilities). */
export async function sampleChecked(
  agent: Agent,
  requests: readonly SampleRequest[],
  options: SamplingOptions,
  what: string,
): Promise<Completion[][]> {
  let out: Completion[][];
  try {
    out = await agent.policy.sample(requests, options);
  } catch (e) {
    throw agentFailure(agent, what, e);
  }
  const bad = (msg: string): CorlError =>
    new CorlError('CORL_ERR_POLICY_OUTPUT', msg, { where: `agents[${agent.index}] (${agent.name}) ${what}` });
  if (!Array.isArray(out) || out.length !== requests.length)
    throw bad(`expected ${requests.length} completion groups, got ${Array.isArray(out) ? out.length : typeof out}`);
  out.forEach((group, i) => {
    if (!Array.isArray(group) || group.length !== options.n)
      throw bad(
        `expected ${options.n} completions for request ${i}, got ${Array.isArray(group) ? group.length : typeof group}`,
      );
    group.forEach((c, k) => {
      if (typeof c?.text !== 'string' || (!Array.isArray(c.tokenIds) && !ArrayBuffer.isView(c.tokenIds)))
        throw bad(
          `expected {text, tokenIds, logprobs} for request ${i} completion ${k}, got ${JSON.stringify(c)?.slice(0, 80)}`,
        );
      if (c.logprobs.length !== c.tokenIds.length)
        throw bad(`expected ${c.tokenIds.length} logprobs for request ${i} completion ${k}, got ${c.logprobs.length}`);
      for (let t = 0; t < c.logprobs.length; t++) {
        if (!Number.isFinite(c.logprobs[t]))
          throw bad(`expected finite logprobs, got ${c.logprobs[t]} at request ${i} completion ${k} token ${t}`);
      }
    });
  });
  return out;
}

/** Wrap a plugin failure in CORL_ERR_RUN_AGENT_FAILED (coded errors keep their code). */
export function agentFailure(agent: Agent | undefined, what: string, e: unknown): CorlError {
  if (isCorlError(e)) return e;
  const who = agent ? `agent ${agent.index} (${agent.name})` : 'the run';
  return new CorlError('CORL_ERR_RUN_AGENT_FAILED', `expected ${what} of ${who} to succeed, got ${errorLine(e)}`, {
    cause: e,
  });
}

/**
 * The problems of step `step`: an endless stream of epochs, each a permutation of the train split
 * seeded by (dataSeed, epoch). The same for every agent, and a pure function of the step, so a
 * resumed run sees exactly the problems an uninterrupted one does.
 */
export function batchAt(train: readonly Problem[], step: number, batchSize: number, dataSeed: number): Problem[] {
  return epochBatch(train, step, batchSize, (epoch) => mixSeed(dataSeed, 'data', epoch));
}

/**
 * Batch `step` of an endless stream of epochs over `items`, epoch e a permutation seeded by
 * `seedOf(e)`: a pure function of the step (training batches, `corl pretrain`'s texts).
 */
export function epochBatch<T>(
  items: readonly T[],
  step: number,
  batchSize: number,
  seedOf: (epoch: number) => number,
): T[] {
  const out: T[] = [];
  const n = items.length;
  let pos = step * batchSize;
  let epoch = -1;
  let order: T[] = [];
  while (out.length < batchSize) {
    const e = Math.floor(pos / n);
    if (e !== epoch) {
      epoch = e;
      order = new Rng(seedOf(e)).shuffle(items);
    }
    out.push(order[pos % n]!);
    pos++;
  }
  return out;
}
