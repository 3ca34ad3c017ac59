import type { Equivalence } from '../contracts/equivalence';
import type { MetricsRecord } from '../contracts/metrics-sink';
import type { Problem } from '../contracts/problem';
import type { Completion } from '../contracts/completion';
import type { Interaction } from '../contracts/interaction';
import type { SampleRequest, SamplingOptions } from '../contracts/policy';
import type { EvalConfig, SamplingConfig } from '../config/types';
import type { TaskData } from '../contracts/task';
import { missingValidationSplit } from '../config/data-checks';
import { passAt1 } from '../metrics/accuracy';
import { agreement, type Agreement } from '../metrics/agreement';
import { matches } from '../voting/match';
import { pluralityVote } from '../voting/plurality';
import { finiteMean } from '../util/mean';
import { mixSeed } from '../util/rng';
import { sampleChecked, type Agent, type RunContext } from './run-context';
import { Grader } from '../reward/grade';
import { discussionRound, discussionSetup } from './discussion';
import { EvalTable } from './eval-table';

/** One agent's answers to one held-out problem. */
export interface EvalRow {
  readonly agent: number;
  readonly id: string;
  /** The discussion round these answers were given in (runs with an `interaction`; rows of the final round are written). */
  readonly round?: number;
  /** Extracted answers of its samples, in order (null: nothing parsed). */
  readonly answers: readonly (string | null)[];
  /** Answer keys of its samples, in order. */
  readonly keys: readonly (string | null)[];
  /** Whether each sample is right. */
  readonly correct: readonly boolean[];
  /** The plurality key of its samples (equivalence-clustered; null when none answered). */
  readonly majority: string | null;
  /** Whether the majority of its samples is right. */
  readonly majCorrect: boolean;
  /** The reference answer as the task gives it (null when the task has none). */
  readonly reference: string | null;
  /** Mean completion length in tokens. */
  readonly meanLength: number;
  /** The problem's category, when the task tags it (`metadata.category`, e.g. corl:arith's carry/borrow classes), so results can be split by it. */
  readonly category?: string;
}

/** How one agent is evaluated. */
export interface AgentEvalSettings {
  /** Samples per problem. */
  readonly samples: number;
  readonly sampling: SamplingConfig;
  /**
   * Problems per sampling call (0: all in one call, as the trainer does). Call c after the first is
   * seeded by (agent seed, "eval", index of its first problem), so results depend on the batch size.
   */
  readonly batch?: number;
  /** Told after each sampling call how many problems are done. */
  readonly onBatch?: (done: number, total: number) => void;
}

/** The outcome of one evaluation of the whole cohort. */
export interface EvalResult {
  readonly rows: readonly EvalRow[];
  readonly records: readonly MetricsRecord[];
  /** pass@1 per agent. */
  readonly accuracy: readonly number[];
}

/**
 * The run's grader (core/reward/grade.ts): answer keys and verdicts through the run context's
 * grading equivalence (`RunContext.grading`, a second instance of the config's equivalence that no
 * reward source holds) against the task's ground truth. The one construction the trainer's
 * evaluation and monitoring, `corl eval` and `corl pretrain` grade with, so the same completions
 * get the same correctness in each.
 */
export function runGrader(ctx: Pick<RunContext, 'extractor' | 'grading' | 'data'>): Grader {
  return new Grader(ctx.extractor, ctx.grading, ctx.data.groundTruth);
}

/**
 * The problems an evaluation uses: those of `config.split` (held-out test problems, or the task's
 * validation split), the first `maxProblems` of them (all when 0), in the task's order.
 */
export function evalProblems(
  data: Pick<TaskData, 'heldOut' | 'validation'>,
  config: Pick<EvalConfig, 'split' | 'maxProblems'>,
): readonly Problem[] {
  let problems = data.heldOut;
  if (config.split === 'validation') {
    if (!data.validation || data.validation.length === 0) throw missingValidationSplit();
    problems = data.validation;
  }
  return config.maxProblems > 0 ? problems.slice(0, config.maxProblems) : problems;
}

/**
 * Evaluate every agent on the held-out problems against ground truth (monitoring only: nothing
 * here feeds a reward). pass@1 is the mean accuracy of the samples, maj@n the accuracy of their
 * plurality answer; between every pair of agents, κ/c/w/u over all aligned sample pairs (and κ of first samples).
 */
