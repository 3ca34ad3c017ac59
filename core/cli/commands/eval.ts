import * as path from 'node:path';
import type { Command } from 'commander';
import type { Equivalence } from '../../contracts/equivalence';
import type { Problem } from '../../contracts/problem';
import { loadConfig } from '../../config/load';
import { CorlError } from '../../errors';
import type { Agreement } from '../../metrics/agreement';
import { AnswerKeys } from '../../reward/answer-keys';
import { buildRunContext, type Agent, type RunContext } from '../../trainer/run-context';
import {
  agentScores,
  ensembleCorrect,
  evaluateAgent,
  evalProblems,
  gradingKeys,
  mean,
  pairAgreement,
  type AgentScores,
  type EvalRow,
} from '../../trainer/evaluate';
import { defaultCountProgress, NoCountProgress, type CountProgress } from '../../trainer/progress';
import { writeFileAtomic, writeJsonAtomic } from '../../util/fs';
import { readUserText } from '../../util/files';
import { intFlag, pct, table } from '../output';
import { noConfig, pickConfig } from '../config-arg';

interface EvalFlags {
  config?: string;
  data?: string;
  format?: string;
  template?: string;
  samples?: string;
  agent?: string;
  ensemble?: string;
  limit?: string;
  batch?: string;
  temperature?: string;
  maxTokens?: string;
  out?: string;
  quiet?: boolean;
}

const FORMATS = ['gsm8k', 'math', 'plain'] as const;

/** One evaluated agent in the summary. */
export interface EvalAgentSummary extends AgentScores {
  readonly index: number;
  readonly name: string;
  readonly family: string;
  /** Its per-problem output file (with --out). */
  readonly file?: string;
}

