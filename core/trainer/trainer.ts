// The cohort loop: sample, answer keys, rewards against the topology's supervisors, advantages, updates, metrics
// (docs/architecture.md, "One training step"). What a step leaves behind goes through the writers:
// metrics-writer.ts, checkpoint-writer.ts and timing-writer.ts.
import type { Completion } from '../contracts/completion';
import type { DiscussionRecord, Judgement } from '../contracts/interaction';
import type { JudgeSample, JudgeTools } from '../contracts/judge';
import type { LossOptions, SampleRequest, TrainingSample, UpdateResult } from '../contracts/policy';
import type { Problem } from '../contracts/problem';
import type { AgentAnswers, CompletionView, RewardContext, RewardResult } from '../contracts/reward-source';
import type { LoadedConfig } from '../config/load';
import { CorlError } from '../errors';
import { deepFreeze } from '../util/fs';
import { mixSeed } from '../util/rng';
import { AnswerKeys } from './answer-keys';
import { turnPrompt, turnsRead } from './discussion';
import { agentFailure, batchAt, buildCohort, sampleChecked, type Agent, type Cohort } from './cohort';
import { evaluateCohort, gradingKeys, mean } from './evaluate';
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
  /** Whether a reward source was trained on labels although it read none (a learned verifier). */
  readonly trainedOnLabels: boolean;
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
    await writers.metrics.start({
      dir: run.dir,
      config: loaded.config,
      agents: cohort.agents.map((a) => a.name),
      resumeAt: options.resume ? state.nextStep : null,
    });
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
  const grades = gradingKeys(cohort);
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
    trainedOnLabels: cohort.loaded.trainedOnLabels,
    agents: outcomes(cohort, run),
  };
}

interface StepPhase {
  reward: number;
  labelAccuracy: number;
  ms: { sampleMs: number; rewardMs: number; updateMs: number };
}

/** One round of a step: every agent's K completions per problem, their keys, prompts and verifier results. */
interface Round {
  /** `completions[a][i][k]`. */
  readonly completions: Completion[][][];
  /** `answerKeys[a][i][k]`. */
  readonly answerKeys: (string | null)[][][];
  /** `prompts[a][i][k]`: the prompt each completion was sampled from. */
  readonly prompts: string[][][];
  /** `results[a][i]`: the reward source's result (in a discussion, the verifier's scores). */
  readonly results: RewardResult[][];
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
  const interaction = cohort.interaction;
  const problems = batchAt(cohort.data.train, step, config.trainer.batchSize, config.dataSeed);
  const t0 = performance.now();
  // 1. Every agent samples K completions per problem, in its own phrasing and with its own seed.
  const views = cohort.agents.map((a) => problems.map((p) => ({ ...cohort.diversity.view(p, a.index, N), id: p.id })));
  const batch: StepBatch = { step, problems, views };
  const completions = await sampleCohort(cohort, views, step);
  let sampleMs = performance.now() - t0;
  // 2. Answer keys, once per completion; they are all that agents share.
  const what0 = `at step ${step + 1}`;
  const keys0 = await answerKeysOf(cohort, keys, batch, completions, what0);
  // 3. Rewards against the topology's supervisors (in a discussion, the verifier's score of each turn).
  const rounds: Round[] = [
    {
      completions,
      answerKeys: keys0,
      prompts: views.map((row, a) => row.map((v, i) => completions[a]![i]!.map(() => v.prompt))),
      results: await rewardCohort(cohort, keys, batch, completions, keys0, interaction ? 0 : undefined, what0),
    },
  ];
  // Discussion rounds: debate k of agent a reads its neighbours' turns of debate k in the round before.
  for (let r = 1; interaction && r <= interaction.rounds; r++) {
    const tr = performance.now();
    const what = `round ${r} at step ${step + 1}`;
    const { prompts, completions: cs } = await discussionRound(cohort, keys, batch, rounds, r);
    sampleMs += performance.now() - tr;
    const ks = await answerKeysOf(cohort, keys, batch, cs, what);
    rounds.push({
      completions: cs,
      answerKeys: ks,
      prompts,
      results: await rewardCohort(cohort, keys, batch, cs, ks, r, what),
    });
  }
  // An interaction that judges turns itself (CoMAS) does so now, problem by problem, label-free.
  const judged = interaction?.judge ? await judgeCohort(cohort, keys, batch, rounds) : undefined;
  // In a discussion the interaction turns the verifier's scores into each turn's reward.
  const credited: RewardResult[][][] = interaction ? credit(cohort, rounds, problems, judged) : [rounds[0]!.results];
  const t2 = performance.now();
  // 4. Advantages (one group per agent, problem and round) and 5. updates, every agent concurrently.
  const advantages = advantagesOf(cohort, credited);
  const updates = await updateCohort(cohort, step, rounds, advantages);
  const t3 = performance.now();
  // 6. Metrics (ground truth is used here for monitoring only) and rollouts.
  let rewardSum = 0;
  const labelAccs: number[] = [];
  const allProblems = rounds.flatMap(() => problems);
  for (const a of cohort.agents) {
    const results = credited.flatMap((round) => round[a.index]!);
    const m = await stepMetrics(cohort, grades, {
      problems: allProblems,
      completions: perAgent(rounds, (round) => round.completions, a.index),
      answerKeys: perAgent(rounds, (round) => round.answerKeys, a.index),
      results,
      advantages: advantages[a.index]!,
      update: updates[a.index]!,
    });
    if (interaction) Object.assign(m, await roundMetrics(cohort, grades, problems, rounds, a.index));
    if (judged) Object.assign(m, judgeMetrics(judged));
    rewardSum += m['reward/mean']!;
    if (m['label/accuracy'] !== undefined) labelAccs.push(m['label/accuracy']);
    await metrics.write({ step: step + 1, agent: a.index, phase: 'train', metrics: m });
    if (config.trainer.saveRollouts)
      saveRollouts(run, batch, rounds, a.index, results, advantages[a.index]!, !!interaction);
  }
  return {
    reward: rewardSum / N,
    labelAccuracy: labelAccs.length ? mean(labelAccs) : NaN,
    ms: { sampleMs, rewardMs: t2 - t0 - sampleMs, updateMs: t3 - t2 },
  };
}

