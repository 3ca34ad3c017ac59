// The cohort loop: sample, answer keys, rewards against the topology's supervisors, advantages, updates, metrics
// (docs/architecture.md, "One training step"). What a step leaves behind goes through the writers:
// metrics-writer.ts, checkpoint-writer.ts and timing-writer.ts.
import type { Completion } from '../contracts/completion';
import type { LossOptions, SampleRequest, TrainingSample, UpdateResult } from '../contracts/policy';
import type { Problem } from '../contracts/problem';
import type { AgentAnswers, CompletionView, RewardContext, RewardResult } from '../contracts/reward-source';
import type { LoadedConfig } from '../config/load';
import { CorlError } from '../errors';
import { deepFreeze } from '../util/fs';
import { mixSeed } from '../util/rng';
import { AnswerKeys } from './answer-keys';
import { agentFailure, batchAt, buildCohort, sampleChecked, type Agent, type Cohort } from './cohort';
import { evaluateCohort, mean } from './evaluate';
import { NoProgress, type ProgressReporter } from './progress';
import { CheckpointWriter } from './checkpoint-writer';
import { MetricsWriter } from './metrics-writer';
import { RunDirectory, type RunState } from './run-dir';
import { TimingWriter } from './timing-writer';

/** How to run {@link train}. */
export interface TrainOptions {
  /** The run directory: a new one, or the one being resumed. */
  readonly run: RunDirectory;
  /** Continue from the run's last checkpoint instead of starting fresh. */
  readonly resume?: boolean;
  /** Where progress goes (default: nowhere). */
  readonly progress?: ProgressReporter;
  /** Polled between steps; when it returns true the run checkpoints and stops (resumable). */
  readonly shouldStop?: () => boolean;
}

/** Held-out accuracy of one agent before and after. */
export interface AgentOutcome {
  readonly name: string;
  readonly family: string;
  /** pass@1 of the base policy (step 0), if evaluated. */
  readonly base?: number;
  /** pass@1 at the last evaluation. */
  readonly final?: number;
  /** Step of the last evaluation. */
  readonly finalStep?: number;
}

/** What a finished (or stopped) run reports. */
export interface TrainResult {
  readonly runDir: string;
  /** Steps completed in total. */
  readonly steps: number;
  /** True when `shouldStop` ended the run before its last step. */
  readonly stopped: boolean;
  /** Whether a reward source read ground truth. */
  readonly supervised: boolean;
  readonly agents: readonly AgentOutcome[];
}

/**
 * Train a cohort: every agent sees the same problems in the same order, samples with its own seed,
 * is rewarded by the reward source against the topology's supervisors, and updates its own policy.
 * Metrics go to metrics.jsonl (and the config's sinks); checkpoints are atomic; a resumed run
 * produces exactly the metrics of an uninterrupted one.
 */
export async function train(loaded: LoadedConfig, options: TrainOptions): Promise<TrainResult> {
  const progress = options.progress ?? new NoProgress();
  const run = options.run;
  const cohort = await buildCohort(loaded);
  try {
    if (loaded.config.trainer.steps > 0) {
      for (const a of cohort.agents) {
        if (!a.policy.describe().canTrain) {
          throw new CorlError(
            'CORL_ERR_POLICY_CANNOT_TRAIN',
            `expected a trainable policy for agent ${a.index} (${a.name}) because trainer.steps = ${loaded.config.trainer.steps}, got "${loaded.config.agents[a.index]!.policy.use}", which only samples`,
            {
              where: `agents[${a.index}].policy`,
            },
          );
        }
      }
    }
    const state: RunState = run.state();
    const checkpoints = new CheckpointWriter(cohort, run, loaded.config.trainer.keepCheckpoints);
    if (options.resume) {
      run.truncateTo(state);
      await checkpoints.restore(state);
    } else if (state.nextStep !== 0) {
      throw new CorlError('CORL_ERR_RUN_EXISTS', `expected a fresh run directory, got one at step ${state.nextStep}`, {
        where: run.dir,
      });
    }
    const writers: Writers = {
      metrics: new MetricsWriter(run, cohort.sinks),
      checkpoints,
      timing: new TimingWriter(run.dir),
    };
    return await loop(cohort, run, state, options, progress, writers);
  } finally {
    progress.stop();
    await cohort.close();
  }
}

/** Where a run's outputs go besides the policies: metrics, checkpoints, step timings. */
interface Writers {
  readonly metrics: MetricsWriter;
  readonly checkpoints: CheckpointWriter;
  readonly timing: TimingWriter;
}

