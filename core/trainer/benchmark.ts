// Evaluating a config's policies on its held-out split or on a benchmark file, as `corl eval` and
// the API's `evaluate` do: pass@1 and maj@K per agent, budget-fair ensembles and the agreement of
// every pair, one output row per agent and problem. Graded as the trainer grades its evaluation.
import * as path from 'node:path';
import type { Problem } from '../contracts/problem';
import { CorlError } from '../errors';
import type { Agreement } from '../metrics/agreement';
import type { Grader } from '../reward/grade';
import { readUserText } from '../util/files';
import { finiteMean } from '../util/mean';
import { writeFileAtomic, writeJsonAtomic } from '../util/fs';
import type { Agent, RunContext } from './run-context';
import {
  agentScores,
  ensembleCorrect,
  evaluateAgent,
  evalProblems,
  runGrader,
  pairAgreement,
  type AgentScores,
  type EvalRow,
} from './evaluate';
import type { CountProgress } from './progress';

/** The answer formats of a benchmark file (what `corl:jsonl` reads). */
export const BENCHMARK_FORMATS = ['gsm8k', 'math', 'plain'] as const;
export type BenchmarkFormat = (typeof BENCHMARK_FORMATS)[number];

/** One evaluated agent in the summary. */
export interface EvalAgentSummary extends AgentScores {
  readonly index: number;
  readonly name: string;
  readonly family: string;
  /** Its per-problem output file (with an output folder). */
  readonly file?: string;
}

/** What an evaluation measured; written as summary.json. */
export interface EvalSummary {
  readonly config: string;
  /** The benchmark file, or null for the config's held-out split. */
  readonly data: string | null;
  readonly format: string | null;
  readonly problems: number;
  readonly samples: number;
  readonly sampling: { readonly temperature: number; readonly topP: number; readonly maxTokens: number };
  readonly batch: number;
  readonly agents: readonly EvalAgentSummary[];
  /** Budget-fair two-model ensembles: maj@2m over m samples of each agent of the pair. */
  readonly ensembles: readonly {
    readonly agents: readonly [string, string];
    readonly m: number;
    readonly k: number;
    readonly accuracy: number;
  }[];
  /** κ, c, w, u of every pair of evaluated agents, on their first samples. */
  readonly pairs: readonly {
    readonly agents: readonly [string, string];
    readonly kappa: number;
    readonly complementarity: number;
    readonly sameWrong: number;
    readonly coverage: number;
    readonly counts: Agreement['counts'];
  }[];
}

/** What to evaluate, the run context's config (with its eval section) already settled. */
export interface BenchmarkSettings {
  /** What summary.json names the config by. */
  readonly config: string;
  /** Indices of the agents to evaluate. */
  readonly agents: readonly number[];
  /** At most this many problems (default: `eval.maxProblems`; 0: all). */
  readonly limit?: number;
  /** Problems per sampling call; 0: all in one call, as the trainer's evaluation. */
  readonly batch: number;
  /** m of the budget-fair ensembles (0: none). */
  readonly ensemble: number;
  /** The benchmark file the task reads, or null for the config's own held-out split. */
  readonly data: string | null;
  readonly format: string | null;
  /** Write `<agent>.jsonl` per agent and summary.json here. */
  readonly out?: string;
  readonly progress: CountProgress;
}

/** The answer format of a benchmark file from its first row: MATH rows have "problem", plain ones "prompt". */
export function guessFormat(file: string): BenchmarkFormat {
  let first: string;
  try {
    first =
      readUserText(file)
        .split('\n')
        .find((l) => l.trim() !== '') ?? '';
  } catch {
    return 'gsm8k'; // the task reports the missing file with its path
  }
  try {
    const row = JSON.parse(first) as Record<string, unknown>;
    if (row && typeof row === 'object' && 'problem' in row) return 'math';
    if (row && typeof row === 'object' && 'prompt' in row && !('question' in row)) return 'plain';
  } catch {
    // the task reports the bad line with its number
  }
  return 'gsm8k';
}

/** Evaluate the chosen agents of a run context; writes the output files when asked. */
export async function runBenchmark(ctx: RunContext, settings: BenchmarkSettings): Promise<EvalSummary> {
  const ev = ctx.loaded.config.eval;
  const selected = ctx.agents.filter((a) => settings.agents.includes(a.index));
  // Release the agents that are not evaluated before any session exists, so the others get their cores.
  for (const a of ctx.agents) if (!selected.includes(a)) await a.policy.close?.();
  const problems = scoredProblems(ctx, settings.limit, settings.data);
  // Graded as the trainer grades its evaluation: the same construction, the grading instance.
  const grader = runGrader(ctx);
  const perAgent = await evaluateSelected(ctx, selected, problems, grader, settings);
  const outDir = settings.out ? path.resolve(settings.out) : undefined;
  const files = outDir ? await writeAgentFiles(outDir, selected, perAgent) : [];
  const { ensembles, pairs } = await pairFigures(selected, perAgent, settings.ensemble, grader);
  const summary: EvalSummary = {
    config: settings.config,
    data: settings.data,
    format: settings.format,
    problems: problems.length,
    samples: ev.samples,
    sampling: { temperature: ev.sampling.temperature, topP: ev.sampling.topP, maxTokens: ev.sampling.maxTokens },
    batch: settings.batch,
    agents: selected.map((agent, i) => ({
      index: agent.index,
      name: agent.name,
      family: agent.policy.describe().family,
      ...agentScores(perAgent[i]!),
      ...(files[i] ? { file: path.basename(files[i]!) } : {}),
    })),
    ensembles,
    pairs,
  };
  if (outDir) await writeJsonAtomic(path.join(outDir, 'summary.json'), summary);
  return summary;
}