/** One step's problems and each agent's phrasing of them (agent → problem). */
interface StepBatch {
  readonly step: number;
  readonly problems: readonly Problem[];
  readonly views: readonly (readonly SampleRequest[])[];
}

/** Per agent, a per-round table flattened round by round: problem slot j = round · B + i. */
function perAgent<T>(rounds: readonly Round[], pick: (round: Round) => T[][][], agent: number): T[][] {
  return rounds.flatMap((round) => pick(round)[agent]!);
}

/** The sampling settings of the trainer's config, shared by every round. */
function samplingOf(cohort: Cohort) {
  const tc = cohort.loaded.config.trainer;
  return {
    temperature: tc.sampling.temperature,
    topP: tc.sampling.topP,
    maxTokens: tc.sampling.maxTokens,
    stop: tc.sampling.stop,
    tokenStats: cohort.loaded.tokenStats,
  };
}

/** Every agent's K completions per problem, sampled concurrently with the agent's seed for the step. */
function sampleCohort(cohort: Cohort, views: readonly SampleRequest[][], step: number): Promise<Completion[][][]> {
  const tc = cohort.loaded.config.trainer;
  return Promise.all(
    cohort.agents.map((a) =>
      sampleChecked(
        a,
        views[a.index]!,
        { n: tc.groupSize, ...samplingOf(cohort), seed: mixSeed(a.seed, 'train', step) },
        `sampling at step ${step + 1}`,
      ),
    ),
  );
}

/**
 * Round r of a discussion: each debate's prompt carries the earlier turns of the same debate the
 * interaction names (by default the neighbours' turns of round r − 1), in the format of the round's
 * kind (discussion or evaluation); one sample each.
 */
async function discussionRound(
  cohort: Cohort,
  keys: AnswerKeys,
  batch: StepBatch,
  rounds: readonly Round[],
  r: number,
): Promise<{ prompts: string[][][]; completions: Completion[][][] }> {
  const interaction = cohort.interaction!;
  const use = cohort.loaded.config.interaction!.use;
  const { step, problems, views } = batch;
  const tc = cohort.loaded.config.trainer;
  const K = tc.groupSize;
  const what = `round ${r} at step ${step + 1}`;
  const formats = { discussion: cohort.discussionPrompt, evaluation: cohort.evaluationPrompt };
  const prompts = cohort.agents.map((a) => {
    const window = a.policy.contextWindow?.();
    const refs = turnsRead(interaction, r, a.index, cohort.neighbours, use);
    return problems.map((p, i) =>
      Array.from({ length: K }, (_, k) =>
        turnPrompt(
          interaction,
          formats,
          views[a.index]![i]!.prompt,
          refs.map((t) => {
            const text = rounds[t.round]!.completions[t.agent]![i]![k]!.text;
            return { agent: t.agent, answer: keys.of(text).answer, text };
          }),
          r,
          {
            window,
            maxTokens: tc.sampling.maxTokens,
            where: `agents[${a.index}] debate ${k} of problem "${p.id}", ${what}`,
          },
        ),
      ),
    );
  });
  const sampled = await Promise.all(
    cohort.agents.map((a) =>
      sampleChecked(
        a,
        problems.flatMap((_, i) => prompts[a.index]![i]!.map((prompt) => ({ ...views[a.index]![i]!, prompt }))),
        { n: 1, ...samplingOf(cohort), seed: mixSeed(a.seed, 'train', step, 'round', r) },
        `sampling ${what}`,
      ),
    ),
  );
  const completions = sampled.map((flat) => problems.map((_, i) => flat.slice(i * K, (i + 1) * K).map((g) => g[0]!)));
  return { prompts, completions };
}