async function loop(
  cohort: Cohort,
  run: RunDirectory,
  state: RunState,
  options: TrainOptions,
  progress: ProgressReporter,
  writers: Writers,
): Promise<TrainResult> {
  const { config } = cohort.loaded;
  const T = config.trainer.steps;
  const keys = new AnswerKeys(cohort.extractor, cohort.equivalence, cohort.reward);
  // Grading against references goes through a separate equivalence instance: the one whose keys
  // and verdicts reach reward sources never sees a reference.
  const grades = new AnswerKeys(cohort.extractor, cohort.grading);
  const lastEval: number[] = cohort.agents.map(() => NaN);
  const evaluate = async (stepsDone: number): Promise<void> => {
    const t = performance.now();
    const result = await evaluateCohort(cohort, grades, stepsDone);
    for (const r of result.records) await writers.metrics.write(r);
    await run.writeEval(`step-${String(stepsDone).padStart(6, '0')}.jsonl`, result.rows);
    result.accuracy.forEach((a, i) => {
      lastEval[i] = a;
    });
    progress.note(
      `eval @ step ${stepsDone}: ${cohort.agents.map((a) => `${a.name} ${(result.accuracy[a.index]! * 100).toFixed(1)}%`).join(', ')} (${((performance.now() - t) / 1000).toFixed(1)} s)`,
    );
  };
  const every = (n: number, stepsDone: number) => n > 0 && stepsDone % n === 0;

  if (state.nextStep === 0 && config.eval.atStart && cohort.data.heldOut.length > 0) await evaluate(0);

  progress.start(T, state.nextStep, config.name);
  let stopped = false;
  for (let step = state.nextStep; step < T; step++) {
    const t0 = performance.now();
    const phase = await trainStep(cohort, keys, grades, step, run, writers.metrics);
    const stepsDone = step + 1;
    const tEval = performance.now();
    if ((stepsDone === T || every(config.trainer.evalEvery, stepsDone)) && cohort.data.heldOut.length > 0)
      await evaluate(stepsDone);
    const tCkpt = performance.now();
    stopped = stepsDone < T && options.shouldStop?.() === true;
    if (stopped || stepsDone === T || every(config.trainer.checkpointEvery, stepsDone))
      state = await writers.checkpoints.write(stepsDone, stepsDone === T);
    const tEnd = performance.now();
    writers.timing.write({
      step: stepsDone,
      ...phase.ms,
      evalMs: tCkpt - tEval,
      checkpointMs: tEnd - tCkpt,
      totalMs: tEnd - t0,
    });
    progress.step({
      step: stepsDone,
      total: T,
      reward: phase.reward,
      labelAccuracy: phase.labelAccuracy,
      evalAccuracy: lastEval,
      stepMs: tEnd - t0,
    });
    if (stopped) {
      progress.note(`stopped after step ${stepsDone}; continue with: corl train --resume ${run.dir}`);
      break;
    }
  }
  if (T === 0 || state.nextStep >= T) state = await writers.checkpoints.finish(state);
  return {
    runDir: run.dir,
    steps: stopped ? state.nextStep : Math.max(state.nextStep, T),
    stopped,
    supervised: cohort.loaded.supervised,
    agents: outcomes(cohort, run),
  };
}

interface StepPhase {
  reward: number;
  labelAccuracy: number;
  ms: { sampleMs: number; rewardMs: number; updateMs: number };
}

async function trainStep(
  cohort: Cohort,
  keys: AnswerKeys,
  grades: AnswerKeys,
  step: number,
  run: RunDirectory,
  metrics: MetricsWriter,
): Promise<StepPhase> {
  const { config } = cohort.loaded;
  const N = cohort.agents.length;
  const problems = batchAt(cohort.data.train, step, config.trainer.batchSize, config.dataSeed);
  const t0 = performance.now();
  // 1. Every agent samples K completions per problem, in its own phrasing and with its own seed.
  const views = cohort.agents.map((a) => problems.map((p) => ({ ...cohort.diversity.view(p, a.index, N), id: p.id })));
  const completions = await sampleCohort(cohort, views, step);
  const t1 = performance.now();
  const batch: StepBatch = { step, problems, views, completions };
  // 2. Answer keys, once per completion; they are all that agents share.
  const answerKeys = await answerKeysOf(cohort, keys, batch);
  // 3. Rewards against the topology's supervisors.
  const results = await rewardCohort(cohort, keys, batch, answerKeys);
  const t2 = performance.now();
  // 4. Advantages and 5. updates, every agent concurrently.
  const advantages = advantagesOf(cohort, results);
  const updates = await updateCohort(cohort, batch, advantages);
  const t3 = performance.now();
  // 6. Metrics (ground truth is used here for monitoring only) and rollouts.
  let rewardSum = 0;
  const labelAccs: number[] = [];
  for (const a of cohort.agents) {
    const m = await stepMetrics(
      cohort,
      grades,
      problems,
      completions[a.index]!,
      answerKeys[a.index]!,
      results[a.index]!,
      advantages[a.index]!,
      updates[a.index]!,
    );
    rewardSum += m['reward/mean']!;
    if (m['label/accuracy'] !== undefined) labelAccs.push(m['label/accuracy']);
    await metrics.write({ step: step + 1, agent: a.index, phase: 'train', metrics: m });
    if (config.trainer.saveRollouts)
      saveRollouts(run, batch, a.index, answerKeys[a.index]!, results[a.index]!, advantages[a.index]!);
  }
  return {
    reward: rewardSum / N,
    labelAccuracy: labelAccs.length ? mean(labelAccs) : NaN,
    ms: { sampleMs: t1 - t0, rewardMs: t2 - t1, updateMs: t3 - t2 },
  };
}

