import type { Equivalence } from '../contracts/equivalence';
import type { MetricsRecord } from '../contracts/metrics-sink';
import type { GroundTruth, Problem } from '../contracts/problem';
import type { EvalConfig } from '../config/types';
import { agreement } from '../metrics/agreement';
import { pluralityVote } from '../voting/plurality';
import { mixSeed } from '../util/rng';
import { sampleChecked, type Agent, type Cohort } from './cohort';
import { AnswerKeys } from './answer-keys';

/** One agent's answers to one held-out problem. */
export interface EvalRow {
  readonly agent: number;
  readonly id: string;
  /** Answer keys of its samples, in order. */
  readonly keys: readonly (string | null)[];
  /** Whether each sample is right. */
  readonly correct: readonly boolean[];
  /** Whether the majority of its samples is right. */
  readonly majCorrect: boolean;
  /** Mean completion length in tokens. */
  readonly meanLength: number;
}

/** The outcome of one evaluation of the whole cohort. */
export interface EvalResult {
  readonly rows: readonly EvalRow[];
  readonly records: readonly MetricsRecord[];
  /** pass@1 per agent. */
  readonly accuracy: readonly number[];
}

/** The held-out problems an evaluation uses: the first `maxProblems` (all when 0), in the task's order. */
export function evalProblems(heldOut: readonly Problem[], config: EvalConfig): readonly Problem[] {
  return config.maxProblems > 0 ? heldOut.slice(0, config.maxProblems) : heldOut;
}

/**
 * Evaluate every agent on the held-out problems against ground truth (monitoring only: nothing
 * here feeds a reward). pass@1 is the mean accuracy of the samples, maj@n the accuracy of their
 * plurality answer; between every pair of agents, κ/c/w/u of their first samples.
 */
export async function evaluateCohort(cohort: Cohort, keys: AnswerKeys, step: number): Promise<EvalResult> {
  const { config } = cohort.loaded;
  const ev = config.eval;
  const problems = evalProblems(cohort.data.heldOut, ev);
  const gt = cohort.data.groundTruth;
  if (problems.length === 0) return { rows: [], records: [], accuracy: cohort.agents.map(() => 0) };
  const perAgent = await Promise.all(cohort.agents.map((agent) => evaluateAgent(cohort, agent, problems, keys, gt)));
  const rows = perAgent.flat();
  const records: MetricsRecord[] = [];
  const accuracy: number[] = [];
  for (const agent of cohort.agents) {
    const mine = perAgent[agent.index]!;
    const pass1 = mean(mine.map((r) => mean(r.correct.map(Number))));
    accuracy.push(pass1);
    const metrics: Record<string, number> = {
      'eval/accuracy': pass1,
      'eval/answered_fraction': mean(mine.map((r) => mean(r.keys.map((k) => (k === null ? 0 : 1))))),
      'eval/mean_length': mean(mine.map((r) => r.meanLength)),
    };
    if (ev.samples > 1) metrics[`eval/maj@${ev.samples}`] = mean(mine.map((r) => Number(r.majCorrect)));
    records.push({ step, agent: agent.index, phase: 'eval', metrics });
  }
  if (ev.ensemble > 0) {
    // Budget-fair ensemble: the first `ensemble` samples of every agent, pooled into one plurality.
    let right = 0;
    for (let i = 0; i < problems.length; i++) {
      const pooled = perAgent.flatMap((rows) => rows[i]!.keys.slice(0, ev.ensemble));
      const vote = await pluralityVote(pooled, cohort.equivalence, 0);
      if (await sameKey(vote.label, keys.referenceKey(problems[i]!.id, gt), cohort.equivalence)) right++;
    }
    records.push({ step, agent: null, phase: 'eval', metrics: { [`ensemble/maj@${ev.ensemble * cohort.agents.length}`]: right / problems.length } });
  }
  for (let a = 0; a < cohort.agents.length; a++) {
    for (let b = a + 1; b < cohort.agents.length; b++) {
      const ra = perAgent[a]!;
      const rb = perAgent[b]!;
      const same: boolean[] = [];
      for (let i = 0; i < ra.length; i++) same.push(await sameKey(ra[i]!.keys[0] ?? null, rb[i]!.keys[0] ?? null, cohort.equivalence));
      const s = agreement(ra.map((r) => r.correct[0]!), rb.map((r) => r.correct[0]!), same);
      records.push({
        step,
        agent: null,
        phase: 'eval',
        metrics: {
          [`pair/${a}-${b}/kappa`]: s.kappa,
          [`pair/${a}-${b}/complementarity`]: s.complementarity,
          [`pair/${a}-${b}/same_wrong`]: s.sameWrong,
          [`pair/${a}-${b}/coverage`]: s.coverage,
        },
      });
    }
  }
  return { rows, records, accuracy };
}

async function evaluateAgent(cohort: Cohort, agent: Agent, problems: readonly Problem[], keys: AnswerKeys, gt: GroundTruth): Promise<EvalRow[]> {
  const ev = cohort.loaded.config.eval;
  // Every agent answers the canonical prompt: diversity strategies shape training inputs only, so
  // that all configs (and all agents of one) are scored on identical held-out questions.
  const requests = problems.map((p) => ({ id: p.id, prompt: p.prompt, images: p.images }));
  const completions = await sampleChecked(agent, requests, {
    n: ev.samples,
    temperature: ev.sampling.temperature,
    topP: ev.sampling.topP,
    maxTokens: ev.sampling.maxTokens,
    stop: ev.sampling.stop,
    seed: mixSeed(agent.seed, 'eval'),
  }, 'evaluation sampling');
  const rows: EvalRow[] = [];
  for (const [i, problem] of problems.entries()) {
    const group = completions[i]!;
    const ks = await keys.forCompletions(problem, group.map((c) => c.text));
    const target = keys.referenceKey(problem.id, gt);
    const correct: boolean[] = [];
    for (const k of ks) correct.push(await sameKey(k, target, cohort.equivalence));
    const vote = await pluralityVote(ks, cohort.equivalence, 0);
    rows.push({
      agent: agent.index,
      id: problem.id,
      keys: ks,
      correct,
      majCorrect: await sameKey(vote.label, target, cohort.equivalence),
      meanLength: mean(group.map((c) => c.tokenIds.length)),
    });
  }
  return rows;
}

async function sameKey(a: string | null, b: string | null, eq: Equivalence): Promise<boolean> {
  if (a === null || b === null) return false;
  return a === b || eq.equal(a, b);
}

/** Mean of the finite values (0 for none). */
export function mean(values: readonly number[]): number {
  let s = 0;
  let n = 0;
  for (const v of values) if (Number.isFinite(v)) { s += v; n++; }
  return n ? s / n : 0;
}