export async function evaluateCohort(ctx: RunContext, grader: Grader, step: number): Promise<EvalResult> {
  const { config } = ctx.loaded;
  const ev = config.eval;
  const problems = evalProblems(ctx.data, ev);
  if (problems.length === 0) return { rows: [], records: [], accuracy: ctx.agents.map(() => 0) };
  // The agents answer alone (round 0), then discuss for the interaction's rounds (none without one).
  // The scores (and rows, pairs, ensemble) are the final answer round's (an `evaluate` round checks
  // another agent's turn: it is reported per round only); in a discussion each round is reported too.
  const table = await evaluateRounds(ctx, problems, grader, ev);
  const perAgent = table.roundRows(finalAnswerRound(ctx.interaction));
  const rows = perAgent.flat();
  const records: MetricsRecord[] = [];
  const accuracy: number[] = [];
  for (const agent of ctx.agents) {
    const score = agentScores(perAgent[agent.index]!);
    accuracy.push(score.pass1);
    const metrics: Record<string, number> = {
      'eval/accuracy': score.pass1,
      'eval/answered_fraction': score.answered,
      'eval/mean_length': score.meanLength,
    };
    if (ev.samples > 1) metrics[`eval/maj@${ev.samples}`] = score.majority;
    if (table.rounds > 1)
      for (let r = 0; r < table.rounds; r++) {
        const s = agentScores(table.agentRows(r, agent.index));
        metrics[`eval/round${r}/pass@1`] = s.pass1;
        if (ev.samples > 1) metrics[`eval/round${r}/maj@${ev.samples}`] = s.majority;
        if (r > 0) Object.assign(metrics, peerUse(table, r, ctx.neighbours[agent.index]!, agent.index));
      }
    records.push({ step, agent: agent.index, phase: 'eval', metrics });
  }
  if (ev.ensemble > 0) {
    // Budget-fair ensemble: the first `ensemble` samples of every agent, pooled into one plurality.
    const right = await ensembleCorrect(perAgent, ev.ensemble, grader);
    records.push({
      step,
      agent: null,
      phase: 'eval',
      metrics: { [`ensemble/maj@${ev.ensemble * ctx.agents.length}`]: finiteMean(right.map(Number), 0) },
    });
  }
  for (let a = 0; a < ctx.agents.length; a++) {
    for (let b = a + 1; b < ctx.agents.length; b++) {
      const s = await pairAgreement(perAgent[a]!, perAgent[b]!, ctx.grading);
      const first = ev.samples > 1 ? await pairAgreement(perAgent[a]!, perAgent[b]!, ctx.grading, 'first') : s;
      records.push({
        step,
        agent: null,
        phase: 'eval',
        metrics: {
          [`pair/${a}-${b}/kappa`]: s.kappa,
          [`pair/${a}-${b}/kappa_first`]: first.kappa,
          [`pair/${a}-${b}/complementarity`]: s.complementarity,
          [`pair/${a}-${b}/same_wrong`]: s.sameWrong,
          [`pair/${a}-${b}/coverage`]: s.coverage,
        },
      });
    }
  }
  return { rows, records, accuracy };
}

/**
 * One agent's answers to `problems` against ground truth: K samples each on the canonical prompt,
 * their keys, which are right, and their equivalence-clustered plurality. Shared by the trainer's
 * evaluation and `corl eval`.
 */
export async function evaluateAgent(
  agent: Agent,
  problems: readonly Problem[],
  grader: Grader,
  settings: AgentEvalSettings,
): Promise<EvalRow[]> {
  const completions = await sampleEval(agent, problems, settings);
  return evalRows(agent, problems, completions, grader);
}

/** Round 0 of an evaluation: `settings.samples` completions per problem on the canonical prompt. */
async function sampleEval(
  agent: Agent,
  problems: readonly Problem[],
  settings: AgentEvalSettings,
): Promise<Completion[][]> {
  // Every agent answers the canonical prompt: diversity strategies shape training inputs only, so
  // that all configs (and all agents of one) are scored on identical held-out questions.
  const requests = problems.map(evalRequest);
  const batch = settings.batch && settings.batch > 0 ? settings.batch : Math.max(requests.length, 1);
  const completions: Completion[][] = [];
  for (let from = 0; from < requests.length; from += batch) {
    const part = await sampleChecked(
      agent,
      requests.slice(from, from + batch),
      {
        n: settings.samples,
        ...samplingOf(settings.sampling),
        seed: from === 0 ? mixSeed(agent.seed, 'eval') : mixSeed(agent.seed, 'eval', from),
      },
      'evaluation sampling',
    );
    completions.push(...part);
    settings.onBatch?.(completions.length, requests.length);
  }
  return completions;
}

