// One training step (docs/architecture.md, "One training step"): the step's table (step-table.ts) filled
// phase by phase. Every round samples, keys and scores; round 0 answers alone, rounds 1..R of the
// run's interaction discuss (a run without one has the null interaction: no rounds, identity credit);
// then credit, advantages, updates, metrics and rollouts, the same way whatever the interaction.
import type { Judgement } from '../contracts/interaction';
import type { LossOptions, SampleRequest, TrainingSample, UpdateResult } from '../contracts/policy';
import type { Problem } from '../contracts/problem';
import { CorlError } from '../errors';
import type { Grader } from '../reward/grade';
import type { CompletionInput } from '../reward/context';
import type { RewardPipeline } from '../reward/pipeline';
import { deepFreeze } from '../contracts/frozen';
import { mixSeed } from '../util/rng';
import { agentFailure, batchAt, sampleChecked, trainSampling, type RunContext } from './run-context';
import { discussionRound, discussionSetup } from './discussion';
import { finiteMean } from '../util/mean';
import { judgeStep } from './judging';
import type { MetricsWriter } from './metrics-writer';
import type { RunDirectory } from './run-dir';
import { StepTable, trainedRows, type StepGroup, type StepRow } from './step-table';
import { stepMetrics } from './step-metrics';

/** What every step of a run uses: the run context, its reward pipeline, its grader and where records go. */
export interface StepRun {
  readonly ctx: RunContext;
  readonly pipeline: RewardPipeline;
  /** The run's grader (core/reward/grade.ts): monitoring against references, never a reward. */
  readonly grader: Grader;
  readonly run: RunDirectory;
  readonly metrics: MetricsWriter;
}

/** One step's problems, each agent's phrasing of them (agent → problem), and whether its agents discuss. */
export interface StepBatch {
  readonly step: number;
  readonly problems: readonly Problem[];
  readonly views: readonly (readonly SampleRequest[])[];
  /** Rounds after round 0 (the interaction's; 0 without one). */
  readonly rounds: number;
}

/** What a step reports to the loop: progress figures and the time of its phases. */
export interface StepPhase {
  reward: number;
  labelAccuracy: number;
  ms: { sampleMs: number; rewardMs: number; updateMs: number };
}

/** Train every agent one step. */
export async function trainStep(r: StepRun, step: number): Promise<StepPhase> {
  const { ctx } = r;
  const { config } = ctx.loaded;
  const N = ctx.agents.length;
  const t0 = performance.now();
  // 1. Batch and 2. views (docs/architecture.md numbers the phases of one step 1–9, as here).
  const problems = batchAt(ctx.data.train, step, config.trainer.batchSize, config.dataSeed);
  const views = ctx.agents.map((a) => problems.map((p) => ({ ...ctx.diversity.view(p, a.index, N), id: p.id })));
  const batch: StepBatch = { step, problems, views, rounds: ctx.interaction.rounds };
  const table = new StepTable(problems, N, config.trainer.groupSize);
  let sampleMs = 0;
  // 3–5. Round by round: sampling, answer keys (all that agents share), the reward source's scores.
  for (let round = 0; round <= batch.rounds; round++) {
    const ts = performance.now();
    await sampleRound(ctx, batch, table);
    sampleMs += performance.now() - ts;
    await keyRound(r.pipeline, batch, table, round);
    await scoreRound(r, batch, table, round);
  }
  // 6. Credit: each turn's reward, the interaction's credit of the scores, after its own judgement when it judges.
  const judged = await judgeStep(ctx, r.pipeline, batch, table);
  creditStep(ctx, table, judged);
  const t2 = performance.now();
  // 7. Advantages, one group per agent, round and problem; 8. every agent's update, concurrently.
  advantageStep(ctx, table);
  const updates = await updateStep(ctx, step, table);
  const t3 = performance.now();
  // 9. Metrics (ground truth for monitoring only) and rollouts.
  let rewardSum = 0;
  const labelAccs: number[] = [];
  for (const a of ctx.agents) {
    const m = await stepMetrics(r, batch, table, a.index, updates[a.index] ?? { metrics: {} }, judged);
    rewardSum += m['reward/mean'] ?? 0;
    if (m['label/accuracy'] !== undefined) labelAccs.push(m['label/accuracy']);
    await r.metrics.write({ step: step + 1, agent: a.index, phase: 'train', metrics: m });
    if (config.trainer.saveRollouts) saveRollouts(r.run, batch, table, a.index, config.trainer.trainSamples);
  }
  return {
    reward: rewardSum / N,
    labelAccuracy: labelAccs.length ? finiteMean(labelAccs, 0) : NaN,
    ms: { sampleMs, rewardMs: t2 - t0 - sampleMs, updateMs: t3 - t2 },
  };
}

