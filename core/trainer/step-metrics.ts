// One agent's train record of a step (docs/reference/metrics.md, "Training"): the reward and label
// metrics of the reward pipeline (core/reward/metrics.ts) over its groups, graded against references for
// monitoring only, then the samples' accuracy, the completions, the source's and the update's metrics;
// per round in a discussion, and the judge's budget when the interaction judges.
import type { Judgement } from '../contracts/interaction';
import type { UpdateResult } from '../contracts/policy';
import { gradeGroup, labelStats, rewardStats, sourceStats, type GroupGrade } from '../reward/metrics';
import type { ScoredGroup } from '../reward/pipeline';
import { finiteMean } from '../util/mean';
import type { StepBatch, StepRun } from './step';
import { trainedRows, type StepGroup, type StepTable } from './step-table';

/** Agent `agent`'s metrics of the step, pooled over its groups of every round. */
export async function stepMetrics(
  r: StepRun,
  batch: StepBatch,
  table: StepTable,
  agent: number,
  update: UpdateResult,
  judged: readonly Judgement[] | undefined,
): Promise<Record<string, number>> {
  // With trainer.trainSamples (vote-on-more), rewards, advantages and completions are those of the
  // trained rows; the label (and label/*) is the vote over all of a group's samples.
  const trained = r.ctx.loaded.config.trainer.trainSamples;
  const groups = table.agentGroups(agent).map((g) => ({ ...g, rows: trainedRows(g, trained) }));
  const credited = groups.map(creditedResult);
  const rows = groups.flatMap((g) => g.rows);
  const m: Record<string, number> = rewardStats(credited);
  m['advantage/abs_mean'] = finiteMean(
    rows.map((row) => Math.abs(row.advantage)),
    0,
  );
  Object.assign(m, labelStats(credited, await grades(r, table, groups, credited)));
  // Accuracy of the training samples themselves (monitoring).
  const right: number[] = [];
  for (const g of groups) right.push(...(await rightAnswers(r, table, g)));
  if (right.length) m['train/accuracy'] = finiteMean(right, 0);
  m['completion/mean_length'] = finiteMean(
    rows.map((row) => row.completion.tokenIds.length),
    0,
  );
  m['completion/answered_fraction'] = finiteMean(
    rows.map((row) => (row.key === null ? 0 : 1)),
    0,
  );
  m['completion/truncated_fraction'] = finiteMean(
    rows.map((row) => (row.completion.finishReason === 'length' ? 1 : 0)),
    0,
  );
  Object.assign(m, sourceStats(credited));
  for (const [k, v] of Object.entries(update.metrics)) if (Number.isFinite(v)) m[k] = v;
  // Per round, when the agents discussed.
  if (batch.rounds > 0) Object.assign(m, await roundMetrics(r, table, agent));
  if (judged) Object.assign(m, judgeMetrics(judged));
  if (trained > 0) {
    m['group/voted_samples'] = table.samples;
    m['group/trained_samples'] = trained;
  }
  return m;
}

/** A group as its metrics read it: the reward source's result with the credited rewards. */
function creditedResult(g: StepGroup): ScoredGroup {
  return { ...(g.scored ?? { metrics: {} }), rewards: g.rows.map((row) => row.reward) };
}

/** What ground truth says of each group with a label (label right, category, rewards right); undefined for the others. */
async function grades(
  r: StepRun,
  table: StepTable,
  groups: readonly StepGroup[],
  credited: readonly ScoredGroup[],
): Promise<(GroupGrade | undefined)[]> {
  const out: (GroupGrade | undefined)[] = [];
  for (const [j, g] of groups.entries()) {
    const result = credited[j];
    if (!result || result.label === undefined) {
      out.push(undefined);
      continue;
    }
    const p = table.problemOf(g);
    const category = typeof p.metadata?.category === 'string' ? p.metadata.category : undefined;
    const target = r.grader.target(p.id);
    const keys = g.rows.map((row) => row.key);
    out.push(await gradeGroup(result, keys, target, category, r.grader.equivalence));
  }
  return out;
}

/** 1/0 per row of a group: its key matches the reference key (none when the problem has no reference). */
async function rightAnswers(r: StepRun, table: StepTable, g: StepGroup): Promise<number[]> {
  const id = table.problemOf(g).id;
  if (r.grader.target(id) === null) return [];
  const right: number[] = [];
  for (const row of g.rows) right.push((await r.grader.right(row.key, id)) ? 1 : 0);
  return right;
}

/** Per round r: the turns' accuracy against the reference and the verifier's mean score (monitoring). */
async function roundMetrics(r: StepRun, table: StepTable, agent: number): Promise<Record<string, number>> {
  const m: Record<string, number> = {};
  for (let round = 0; round < table.rounds; round++) {
    const groups = table.agentGroups(agent).filter((g) => g.round === round);
    const right: number[] = [];
    for (const g of groups) right.push(...(await rightAnswers(r, table, g)));
    if (right.length) m[`train/round${round}/accuracy`] = finiteMean(right, 0);
    m[`reward/round${round}/score_mean`] = finiteMean(
      groups.flatMap((g) => g.rows.map((row) => row.score)),
      0,
    );
  }
  return m;
}

/** The step's judge budget and verdicts, summed over its problems (the same on every agent's record). */
function judgeMetrics(judged: readonly Judgement[]): Record<string, number> {
  const quality = judged.flatMap((j) => j.quality.flat(2)).filter((v) => v !== null);
  return {
    'judge/calls': judged.reduce((s, j) => s + j.calls, 0),
    'judge/samples': judged.reduce((s, j) => s + j.samples, 0),
    'judge/verdicts': quality.length,
    ...(quality.length ? { 'judge/quality_mean': finiteMean(quality as number[], 0) } : {}),
  };
}