/** What an agent is asked for a held-out problem: the canonical prompt (diversity shapes training inputs only). */
function evalRequest(p: Problem): SampleRequest {
  return { id: p.id, prompt: p.prompt, images: p.images };
}

/** The sampling options of an evaluation config. */
function samplingOf(s: SamplingConfig): Omit<SamplingOptions, 'n' | 'seed'> {
  return { temperature: s.temperature, topP: s.topP, maxTokens: s.maxTokens, stop: s.stop };
}

/** The rows of one agent's completions (`completions[i]` for `problems[i]`), graded against ground truth. */
async function evalRows(
  agent: Agent,
  problems: readonly Problem[],
  completions: readonly (readonly Completion[])[],
  grader: Grader,
  round?: number,
): Promise<EvalRow[]> {
  const rows: EvalRow[] = [];
  for (const [i, problem] of problems.entries()) {
    const group = completions[i]!;
    const graded = await grader.grade(
      problem,
      group.map((c) => c.text),
    );
    const vote = await pluralityVote(graded.keys, grader.equivalence, 0);
    rows.push({
      agent: agent.index,
      id: problem.id,
      ...(round !== undefined ? { round } : {}),
      answers: graded.answers,
      keys: graded.keys,
      correct: graded.correct,
      majority: vote.label,
      majCorrect: await grader.right(vote.label, problem.id),
      reference: grader.reference(problem.id),
      meanLength: finiteMean(
        group.map((c) => c.tokenIds.length),
        0,
      ),
      ...(typeof problem.metadata?.category === 'string' ? { category: problem.metadata.category } : {}),
    });
  }
  return rows;
}

/**
 * The held-out problems through the interaction's rounds, as one {@link EvalTable}: round 0 as
 * {@link evaluateAgent}, then for each round r every agent's sample j reads its neighbours' samples j
 * of round r − 1 (one completion per prompt, seeded by (agent seed, "eval", "round", r)); one round
 * without an interaction. Every round is graded (its rows marked with their round in a discussion).
 */
async function evaluateRounds(
  ctx: RunContext,
  problems: readonly Problem[],
  grader: Grader,
  ev: EvalConfig,
): Promise<EvalTable> {
  const interaction = ctx.interaction;
  const discussing = interaction.rounds > 0;
  const table = new EvalTable(problems, ctx.agents.length);
  let completions = await Promise.all(ctx.agents.map((agent) => sampleEval(agent, problems, ev)));
  const setup = discussionSetup(ctx);
  for (;;) {
    const cs = completions;
    const r = table.addRound((a, i) => cs[a]?.[i] ?? []);
    await table.grade(r, (a, cells) =>
      evalRows(
        ctx.agents[a]!,
        problems,
        cells.map((c) => c.completions),
        grader,
        discussing ? r : undefined,
      ),
    );
    if (r === interaction.rounds) return table;
    const round = r + 1;
    ({ completions } = await discussionRound(setup, {
      round,
      problems,
      debates: ev.samples,
      request: (_, i) => evalRequest(problems[i]!),
      earlier: (t, a, i, j) => {
        const text = table.completion(t, a, i, j).text;
        return { text, answer: grader.keys.of(text).answer };
      },
      sampling: samplingOf(ev.sampling),
      seed: (agent) => mixSeed(agent.seed, 'eval', 'round', round),
      where: (agent, p, j) => `agents[${agent.index}] evaluation sample ${j} of problem "${p.id}", round ${round}`,
      what: `evaluation sampling, round ${round}`,
    }));
  }
}

/**
 * How an agent uses its neighbours in round r: its samples split by whether every neighbour's
 * aligned sample of round r − 1 was right, or every one wrong (mixed cases in neither). Per case:
 * the share of samples, their accuracy in round r, and the same samples' own accuracy in round r − 1.
 */