/** A round as messages name it: update k + 1 is the one after step k (docs/architecture.md, Glossary: step). */
function roundOf(batch: StepBatch, round: number): string {
  return round === 0 ? `in update ${batch.step + 1}` : `round ${round} in update ${batch.step + 1}`;
}

/**
 * The table's next round. Round 0: every agent samples K completions per problem from its own view,
 * seeded by (agent seed, "train", step). Round r ≥ 1: debate k of every agent reads the turns the
 * interaction names (by default its neighbours' debate k of round r − 1), one sample each.
 */
async function sampleRound(ctx: RunContext, batch: StepBatch, table: StepTable): Promise<void> {
  const { step, problems, views } = batch;
  const K = table.samples;
  const round = table.rounds;
  if (round === 0) {
    const sampled = await Promise.all(
      ctx.agents.map((a) =>
        sampleChecked(
          a,
          views[a.index] ?? [],
          { n: K, ...trainSampling(ctx), seed: mixSeed(a.seed, 'train', step) },
          `sampling for update ${step + 1}`,
        ),
      ),
    );
    table.addRound(
      (a, i) => viewOf(batch, a, i).prompt,
      (a, i, k) => cell(sampled, a, i, k),
    );
    return;
  }
  const what = roundOf(batch, round);
  const { prompts, completions } = await discussionRound(discussionSetup(ctx), {
    round,
    problems,
    debates: K,
    request: (a, i) => viewOf(batch, a, i),
    earlier: (t, a, i, k) => {
      const row = rowOf(table.group(a, t, i), k);
      return { text: row.completion.text, answer: row.answer };
    },
    sampling: trainSampling(ctx),
    seed: (a) => mixSeed(a.seed, 'train', step, 'round', round),
    where: (a, p, k) => `agents[${a.index}] debate ${k} of problem "${p.id}", ${what}`,
    what: `sampling ${what}`,
  });
  table.addRound(
    (a, i, k) => cell(prompts, a, i, k),
    (a, i, k) => cell(completions, a, i, k),
  );
}

/** Agent `a`'s view of problem `i`. */
function viewOf(batch: StepBatch, a: number, i: number): SampleRequest {
  const v = batch.views[a]?.[i];
  if (!v) throw new RangeError(`no view of problem ${i} for agent ${a}`);
  return v;
}

/** Entry [a][i][k] of a nested table (what a call returned per agent, problem and sample); a missing one is a RangeError. */
function cell<T>(per: readonly (readonly (readonly T[])[])[], a: number, i: number, k: number): T {
  const v = per[a]?.[i]?.[k];
  if (v === undefined) throw new RangeError(`no entry [${a}][${i}][${k}]`);
  return v;
}

/** Row k of a group. */
function rowOf(g: StepGroup, k: number): StepRow {
  const row = g.rows[k];
  if (!row) throw new RangeError(`no sample ${k} in the group of agent ${g.agent}, problem ${g.problem}`);
  return row;
}