/** One step's problems, each agent's phrasing of them and its completions (agent → problem → K). */
interface StepBatch {
  readonly step: number;
  readonly problems: readonly Problem[];
  readonly views: readonly (readonly SampleRequest[])[];
  readonly completions: readonly Completion[][][];
}

/** Every agent's K completions per problem, sampled concurrently with the agent's seed for the step. */
function sampleCohort(cohort: Cohort, views: readonly SampleRequest[][], step: number): Promise<Completion[][][]> {
  const { tokenStats } = cohort.loaded;
  const tc = cohort.loaded.config.trainer;
  return Promise.all(
    cohort.agents.map((a) =>
      sampleChecked(
        a,
        views[a.index]!,
        {
          n: tc.groupSize,
          temperature: tc.sampling.temperature,
          topP: tc.sampling.topP,
          maxTokens: tc.sampling.maxTokens,
          stop: tc.sampling.stop,
          seed: mixSeed(a.seed, 'train', step),
          tokenStats,
        },
        `sampling at step ${step + 1}`,
      ),
    ),
  );
}

/** The answer key of every completion (agent → problem → K). */
async function answerKeysOf(cohort: Cohort, keys: AnswerKeys, batch: StepBatch): Promise<(string | null)[][][]> {
  const answerKeys: (string | null)[][][] = [];
  for (const a of cohort.agents) {
    const perProblem: (string | null)[][] = [];
    for (const [i, p] of batch.problems.entries()) {
      try {
        perProblem.push(
          await keys.forReward(
            p,
            batch.completions[a.index]![i]!.map((c) => c.text),
          ),
        );
      } catch (e) {
        throw agentFailure(a, `answer keys at step ${batch.step + 1}`, e);
      }
    }
    answerKeys.push(perProblem);
  }
  return answerKeys;
}

/** Each agent's rewards per problem, from a frozen context of copies: its own keys and its supervisors'. */
async function rewardCohort(
  cohort: Cohort,
  keys: AnswerKeys,
  batch: StepBatch,
  answerKeys: readonly (readonly (readonly (string | null)[])[])[],
): Promise<RewardResult[][]> {
  const { supervised } = cohort.loaded;
  const { step, problems, views, completions } = batch;
  const N = cohort.agents.length;
  const results: RewardResult[][] = [];
  for (const a of cohort.agents) {
    const supervisors = cohort.topology.supervisors(a.index, N);
    const row: RewardResult[] = [];
    for (const [i, problem] of problems.entries()) {
      const group = completions[a.index]![i]!;
      const own: AgentAnswers = { agent: a.index, keys: [...answerKeys[a.index]![i]!] };
      // Frozen, and built of copies: a reward source can change nothing the run (or the next source) uses.
      const ctx: RewardContext = deepFreeze({
        problem,
        prompt: views[a.index]![i]!.prompt,
        agent: a.index,
        agents: N,
        step,
        completions: group.map((c, k) => view(c, keys.of(c.text).answer, own.keys[k] ?? null)),
        own,
        supervisors: supervisors.map((m) => ({ agent: m, keys: [...answerKeys[m]![i]!] })),
        equivalence: cohort.equivalence,
        ...(supervised ? { reference: cohort.data.groundTruth.get(problem.id) } : {}),
      });
      let result: RewardResult;
      try {
        result = await cohort.reward.score(ctx);
      } catch (e) {
        throw agentFailure(a, `reward at step ${step + 1}`, e);
      }
      checkRewards(result, group.length, a, problem);
      row.push(result);
    }
    results.push(row);
  }
  return results;
}