function peerUse(table: EvalTable, r: number, neighbours: readonly number[], agent: number): Record<string, number> {
  const cases = { peers_right: { n: 0, after: 0, before: 0 }, peers_wrong: { n: 0, after: 0, before: 0 } };
  let total = 0;
  table.agentRows(r, agent).forEach((row, i) =>
    row.correct.forEach((right, j) => {
      total++;
      const seen = neighbours.map((m) => table.row(r - 1, m, i).correct[j]!);
      const c = seen.every(Boolean) ? cases.peers_right : seen.some(Boolean) ? undefined : cases.peers_wrong;
      if (!c) return;
      c.n++;
      c.after += Number(right);
      c.before += Number(table.row(r - 1, agent, i).correct[j]!);
    }),
  );
  const m: Record<string, number> = {};
  for (const [name, c] of Object.entries(cases)) {
    m[`eval/round${r}/${name}/share`] = total ? c.n / total : 0;
    if (c.n === 0) continue;
    m[`eval/round${r}/${name}/pass@1`] = c.after / c.n;
    m[`eval/round${r}/${name}/before`] = c.before / c.n;
  }
  return m;
}

/** One agent's scores over its rows. */
export interface AgentScores {
  /** pass@1 (core/metrics/accuracy.ts): mean over problems of the share of right samples. */
  readonly pass1: number;
  /** maj@K: share of problems whose plurality answer is right. */
  readonly majority: number;
  /** Share of samples with an answer. */
  readonly answered: number;
  /** Mean completion length in tokens. */
  readonly meanLength: number;
}

/** pass@1, maj@K, answered share and mean length of one agent's rows. */
export function agentScores(rows: readonly EvalRow[]): AgentScores {
  return {
    pass1: passAt1(rows),
    majority: finiteMean(
      rows.map((r) => Number(r.majCorrect)),
      0,
    ),
    answered: finiteMean(
      rows.map((r) =>
        finiteMean(
          r.keys.map((k) => (k === null ? 0 : 1)),
          0,
        ),
      ),
      0,
    ),
    meanLength: finiteMean(
      rows.map((r) => r.meanLength),
      0,
    ),
  };
}

/**
 * Budget-fair ensemble, per problem: the first `m` keys of every agent's row, pooled in agent order
 * into one equivalence-clustered plurality (ties to the first seen), compared with the reference key.
 * `perAgent[a][i]` must be agent a's row for problem i.
 */
export async function ensembleCorrect(
  perAgent: readonly (readonly EvalRow[])[],
  m: number,
  grader: Grader,
): Promise<boolean[]> {
  const out: boolean[] = [];
  const n = perAgent[0]?.length ?? 0;
  for (let i = 0; i < n; i++) {
    const pooled = perAgent.flatMap((rows) => rows[i]!.keys.slice(0, m));
    const vote = await pluralityVote(pooled, grader.equivalence, 0);
    out.push(await grader.right(vote.label, perAgent[0]![i]!.id));
  }
  return out;
}

/**
 * κ, c, w, u between two agents (rows aligned by problem): over every aligned sample pair (sample j
 * of A with sample j of B, as `corl agreement --use all`; the default), or over first samples only
 * (`first`: the paper's "answer once", noisier). w counts equivalent wrong answers as the same.
 */
export async function pairAgreement(
  ra: readonly EvalRow[],
  rb: readonly EvalRow[],
  equivalence: Equivalence,
  basis: 'all' | 'first' = 'all',
): Promise<Agreement> {
  const ca: boolean[] = [];
  const cb: boolean[] = [];
  const same: boolean[] = [];
  for (let i = 0; i < ra.length; i++) {
    const x = ra[i]!;
    const y = rb[i]!;
    const pairs = basis === 'first' ? 1 : Math.min(x.keys.length, y.keys.length);
    for (let j = 0; j < pairs; j++) {
      ca.push(x.correct[j]!);
      cb.push(y.correct[j]!);
      same.push(await matches(x.keys[j] ?? null, y.keys[j] ?? null, equivalence));
    }
  }
  return agreement(ca, cb, same);
}

/** The last round whose turns answer the problem (not `evaluate` rounds): the one evaluation scores. */
export function finalAnswerRound(interaction: Pick<Interaction, 'rounds' | 'turn'>): number {
  for (let r = interaction.rounds; r > 0; r--) if ((interaction.turn?.(r) ?? 'answer') === 'answer') return r;
  return 0;
}