/** The answers and voting keys of a round's rows, through the reward pipeline, agent by agent. */
async function keyRound(pipeline: RewardPipeline, batch: StepBatch, table: StepTable, round: number): Promise<void> {
  for (const g of table.roundGroups(round)) {
    const p = table.problemOf(g);
    const texts = g.rows.map((row) => row.completion.text);
    const what = `problem "${p.id}" of agent ${g.agent} ${roundOf(batch, round)}`;
    const { answers, keys } = await pipeline.answers(p, texts, what);
    g.rows.forEach((row, k) => {
      row.answer = answers[k] ?? null;
      row.key = keys[k] ?? null;
    });
  }
}

/**
 * The reward source's score of a round's groups, agent by agent, problem by problem: each agent's own
 * keys and its supervisors' keys of the same round (the reference only for a source that reads it).
 */
async function scoreRound(r: StepRun, batch: StepBatch, table: StepTable, round: number): Promise<void> {
  const { ctx, pipeline } = r;
  const N = ctx.agents.length;
  const supervisorsOf = ctx.agents.map((a) => ctx.topology.supervisors(a.index, N));
  const groups = [...table.roundGroups(round)];
  const whats = groups.map((g) => `problem "${table.problemOf(g).id}" of agent ${g.agent} ${roundOf(batch, round)}`);
  // The whole round in one go: a source with scoreMany (a reward in another process) gets every group at once.
  const scored = await pipeline.scoreMany(
    groups.map((g) => {
      const p = table.problemOf(g);
      const reference = ctx.loaded.readsGroundTruth ? ctx.data.groundTruth.get(p.id) : undefined;
      return {
        problem: p,
        prompt: viewOf(batch, g.agent, g.problem).prompt,
        ...(batch.rounds > 0 ? { round } : {}),
        agent: g.agent,
        agents: N,
        step: batch.step,
        totalSteps: ctx.loaded.config.trainer.steps,
        completions: g.rows.map((row) => completionInput(row)),
        answers: g.rows.map((row) => row.answer),
        keys: g.rows.map((row) => row.key),
        supervisors: (supervisorsOf[g.agent] ?? []).map((m) => ({
          agent: m,
          keys: table.group(m, round, g.problem).rows.map((row) => row.key),
        })),
        ...(reference !== undefined ? { reference } : {}),
      };
    }),
    whats,
    `the groups ${roundOf(batch, round)}`,
  );
  groups.forEach((g, i) => {
    const s = scored[i]!;
    g.scored = s;
    g.rows.forEach((row, k) => {
      row.score = s.rewards[k] ?? NaN;
    });
  });
}

/** A row's completion as the reward pipeline reads it. */
function completionInput(row: StepRow): CompletionInput {
  const c = row.completion;
  return {
    text: c.text,
    length: c.tokenIds.length,
    tokenIds: c.tokenIds,
    finishReason: c.finishReason,
    ...(c.entropies ? { entropies: c.entropies } : {}),
    ...(c.meanLogprobs ? { meanLogprobs: c.meanLogprobs } : {}),
  };
}

/**
 * Each turn's reward from the interaction's `credit` of the scores, problem by problem (the null
 * interaction's credit is the identity), checked for shape and finiteness.
 */
function creditStep(ctx: RunContext, table: StepTable, judged: readonly Judgement[] | undefined): void {
  const N = table.agents;
  const K = table.samples;
  const turns = table.rounds;
  const use = ctx.loaded.config.interaction?.use ?? 'none';
  table.problems.forEach((p, i) => {
    const groups = table.problemGroups(i);
    const scores = Array.from({ length: turns }, (_, round) =>
      groups.filter((g) => g.round === round).map((g) => g.rows.map((row) => row.score)),
    );
    const judgement = judged?.[i];
    const rewards: unknown = ctx.interaction.credit(
      deepFreeze({
        agents: N,
        turns,
        debates: K,
        scores,
        neighbours: ctx.neighbours,
        ...(judgement ? { judged: judgement } : {}),
      }),
    );
    if (!isShaped(rewards, turns, N, K))
      throw new CorlError(
        'CORL_ERR_INTERACTION_OUTPUT',
        `expected "${use}" to credit problem "${p.id}" with finite rewards[${turns} rounds][${N} agents][${K} debates], got another shape or a non-finite value`,
        { where: 'interaction' },
      );
    for (const g of groups) g.rows.forEach((row, k) => (row.reward = cell(rewards, g.round, g.agent, k)));
  });
}