/** Each agent's advantages per problem from the advantage plugin, checked for shape and finiteness. */
function advantagesOf(cohort: Cohort, results: readonly RewardResult[][]): number[][][] {
  return cohort.agents.map((a) => {
    const groups = results[a.index]!.map((r) => r.rewards);
    const adv = cohort.advantage.estimate(groups);
    if (
      adv.length !== groups.length ||
      adv.some((g, i) => g.length !== groups[i]!.length || g.some((v) => !Number.isFinite(v)))
    ) {
      throw new CorlError(
        'CORL_ERR_GRPO_SHAPE',
        `expected one finite advantage per reward from "${cohort.loaded.config.advantage.use}", got a different shape or a non-finite value`,
        { where: 'advantage' },
      );
    }
    return adv;
  });
}

/** Every agent updates its own policy on its own samples (trainer.epochs passes), concurrently. */
function updateCohort(
  cohort: Cohort,
  batch: StepBatch,
  advantages: readonly (readonly (readonly number[])[])[],
): Promise<UpdateResult[]> {
  const tc = cohort.loaded.config.trainer;
  const loss: LossOptions = { ...tc.loss, maxCompletionLength: tc.sampling.maxTokens };
  return Promise.all(
    cohort.agents.map(async (a) => {
      const samples: TrainingSample[] = [];
      batch.problems.forEach((_, i) =>
        batch.completions[a.index]![i]!.forEach((c, k) => {
          samples.push({
            prompt: batch.views[a.index]![i]!.prompt,
            completion: c,
            advantage: advantages[a.index]![i]![k]!,
          });
        }),
      );
      let last: UpdateResult = { metrics: {} };
      try {
        for (let e = 0; e < tc.epochs; e++)
          last = await a.policy.update({
            samples,
            loss,
            temperature: tc.sampling.temperature,
            step: batch.step,
            totalSteps: tc.steps,
          });
      } catch (e) {
        throw agentFailure(a, `the update at step ${batch.step + 1}`, e);
      }
      return last;
    }),
  );
}

/** One agent's rollouts of the step (prompt, label, and per completion its text, key, reward, advantage). */
function saveRollouts(
  run: RunDirectory,
  batch: StepBatch,
  agent: number,
  answerKeys: readonly (readonly (string | null)[])[],
  results: readonly RewardResult[],
  advantages: readonly (readonly number[])[],
): void {
  batch.problems.forEach((p, i) =>
    run.appendRollout({
      step: batch.step + 1,
      agent,
      index: i,
      id: p.id,
      prompt: batch.views[agent]![i]!.prompt,
      label: results[i]!.label ?? null,
      completions: batch.completions[agent]![i]!.map((c, k) => ({
        text: c.text,
        key: answerKeys[i]![k],
        reward: results[i]!.rewards[k],
        advantage: advantages[i]![k],
      })),
    }),
  );
}

function view(c: Completion, answer: string | null, key: string | null): CompletionView {
  return {
    text: c.text,
    answer,
    key,
    length: c.tokenIds.length,
    finishReason: c.finishReason,
    ...(c.entropies ? { entropies: Array.from(c.entropies) } : {}),
    ...(c.meanLogprobs ? { meanLogprobs: Array.from(c.meanLogprobs) } : {}),
  };
}

function checkRewards(result: RewardResult, k: number, agent: Agent, problem: Problem): void {
  const bad = !result || !Array.isArray(result.rewards) || result.rewards.length !== k;
  if (bad) {
    throw new CorlError(
      'CORL_ERR_REWARD_OUTPUT',
      `expected ${k} rewards for problem "${problem.id}", got ${
        Array.isArray(result)
          ? 'a bare array'
          : Array.isArray(result?.rewards)
            ? result.rewards.length
            : `rewards: ${typeof result?.rewards}`
      }`,
      {
        where: `agents[${agent.index}]`,
        ...(Array.isArray(result) ? { hint: 'score() returns { rewards: [...] }, one reward per completion' } : {}),
      },
    );
  }
  result.rewards.forEach((r, i) => {
    if (typeof r !== 'number' || !Number.isFinite(r)) {
      throw new CorlError(
        'CORL_ERR_REWARD_OUTPUT',
        `expected a finite reward for completion ${i} of problem "${problem.id}", got ${r}`,
        { where: `agents[${agent.index}]` },
      );
    }
  });
}