/** What `corl eval` measured; written as summary.json. */
export interface EvalSummary {
  readonly config: string;
  /** The benchmark file (--data), or null for the config's held-out split. */
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

/** `corl eval`: pass@1, maj@K and budget-fair ensembles of a config's policies on a benchmark. */
export function evalCommand(program: Command): void {
  program
    .command('eval')
    .argument('[config]', 'config file (the same as -c <file>)')
    .description(
      "evaluate a config's policies on a benchmark JSONL (GSM8K, MATH-500) or the held-out split: pass@1, maj@K, budget-fair ensembles, per-problem outputs",
    )
    .option(
      '-c, --config <file>',
      "config: its agents' policies, extractor, equivalence, eval sampling and (without --data) task",
    )
    .option(
      '--data <file>',
      "benchmark JSONL to evaluate on instead of the config's held-out split (read by corl:jsonl)",
    )
    .option(
      '--format <format>',
      `answer format of --data: ${FORMATS.join(' | ')} (default: math when the first row has "problem", plain when it has "prompt", else gsm8k)`,
    )
    .option('--template <text>', 'prompt template for --data; {question} is replaced by the problem text')
    .option('--samples <k>', "samples per problem (default: the config's eval.samples)")
    .option('--agent <i|name|all>', 'which agents to evaluate', 'all')
    .option(
      '--ensemble <m>',
      "budget-fair ensemble of every pair of evaluated agents: maj@2m pooling m samples of each (default: the config's eval.ensemble)",
    )
    .option('--limit <n>', "evaluate the first n problems (default: the config's eval.maxProblems; 0: all)")
    .option(
      '--batch <n>',
      "problems per sampling call (and per progress update); 0: all in one call, which reproduces the trainer's evaluation exactly",
      '32',
    )
    .option('--temperature <t>', 'override eval.sampling.temperature')
    .option('--max-tokens <n>', 'override eval.sampling.maxTokens')
    .option('--out <dir>', 'write <agent>.jsonl per agent (one row per problem) and summary.json here')
    .option('-q, --quiet', 'no progress output')
    .addHelpText(
      'after',
      [
        '',
        'Each output row is {id, agent, agentName, answers, keys, majority, correct, majCorrect, reference}.',
        'pass@1 is the mean accuracy of the K samples, maj@K the accuracy of their equivalence-clustered',
        "plurality (the config's equivalence plugin). Compare two models with corl agreement a.jsonl b.jsonl.",
        '',
        'Examples:',
        '  corl eval -c configs/co-rl.json --samples 4 --out eval/co-rl',
        '  corl eval -c qwen.json --data math500.jsonl --format math --template "{question} Put the final answer in \\boxed{}." --samples 8 --ensemble 4',
        '',
      ].join('\n'),
    )
    .action(async (config: string | undefined, flags: EvalFlags) => {
      flags.config = pickConfig(config, flags.config, 'corl eval');
      const s = await runEval(flags);
      const out = process.stdout;
      out.write(
        `${s.problems} problem(s) from ${s.data ?? 'the held-out split'}, ${s.samples} sample(s) each, temperature ${s.sampling.temperature}\n`,
      );
      out.write(
        table([
          ['agent', 'family', 'pass@1', `maj@${s.samples}`, 'answered', 'mean length'],
          ...s.agents.map((a) => [
            a.name,
            a.family,
            pct(a.pass1),
            pct(a.majority),
            pct(a.answered),
            a.meanLength.toFixed(1),
          ]),
        ]) + '\n',
      );
      if (s.ensembles.length) {
        out.write(
          '\n' +
            table([
              ['ensemble', 'budget', 'accuracy'],
              ...s.ensembles.map((e) => [
                `${e.agents[0]} + ${e.agents[1]}`,
                `maj@${e.k} (${e.m} + ${e.m})`,
                pct(e.accuracy),
              ]),
            ]) +
            '\n',
        );
      }
      if (s.pairs.length) {
        out.write(
          '\n' +
            table([
              ['pair (first samples)', 'kappa', 'c', 'w', 'u'],
              ...s.pairs.map((p) => [
                `${p.agents[0]} / ${p.agents[1]}`,
                p.kappa.toFixed(3),
                pct(p.complementarity),
                pct(p.sameWrong),
                pct(p.coverage),
              ]),
            ]) +
            '\n',
        );
      }
      if (flags.out) out.write(`wrote ${path.join(flags.out, 'summary.json')}\n`);
    });
}

function numberFlag(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected ${name} to be a number >= ${min}, got "${value}"`, {
      where: name,
    });
  return n;
}

/** The answer format of a benchmark file from its first row: MATH rows have "problem", plain ones "prompt". */
export function guessFormat(file: string): (typeof FORMATS)[number] {
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

/** File name of an agent's output: its name made safe for a file system, unique among `taken`. */
function outputName(agent: Agent, taken: Set<string>): string {
  let base = agent.name.replace(/[^\w.-]+/g, '_') || `agent-${agent.index}`;
  if (taken.has(base)) base = `${base}-${agent.index}`;
  taken.add(base);
  return `${base}.jsonl`;
}

/** Evaluate as the flags say. */
export async function runEval(flags: EvalFlags): Promise<EvalSummary> {
  if (!flags.config) throw noConfig('corl eval');
  checkDataFlags(flags);
  const parsed = parseEvalFlags(flags);
  const loaded = await loadConfig(flags.config, { overrides: parsed.overrides });
  const ev = loaded.config.eval;
  const m = parsed.ensemble ?? ev.ensemble;
  if (m > ev.samples)
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected --ensemble at most the samples per problem (${ev.samples}), got ${m}`,
      { where: '--ensemble', hint: 'raise --samples or lower --ensemble' },
    );
  const chosen = chosenAgents(loaded.config.agents, flags.agent ?? 'all');
  if (parsed.ensemble !== undefined && chosen.length < 2)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected --ensemble with at least two agents, got ${chosen.length}`, {
      where: '--ensemble',
      hint: 'use --agent all with a config of two or more agents',
    });

  const ctx = await buildRunContext(loaded);
  const progress = flags.quiet ? new NoCountProgress() : defaultCountProgress();
  try {
    const selected = ctx.agents.filter((a) => chosen.includes(a.index));
    // Release the agents that are not evaluated before any session exists, so the others get their cores.
    for (const a of ctx.agents) if (!selected.includes(a)) await a.policy.close?.();
    const problems = scoredProblems(ctx, parsed.limit, parsed.data);
    // Graded as the trainer grades its evaluation: the same construction, the grading instance.
    const keys = gradingKeys(ctx);
    const perAgent = await evaluateSelected(ctx, selected, problems, keys, { batch: parsed.batch, progress });
    const outDir = flags.out ? path.resolve(flags.out) : undefined;
    const files = outDir ? await writeAgentFiles(outDir, selected, perAgent) : [];
    const referenceKey = (id: string) => keys.referenceKey(id, ctx.data.groundTruth);
    const { ensembles, pairs } = await pairFigures(selected, perAgent, m, ctx.grading, referenceKey);
    const summary: EvalSummary = {
      config: loaded.file ?? flags.config,
      data: parsed.data,
      format: parsed.format,
      problems: problems.length,
      samples: ev.samples,
      sampling: { temperature: ev.sampling.temperature, topP: ev.sampling.topP, maxTokens: ev.sampling.maxTokens },
      batch: parsed.batch,
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
  } finally {
    progress.stop();
    await ctx.close();
  }
}

/** --format and --template go with --data, and must make sense. */
function checkDataFlags(flags: EvalFlags): void {
  if (flags.format !== undefined && !flags.data)
    throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --format only with --data, got --format alone', {
      where: '--format',
      hint: "the config's task knows its own format; pass --data <file> to evaluate on a benchmark file",
    });
  if (flags.template !== undefined && !flags.data)
    throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --template only with --data, got --template alone', {
      where: '--template',
      hint: "set the task's own template option instead",
    });
  if (flags.format !== undefined && !(FORMATS as readonly string[]).includes(flags.format)) {
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected --format to be one of ${FORMATS.join(', ')}, got "${flags.format}"`,
      { where: '--format' },
    );
  }
  if (flags.template !== undefined && !flags.template.includes('{question}')) {
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected --template to contain {question}, got "${flags.template}"`, {
      where: '--template',
    });
  }
}

/** The numeric flags, and the config overrides they and --data make (a benchmark file replaces the task). */
function parseEvalFlags(flags: EvalFlags): {
  overrides: Record<string, unknown>;
  ensemble: number | undefined;
  limit: number | undefined;
  batch: number;
  data: string | null;
  format: string | null;
} {
  const samples = intFlag('--samples', flags.samples, 1);
  const ensemble = intFlag('--ensemble', flags.ensemble, 1);
  const limit = intFlag('--limit', flags.limit, 0);
  const batch = intFlag('--batch', flags.batch ?? '32', 0)!;
  const temperature = numberFlag('--temperature', flags.temperature, 0);
  const maxTokens = intFlag('--max-tokens', flags.maxTokens, 1);
  const overrides: Record<string, unknown> = {};
  if (samples !== undefined) overrides['eval.samples'] = samples;
  if (temperature !== undefined) overrides['eval.sampling.temperature'] = temperature;
  if (maxTokens !== undefined) overrides['eval.sampling.maxTokens'] = maxTokens;
  let data: string | null = null;
  let format: string | null = null;
  if (flags.data) {
    data = path.resolve(flags.data);
    format = flags.format ?? guessFormat(data);
    overrides.task = {
      use: 'corl:jsonl',
      options: { heldOut: data, format, ...(flags.template !== undefined ? { template: flags.template } : {}) },
    };
    overrides['trainer.steps'] = 0; // an evaluation-only task has no train split
  }
  return { overrides, ensemble, limit, batch, data, format };
}

/** The indices --agent names: all, an index, or a name. */
function chosenAgents(agents: readonly { name: string }[], which: string): number[] {
  const chosen =
    which === 'all'
      ? agents.map((_, i) => i)
      : [/^\d+$/.test(which) ? Number(which) : agents.findIndex((a) => a.name === which)];
  if (chosen.some((i) => i < 0 || i >= agents.length)) {
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected --agent to be all, an index below ${agents.length} or one of ${agents.map((a) => `"${a.name}"`).join(', ')}, got "${which}"`,
      { where: '--agent' },
    );
  }
  return chosen;
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
  keys: AnswerKeys,
  run: { batch: number; progress: CountProgress },
): Promise<EvalRow[][]> {
  const ev = ctx.loaded.config.eval;
  const done = new Map<number, number>();
  run.progress.start(problems.length * selected.length, 'eval');
  const perAgent = await Promise.all(
    selected.map((agent) =>
      evaluateAgent(agent, problems, keys, ctx.data.groundTruth, ctx.grading, {
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
  equivalence: Equivalence,
  referenceKey: (id: string) => string | null,
): Promise<Pick<EvalSummary, 'ensembles' | 'pairs'>> {
  const ensembles: { agents: [string, string]; m: number; k: number; accuracy: number }[] = [];
  const pairs: EvalSummary['pairs'][number][] = [];
  for (let a = 0; a < selected.length; a++) {
    for (let b = a + 1; b < selected.length; b++) {
      const names: [string, string] = [selected[a]!.name, selected[b]!.name];
      if (m > 0) {
        const right = await ensembleCorrect([perAgent[a]!, perAgent[b]!], m, equivalence, referenceKey);
        ensembles.push({ agents: names, m, k: 2 * m, accuracy: mean(right.map(Number)) });
      }
      const s = await pairAgreement(perAgent[a]!, perAgent[b]!, equivalence);
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