/**
 * The interaction's own judgement of every problem's discussion (CoMAS), `[problem]`: the record of
 * every turn as text, and tools that lend the judge answer equality and samples of the cohort's own
 * policies (seeded by agent, step, problem and call; never trained on). No reference reaches it.
 */
async function judgeCohort(
  cohort: Cohort,
  keys: AnswerKeys,
  batch: StepBatch,
  rounds: readonly Round[],
): Promise<Judgement[]> {
  const interaction = cohort.interaction!;
  const use = cohort.loaded.config.interaction!.use;
  const { step, problems, views } = batch;
  const N = cohort.agents.length;
  const K = rounds[0]!.completions[0]![0]!.length;
  const out: Judgement[] = [];
  for (const [i, p] of problems.entries()) {
    let calls = 0;
    const record: DiscussionRecord = deepFreeze({
      problem: p.id,
      prompt: p.prompt,
      step,
      agents: N,
      debates: K,
      turns: rounds.map((round) =>
        round.completions.map((row, a) =>
          row[i]!.map((c, k) => ({
            prompt: round.prompts[a]![i]![k]!,
            text: c.text,
            answer: keys.of(c.text).answer,
            key: round.answerKeys[a]![i]![k] ?? null,
          })),
        ),
      ),
    });
    const tools: JudgeTools = Object.freeze({
      agents: N,
      equal: (x: string, y: string) => cohort.equivalence.equal(x, y),
      sample: async (agent: number, n: number): Promise<JudgeSample[]> => {
        const a = cohort.agents[agent];
        if (!a || !Number.isInteger(n) || n < 1)
          throw new CorlError(
            'CORL_ERR_INTERACTION_OUTPUT',
            `expected "${use}" to ask for n ≥ 1 samples of an agent 0..${N - 1}, got ${n} of agent ${agent}`,
            { where: 'interaction' },
          );
        const what = `judge sampling of problem "${p.id}" at step ${step + 1}`;
        const [group] = await sampleChecked(
          a,
          [views[agent]![i]!],
          { n, ...samplingOf(cohort), seed: mixSeed(a.seed, 'judge', step, i, calls++) },
          what,
        );
        const texts = group!.map((c) => c.text);
        let ks: (string | null)[];
        try {
          ks = await keys.forReward(p, texts);
        } catch (e) {
          throw agentFailure(a, `answer keys of ${what}`, e);
        }
        return texts.map((text, k) => ({ text, answer: keys.of(text).answer, key: ks[k] ?? null }));
      },
    });
    let judgement: Judgement;
    try {
      judgement = await interaction.judge!(record, tools);
    } catch (e) {
      throw agentFailure(undefined, `the judging of problem "${p.id}" at step ${step + 1}`, e);
    }
    checkJudgement(judgement, rounds.length, N, K, p, use);
    out.push(judgement);
  }
  return out;
}

function checkJudgement(j: Judgement, turns: number, N: number, K: number, p: Problem, use: string): void {
  const q = j?.quality;
  const ok =
    Array.isArray(q) &&
    q.length === turns &&
    q.every(
      (row) =>
        Array.isArray(row) &&
        row.length === N &&
        row.every(
          (g) =>
            Array.isArray(g) &&
            g.length === K &&
            g.every((v) => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1)),
        ),
    ) &&
    [j.calls, j.samples].every((c) => Number.isInteger(c) && c >= 0);
  if (!ok)
    throw new CorlError(
      'CORL_ERR_INTERACTION_OUTPUT',
      `expected "${use}" to judge problem "${p.id}" with quality[${turns} rounds][${N} agents][${K} debates] in [0, 1] or null, and whole counts of calls and samples, got another shape or value`,
      { where: 'interaction' },
    );
}

