// An interaction's own judgement of a step's discussions (CoMAS, docs/algorithms/comas.md): the record of
// every turn as text, and tools that lend the judge answer equality and samples of the cohort's own policies.
import type { DiscussionRecord, Judgement } from '../contracts/interaction';
import type { JudgeSample, JudgeTools } from '../contracts/judge';
import type { Problem } from '../contracts/problem';
import { CorlError } from '../errors';
import type { RewardPipeline } from '../reward/pipeline';
import { deepFreeze } from '../contracts/frozen';
import { mixSeed } from '../util/rng';
import { agentFailure, sampleChecked, trainSampling, type RunContext } from './run-context';
import type { StepBatch } from './step';
import type { StepTable } from './step-table';

/**
 * The interaction's judgement of every problem's discussion, `[problem]`, when it judges (its
 * `judge`); undefined when it does not. The judge's samples are seeded by (agent seed, "judge", step,
 * problem, call) and never trained on. No reference reaches it.
 */
export async function judgeStep(
  ctx: RunContext,
  pipeline: RewardPipeline,
  batch: StepBatch,
  table: StepTable,
): Promise<Judgement[] | undefined> {
  const judge = ctx.interaction.judge?.bind(ctx.interaction);
  if (!judge) return undefined;
  const out: Judgement[] = [];
  for (const [i, p] of batch.problems.entries()) {
    const calls = { made: 0 };
    let judgement: Judgement;
    try {
      judgement = await judge(record(batch, table, i), tools(ctx, pipeline, batch, i, calls));
    } catch (e) {
      throw agentFailure(undefined, `the judging of problem "${p.id}" at step ${batch.step + 1}`, e);
    }
    checkJudgement(judgement, table, p, interactionName(ctx));
    out.push(judgement);
  }
  return out;
}

/** The interaction's name in the config, for messages. */
function interactionName(ctx: RunContext): string {
  return ctx.loaded.config.interaction?.use ?? 'none';
}

/** Problem i's discussion as text: `turns[round][agent][debate]`. */
function record(batch: StepBatch, table: StepTable, i: number): DiscussionRecord {
  const p = table.problemOf({ problem: i });
  return deepFreeze({
    problem: p.id,
    prompt: p.prompt,
    step: batch.step,
    agents: table.agents,
    debates: table.samples,
    turns: Array.from({ length: table.rounds }, (_, round) =>
      Array.from({ length: table.agents }, (_, a) =>
        table.group(a, round, i).rows.map((row) => ({
          prompt: row.prompt,
          text: row.completion.text,
          answer: row.answer,
          key: row.key,
        })),
      ),
    ),
  });
}

/** What the judge of problem i may use: answer equality, and samples of the cohort's policies on their own views. */
function tools(
  ctx: RunContext,
  pipeline: RewardPipeline,
  batch: StepBatch,
  i: number,
  calls: { made: number },
): JudgeTools {
  const N = ctx.agents.length;
  const p = batch.problems[i];
  return Object.freeze({
    agents: N,
    equal: (x: string, y: string) => ctx.equivalence.equal(x, y),
    sample: async (agent: number, n: number): Promise<JudgeSample[]> => {
      const a = ctx.agents[agent];
      const view = batch.views[agent]?.[i];
      if (!a || !view || !p || !Number.isInteger(n) || n < 1)
        throw new CorlError(
          'CORL_ERR_INTERACTION_OUTPUT',
          `expected "${interactionName(ctx)}" to ask for n ≥ 1 samples of an agent 0..${N - 1}, got ${n} of agent ${agent}`,
          { where: 'interaction' },
        );
      const what = `judge sampling of problem "${p.id}" at step ${batch.step + 1}`;
      const sampled = await sampleChecked(
        a,
        [view],
        { n, ...trainSampling(ctx), seed: mixSeed(a.seed, 'judge', batch.step, i, calls.made++) },
        what,
      );
      const texts = (sampled[0] ?? []).map((c) => c.text);
      const { answers, keys } = await pipeline.answers(p, texts, `the ${what} of agent ${a.index} (${a.name})`);
      return texts.map((text, k) => ({ text, answer: answers[k] ?? null, key: keys[k] ?? null }));
    },
  });
}

/** A judgement must be `quality[rounds][agents][debates]` in [0, 1] or null, with whole counts. */
function checkJudgement(j: Judgement, table: StepTable, p: Problem, use: string): void {
  const q: unknown = j?.quality;
  const ok =
    Array.isArray(q) &&
    q.length === table.rounds &&
    q.every(
      (row) =>
        Array.isArray(row) &&
        row.length === table.agents &&
        row.every(
          (g) =>
            Array.isArray(g) &&
            g.length === table.samples &&
            g.every((v) => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1)),
        ),
    ) &&
    [j.calls, j.samples].every((c) => Number.isInteger(c) && c >= 0);
  if (!ok)
    throw new CorlError(
      'CORL_ERR_INTERACTION_OUTPUT',
      `expected "${use}" to judge problem "${p.id}" with quality[${table.rounds} rounds][${table.agents} agents][${table.samples} debates] in [0, 1] or null, and whole counts of calls and samples, got another shape or value`,
      { where: 'interaction' },
    );
}