/** Whether a value is a finite `[turns][agents][debates]` array of numbers. */
function isShaped(v: unknown, turns: number, N: number, K: number): v is number[][][] {
  return (
    Array.isArray(v) &&
    v.length === turns &&
    v.every(
      (row) =>
        Array.isArray(row) &&
        row.length === N &&
        row.every(
          (g) => Array.isArray(g) && g.length === K && g.every((x) => typeof x === 'number' && Number.isFinite(x)),
        ),
    )
  );
}

/**
 * Each agent's advantages from the advantage plugin over the trained rows of its groups (round by
 * round, problem by problem), checked; a vote-only row (beyond `trainSamples`) gets advantage 0.
 */
function advantageStep(ctx: RunContext, table: StepTable): void {
  for (const a of ctx.agents) {
    const groups = table.agentGroups(a.index);
    for (const g of groups) for (const row of g.rows) row.advantage = 0;
    const rewards = groups.map((g) => trainedRows(g, ctx.loaded.config.trainer.trainSamples).map((row) => row.reward));
    const adv: unknown = ctx.advantage.estimate(rewards);
    const ok =
      Array.isArray(adv) &&
      adv.length === groups.length &&
      adv.every(
        (g: unknown, i) =>
          Array.isArray(g) && g.length === rewards[i]?.length && g.every((v: unknown) => Number.isFinite(v)),
      );
    if (!ok)
      throw new CorlError(
        'CORL_ERR_GRPO_SHAPE',
        `expected one finite advantage per reward from "${ctx.loaded.config.advantage.use}", got a different shape or a non-finite value`,
        { where: 'advantage' },
      );
    groups.forEach((g, i) =>
      trainedRows(g, ctx.loaded.config.trainer.trainSamples).forEach(
        (row, k) => (row.advantage = cell([adv as number[][]], 0, i, k)),
      ),
    );
  }
}

/** Every agent updates its own policy on its trained rows of every round (trainer.epochs passes), concurrently. */
function updateStep(ctx: RunContext, step: number, table: StepTable): Promise<UpdateResult[]> {
  const tc = ctx.loaded.config.trainer;
  const loss: LossOptions = { ...tc.loss, maxCompletionLength: tc.sampling.maxTokens };
  return Promise.all(
    ctx.agents.map(async (a) => {
      const samples: TrainingSample[] = table.agentGroups(a.index).flatMap((g) =>
        trainedRows(g, ctx.loaded.config.trainer.trainSamples).map((row) => ({
          prompt: row.prompt,
          completion: row.completion,
          advantage: row.advantage,
        })),
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
        throw agentFailure(a, `update ${step + 1}`, e);
      }
      return last;
    }),
  );
}

/**
 * One agent's rollouts of the step, group by group (round by round in a discussion): the prompt of its
 * view, the label, and per completion its text, key, reward and advantage (in a discussion also the
 * prompt it was sampled from and the verifier's score; with `trainSamples`, `trained: false` on the
 * vote-only completions).
 */
function saveRollouts(run: RunDirectory, batch: StepBatch, table: StepTable, agent: number, trained: number): void {
  const discussion = batch.rounds > 0;
  for (const g of table.agentGroups(agent)) {
    run.appendRollout({
      step: batch.step + 1,
      agent: g.agent,
      index: g.problem,
      ...(discussion ? { round: g.round } : {}),
      id: table.problemOf(g).id,
      prompt: viewOf(batch, g.agent, g.problem).prompt,
      label: g.scored?.label ?? null,
      completions: g.rows.map((row) => ({
        ...(discussion ? { prompt: row.prompt, score: row.score } : {}),
        text: row.completion.text,
        key: row.key,
        reward: row.reward,
        advantage: row.advantage,
        ...(trained > 0 && row.sample >= trained ? { trained: false } : {}),
      })),
    });
  }
}