/** The step's judge budget and verdicts, summed over its problems (the same on every agent's record). */
function judgeMetrics(judged: readonly Judgement[]): Record<string, number> {
  const quality = judged.flatMap((j) => j.quality.flat(2)).filter((v) => v !== null);
  return {
    'judge/calls': judged.reduce((s, j) => s + j.calls, 0),
    'judge/samples': judged.reduce((s, j) => s + j.samples, 0),
    'judge/verdicts': quality.length,
    ...(quality.length ? { 'judge/quality_mean': mean(quality as number[]) } : {}),
  };
}

/** The answer key of every completion (agent → problem → K). */
async function answerKeysOf(
  cohort: Cohort,
  keys: AnswerKeys,
  batch: StepBatch,
  completions: readonly (readonly (readonly Completion[])[])[],
  what: string,
): Promise<(string | null)[][][]> {
  const answerKeys: (string | null)[][][] = [];
  for (const a of cohort.agents) {
    const perProblem: (string | null)[][] = [];
    for (const [i, p] of batch.problems.entries()) {
      try {
        perProblem.push(
          await keys.forReward(
            p,
            completions[a.index]![i]!.map((c) => c.text),
          ),
        );
      } catch (e) {
        throw agentFailure(a, `answer keys ${what}`, e);
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
  completions: readonly (readonly (readonly Completion[])[])[],
  answerKeys: readonly (readonly (readonly (string | null)[])[])[],
  round: number | undefined,
  what: string,
): Promise<RewardResult[][]> {
  const { supervised } = cohort.loaded;
  const { step, problems, views } = batch;
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
        ...(round !== undefined ? { round } : {}),
        agent: a.index,
        agents: N,
        step,
        completions: group.map((c, k) => view(c, keys.of(c.text).answer, own.keys[k] ?? null)),
        own,
        supervisors: supervisors.map((m) => ({ agent: m, keys: [...answerKeys[m]![i]!] })),
        // A source that reads references compares answers with them through the grading equivalence.
        equivalence: supervised ? cohort.grading : cohort.equivalence,
        ...(supervised ? { reference: cohort.data.groundTruth.get(problem.id) } : {}),
      });
      let result: RewardResult;
      try {
        result = await cohort.reward.score(ctx);
      } catch (e) {
        throw agentFailure(a, `reward ${what}`, e);
      }
      checkRewards(result, group.length, a, problem);
      row.push(result);
    }
    results.push(row);
  }
  return results;
}