/** File name of an agent's output: its name made safe for a file system, unique among `taken`. */
function outputName(agent: Agent, taken: Set<string>): string {
  let base = agent.name.replace(/[^\w.-]+/g, '_') || `agent-${agent.index}`;
  if (taken.has(base)) base = `${base}-${agent.index}`;
  taken.add(base);
  return `${base}.jsonl`;
}

/** The held-out problems to evaluate (at most `limit`), each with a reference answer. */
function scoredProblems(ctx: RunContext, limit: number | undefined, data: string | null): readonly Problem[] {
  const ev = ctx.loaded.config.eval;
  const problems = evalProblems(ctx.data, { ...ev, maxProblems: limit ?? ev.maxProblems });
  if (problems.length === 0) {
    throw new CorlError(
      'CORL_ERR_TASK_DATA',
      `expected held-out problems to evaluate, got none from task "${ctx.loaded.config.task.use}"`,
      {
        where: data ?? 'task',
        hint: data ? 'check the file' : 'give the task a held-out split, or pass --data <file.jsonl>',
      },
    );
  }
  const unscored = problems.filter((p) => ctx.data.groundTruth.get(p.id) === undefined);
  if (unscored.length) {
    throw new CorlError(
      'CORL_ERR_TASK_DATA',
      `expected a reference answer for every problem, got none for ${unscored.length} (first: "${unscored[0]!.id}")`,
      {
        where: data ?? 'task',
        hint: 'evaluation needs references: give every row its answer (or a solution with \\boxed{})',
      },
    );
  }
  return problems;
}

/** Every selected agent's rows, evaluated side by side, with one progress bar over all of them. */
async function evaluateSelected(
  ctx: RunContext,
  selected: readonly Agent[],
  problems: readonly Problem[],
  grader: Grader,
  run: { batch: number; progress: CountProgress },
): Promise<EvalRow[][]> {
  const ev = ctx.loaded.config.eval;
  const done = new Map<number, number>();
  run.progress.start(problems.length * selected.length, 'eval');
  const perAgent = await Promise.all(
    selected.map((agent) =>
      evaluateAgent(agent, problems, grader, {
        samples: ev.samples,
        sampling: ev.sampling,
        batch: run.batch,
        onBatch: (n, total) => {
          done.set(agent.index, n);
          run.progress.update(
            [...done.values()].reduce((x, y) => x + y, 0),
            `${agent.name} ${n}/${total}`,
          );
        },
      }),
    ),
  );
  run.progress.stop();
  return perAgent;
}

/** One JSONL file of per-problem rows per agent under `outDir`; returns their paths in agent order. */
async function writeAgentFiles(
  outDir: string,
  selected: readonly Agent[],
  perAgent: readonly EvalRow[][],
): Promise<string[]> {
  const files: string[] = [];
  const taken = new Set<string>(['summary']);
  for (const [i, agent] of selected.entries()) {
    const file = path.join(outDir, outputName(agent, taken));
    files.push(file);
    await writeFileAtomic(file, perAgent[i]!.map((r) => JSON.stringify(outputRow(r, agent))).join('\n') + '\n');
  }
  return files;
}

/** For every pair of agents: its budget-fair ensemble (maj@2m, when m > 0) and its agreement figures. */
async function pairFigures(
  selected: readonly Agent[],
  perAgent: readonly EvalRow[][],
  m: number,
  grader: Grader,
): Promise<Pick<EvalSummary, 'ensembles' | 'pairs'>> {
  const ensembles: { agents: [string, string]; m: number; k: number; accuracy: number }[] = [];
  const pairs: EvalSummary['pairs'][number][] = [];
  for (let a = 0; a < selected.length; a++) {
    for (let b = a + 1; b < selected.length; b++) {
      const names: [string, string] = [selected[a]!.name, selected[b]!.name];
      if (m > 0) {
        const right = await ensembleCorrect([perAgent[a]!, perAgent[b]!], m, grader);
        ensembles.push({ agents: names, m, k: 2 * m, accuracy: finiteMean(right.map(Number), 0) });
      }
      const s = await pairAgreement(perAgent[a]!, perAgent[b]!, grader.equivalence);
      pairs.push({
        agents: names,
        kappa: s.kappa,
        complementarity: s.complementarity,
        sameWrong: s.sameWrong,
        coverage: s.coverage,
        counts: s.counts,
      });
    }
  }
  return { ensembles, pairs };
}

/** The line written for one agent's answers to one problem. */
function outputRow(r: EvalRow, agent: Agent): Record<string, unknown> {
  return {
    id: r.id,
    agent: agent.index,
    agentName: agent.name,
    answers: r.answers,
    keys: r.keys,
    majority: r.majority,
    correct: r.correct,
    majCorrect: r.majCorrect,
    reference: r.reference,
    ...(r.category !== undefined ? { category: r.category } : {}),
  };
}