async function stepMetrics(
  cohort: Cohort,
  grades: AnswerKeys,
  problems: readonly Problem[],
  completions: readonly Completion[][],
  answerKeys: readonly (readonly (string | null)[])[],
  results: readonly RewardResult[],
  advantages: readonly (readonly number[])[],
  update: UpdateResult,
): Promise<Record<string, number>> {
  const eq = cohort.grading;
  const same = async (a: string | null | undefined, b: string | null | undefined): Promise<boolean> =>
    a != null && b != null && (a === b || (await eq.equal(a, b)));
  const rewards = results.flatMap((r) => [...r.rewards]);
  const m: Record<string, number> = {};
  m['reward/mean'] = mean(rewards);
  const mu = m['reward/mean'];
  m['reward/std'] =
    rewards.length > 1 ? Math.sqrt(rewards.reduce((s, r) => s + (r - mu) * (r - mu), 0) / (rewards.length - 1)) : 0;
  m['reward/frac_zero_std'] = mean(results.map((r) => (r.rewards.every((x) => x === r.rewards[0]) ? 1 : 0)));
  m['advantage/abs_mean'] = mean(advantages.flatMap((g) => g.map(Math.abs)));

  const labeled = results.filter((r) => r.label !== undefined);
  if (labeled.length) {
    m['label/labeled_fraction'] = mean(labeled.map((r) => (r.label !== null ? 1 : 0)));
    const accs: number[] = [];
    const agree: number[] = [];
    const rewardAcc: number[] = [];
    const byCategory: Record<string, number[]> = {};
    for (const [i, r] of results.entries()) {
      if (r.label === undefined) continue;
      const target = grades.referenceKey(problems[i]!.id, cohort.data.groundTruth);
      if (r.label !== null && target !== null) {
        const right = (await same(r.label, target)) ? 1 : 0;
        accs.push(right);
        // Per problem category (tasks that tag metadata.category): where do pseudo-labels go wrong?
        const category = problems[i]!.metadata?.category;
        if (typeof category === 'string') (byCategory[category] ??= []).push(right);
      }
      if (r.label !== null && r.ownLabel != null) agree.push((await same(r.label, r.ownLabel)) ? 1 : 0);
      if (target !== null && r.rewards.every((x) => x === 0 || x === 1)) {
        for (const [k, key] of answerKeys[i]!.entries())
          rewardAcc.push(((await same(key, target)) ? 1 : 0) === r.rewards[k] ? 1 : 0);
      }
    }
    if (accs.length) m['label/accuracy'] = mean(accs);
    for (const [category, v] of Object.entries(byCategory)) {
      m[`label/accuracy/${category}`] = mean(v);
      m[`label/count/${category}`] = v.length;
    }
    if (agree.length) m['label/peer_agreement'] = mean(agree);
    if (rewardAcc.length) m['reward/accuracy'] = mean(rewardAcc);
  }

  // Accuracy of the training samples themselves (monitoring).
  const right: number[] = [];
  for (const [i, p] of problems.entries()) {
    const target = grades.referenceKey(p.id, cohort.data.groundTruth);
    if (target === null) continue;
    for (const key of answerKeys[i]!) right.push((await same(key, target)) ? 1 : 0);
  }
  if (right.length) m['train/accuracy'] = mean(right);

  const all = completions.flat();
  m['completion/mean_length'] = mean(all.map((c) => c.tokenIds.length));
  m['completion/answered_fraction'] = mean(answerKeys.flat().map((k) => (k === null ? 0 : 1)));
  m['completion/truncated_fraction'] = mean(all.map((c) => (c.finishReason === 'length' ? 1 : 0)));

  // Extra metrics of the reward source: mean over the problems that report them.
  const extra = new Map<string, number[]>();
  for (const r of results)
    for (const [k, v] of Object.entries(r.metrics ?? {}))
      if (Number.isFinite(v)) (extra.get(k) ?? extra.set(k, []).get(k)!).push(v);
  for (const [k, vs] of extra) m[k] = mean(vs);
  for (const [k, v] of Object.entries(update.metrics)) if (Number.isFinite(v)) m[k] = v;
  return m;
}

function outcomes(cohort: Cohort, run: RunDirectory): AgentOutcome[] {
  const evals = run
    .readMetrics()
    .filter((r) => r.phase === 'eval' && r.agent !== null && r.metrics['eval/accuracy'] !== undefined);
  return cohort.agents.map((a) => {
    const mine = evals.filter((r) => r.agent === a.index);
    const base = mine.find((r) => r.step === 0)?.metrics['eval/accuracy'];
    const last = mine[mine.length - 1];
    return {
      name: a.name,
      family: a.policy.describe().family,
      base,
      final: last?.metrics['eval/accuracy'],
      finalStep: last?.step,
    };
  });
}