/** Each agent's advantages per problem and round from the advantage plugin, checked for shape and finiteness. */
function advantagesOf(cohort: Cohort, credited: readonly (readonly RewardResult[][])[]): number[][][] {
  return cohort.agents.map((a) => {
    const groups = credited.flatMap((round) => round[a.index]!.map((r) => r.rewards));
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

/** Every agent updates its own policy on its own samples of every round (trainer.epochs passes), concurrently. */
function updateCohort(
  cohort: Cohort,
  step: number,
  rounds: readonly Round[],
  advantages: readonly (readonly (readonly number[])[])[],
): Promise<UpdateResult[]> {
  const tc = cohort.loaded.config.trainer;
  const loss: LossOptions = { ...tc.loss, maxCompletionLength: tc.sampling.maxTokens };
  return Promise.all(
    cohort.agents.map(async (a) => {
      const samples: TrainingSample[] = [];
      const cs = perAgent(rounds, (round) => round.completions, a.index);
      const ps = perAgent(rounds, (round) => round.prompts, a.index);
      cs.forEach((group, j) =>
        group.forEach((c, k) => {
          samples.push({ prompt: ps[j]![k]!, completion: c, advantage: advantages[a.index]![j]![k]! });
        }),
      );
      let last: UpdateResult = { metrics: {} };
      try {
        for (let e = 0; e < tc.epochs; e++)
          last = await a.policy.update({
            samples,
            loss,
            temperature: tc.sampling.temperature,
            step,
            totalSteps: tc.steps,
          });
      } catch (e) {
        throw agentFailure(a, `the update at step ${step + 1}`, e);
      }
      return last;
    }),
  );
}

/** One agent's rollouts of the step, round by round (prompt, label, and per completion its text, key, reward, advantage). */
function saveRollouts(
  run: RunDirectory,
  batch: StepBatch,
  rounds: readonly Round[],
  agent: number,
  results: readonly RewardResult[],
  advantages: readonly (readonly number[])[],
  discussion: boolean,
): void {
  const B = batch.problems.length;
  rounds.forEach((round, r) =>
    batch.problems.forEach((p, i) => {
      const j = r * B + i;
      run.appendRollout({
        step: batch.step + 1,
        agent,
        index: i,
        ...(discussion ? { round: r } : {}),
        id: p.id,
        prompt: batch.views[agent]![i]!.prompt,
        label: results[j]!.label ?? null,
        completions: round.completions[agent]![i]!.map((c, k) => ({
          ...(discussion ? { prompt: round.prompts[agent]![i]![k]!, score: round.results[agent]![i]!.rewards[k] } : {}),
          text: c.text,
          key: round.answerKeys[agent]![i]![k],
          reward: results[j]!.rewards[k],
          advantage: advantages[j]![k],
        })),
      });
    }),
  );
}

/** Each turn's reward from the interaction's credit of the verifier's scores, problem by problem: `[round][agent][problem]`. */
function credit(
  cohort: Cohort,
  rounds: readonly Round[],
  problems: readonly Problem[],
  judged?: readonly Judgement[],
): RewardResult[][][] {
  const interaction = cohort.interaction!;
  const N = cohort.agents.length;
  const K = rounds[0]!.completions[0]![0]!.length;
  const out: RewardResult[][][] = rounds.map((round) => round.results.map((row) => row.map((x) => ({ ...x }))));
  for (const [i, p] of problems.entries()) {
    const scores = rounds.map((round) => round.results.map((row) => [...row[i]!.rewards]));
    const rewards = interaction.credit(
      deepFreeze({
        agents: N,
        turns: rounds.length,
        debates: K,
        scores,
        neighbours: cohort.neighbours,
        ...(judged ? { judged: judged[i]! } : {}),
      }),
    );
    checkCredit(rewards, rounds.length, N, K, p, cohort.loaded.config.interaction!.use);
    rounds.forEach((_, r) =>
      cohort.agents.forEach((a) => {
        out[r]![a.index]![i] = { ...out[r]![a.index]![i]!, rewards: rewards[r]![a.index]! };
      }),
    );
  }
  return out;
}

function checkCredit(rewards: unknown, turns: number, N: number, K: number, p: Problem, use: string): void {
  const ok =
    Array.isArray(rewards) &&
    rewards.length === turns &&
    rewards.every(
      (row) =>
        Array.isArray(row) &&
        row.length === N &&
        row.every(
          (g) => Array.isArray(g) && g.length === K && g.every((v) => typeof v === 'number' && Number.isFinite(v)),
        ),
    );
  if (!ok)
    throw new CorlError(
      'CORL_ERR_INTERACTION_OUTPUT',
      `expected "${use}" to credit problem "${p.id}" with finite rewards[${turns} rounds][${N} agents][${K} debates], got another shape or a non-finite value`,
      { where: 'interaction' },
    );
}

/** Per round r: the turns' accuracy against the reference and the verifier's mean score (monitoring). */
async function roundMetrics(
  cohort: Cohort,
  grades: AnswerKeys,
  problems: readonly Problem[],
  rounds: readonly Round[],
  agent: number,
): Promise<Record<string, number>> {
  const m: Record<string, number> = {};
  for (const [r, round] of rounds.entries()) {
    const right: number[] = [];
    for (const [i, p] of problems.entries()) {
      const target = grades.referenceKey(p.id, cohort.data.groundTruth);
      if (target === null) continue;
      for (const key of round.answerKeys[agent]![i]!)
        right.push(key !== null && (key === target || (await cohort.grading.equal(key, target))) ? 1 : 0);
    }
    if (right.length) m[`train/round${r}/accuracy`] = mean(right);
    m[`reward/round${r}/score_mean`] = mean(round.results[agent]!.flatMap((x) => [...x.rewards]));
  }
  return m;
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

/** One agent's step, problem slot by problem slot (round by round in a discussion), as its metrics read it. */
interface AgentStep {
  readonly problems: readonly Problem[];
  readonly completions: readonly Completion[][];
  readonly answerKeys: readonly (readonly (string | null)[])[];
  readonly results: readonly RewardResult[];
  readonly advantages: readonly (readonly number[])[];
  readonly update: UpdateResult;
}

async function stepMetrics(cohort: Cohort, grades: AnswerKeys, step: AgentStep): Promise<Record<string, number>> {
  const { problems, completions, answerKeys, results, advantages, update } = step;
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
