// Pretraining as a program (`corl pretrain`, the API's `pretrain`): SFT (cross-entropy) on the
// task's worked solutions (or `pretrain.corpus`), seeded epochs of batches, the eval split's pass@1
// every `pretrain.evalEvery` steps, pretrain-metrics.jsonl, and a checkpoint per agent.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Policy } from '../contracts/policy';
import type { LoadedConfig } from '../config/load';
import { CorlError } from '../errors';
import type { Grader, Graded } from '../reward/grade';
import { passAt1 } from '../metrics/accuracy';
import { mixSeed } from '../util/rng';
import { pct } from '../util/text';
import { buildRunContext, epochBatch, sampleChecked, type Agent, type RunContext } from './run-context';
import { evalProblems, runGrader } from './evaluate';
import { readPretrainCorpus, type PretrainCorpus } from './pretrain-corpus';

/** What pretraining one agent produced. */
export interface PretrainResult {
  readonly name: string;
  readonly family: string;
  readonly steps: number;
  readonly loss: number;
  readonly accuracy: number | undefined;
  /** The split `accuracy` was measured on (`eval.split`). */
  readonly split: 'test' | 'validation';
  readonly dir: string;
}

/** Which agents to pretrain and where their checkpoints go. */
export interface PretrainSettings {
  /** Only this agent (default: every agent, concurrently). */
  readonly agent?: number;
  /** The checkpoint folder (several agents: one folder per agent name inside it); pretrain-metrics.jsonl goes here. */
  readonly out: string;
  /** Status lines (one per `pretrain.logEvery` steps). */
  readonly log: (line: string) => void;
}

/** The texts of step `step`: epochs of a permutation seeded by (dataSeed, epoch), as training batches are. */
export function pretrainBatch(count: number, step: number, batchSize: number, dataSeed: number): number[] {
  const indices = Array.from({ length: count }, (_, i) => i);
  return epochBatch(indices, step, batchSize, (epoch) => mixSeed(dataSeed, 'pretrain', epoch));
}

/** Pretrain the agents of a loaded config; resolves to one result per pretrained agent. */
export async function pretrainAgents(loaded: LoadedConfig, settings: PretrainSettings): Promise<PretrainResult[]> {
  const pcorpus = loaded.config.pretrain.corpus;
  const corpus = pcorpus === undefined ? undefined : readPretrainCorpus(path.resolve(loaded.baseDir, pcorpus));
  const ctx = await buildRunContext(loaded);
  try {
    const texts = corpus?.texts ?? ctx.data.pretrainText ?? [];
    if (texts.length === 0) {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        `expected pretraining text from task "${loaded.config.task.use}", got none`,
        { where: 'task', hint: 'use a task with worked solutions (corl:arith, or corl:inline rows with "solution")' },
      );
    }
    const agents = ctx.agents.filter((a) => settings.agent === undefined || a.index === settings.agent);
    // Release the agents that are not pretrained before any session exists, so the others get their cores.
    for (const a of ctx.agents) if (!agents.includes(a)) await a.policy.close?.();
    for (const a of agents) {
      if (!a.policy.pretrainStep) {
        throw new CorlError(
          'CORL_ERR_POLICY_CANNOT_TRAIN',
          `expected agents[${a.index}] (${a.name}) to have a policy with pretrainStep, got ${a.policy.describe().kind}`,
          { where: `agents[${a.index}].policy` },
        );
      }
    }
    const out = path.resolve(settings.out);
    fs.mkdirSync(out, { recursive: true });
    const metricsFile = path.join(out, 'pretrain-metrics.jsonl');
    const run: AgentRun = {
      ctx,
      texts,
      corpus,
      grader: runGrader(ctx),
      log: settings.log,
      record: (r) => fs.appendFileSync(metricsFile, JSON.stringify(r) + '\n'),
    };
    return await Promise.all(
      agents.map((a) => pretrainAgent(run, a, agents.length === 1 ? out : path.join(out, a.name))),
    );
  } finally {
    await ctx.close();
  }
}

/** What every agent's pretraining shares. */
interface AgentRun {
  readonly ctx: RunContext;
  readonly texts: readonly string[];
  readonly corpus: PretrainCorpus | undefined;
  readonly grader: Grader;
  readonly log: (line: string) => void;
  readonly record: (r: Record<string, unknown>) => void;
}

/** Pretrain one agent for `pretrain.steps` steps and save its checkpoint in `dir`. */
async function pretrainAgent(run: AgentRun, a: Agent, dir: string): Promise<PretrainResult> {
  const { ctx, texts, corpus, grader } = run;
  const config = ctx.loaded.config;
  const pc = config.pretrain;
  const prompts = corpus ? corpus.promptLengths : ctx.data.pretrainPromptLengths;
  // A corpus of other texts (a verifier's verdicts) does not teach the task: its pass@1 is not measured.
  const measure = corpus === undefined;
  const policy = a.policy as Policy & Required<Pick<Policy, 'pretrainStep'>>;
  let loss = NaN;
  let tokens = 0;
  let t0 = Date.now();
  for (let step = 0; step < pc.steps; step++) {
    const idx = pretrainBatch(texts.length, step, pc.batchSize, config.dataSeed);
    const r = await policy.pretrainStep({
      texts: idx.map((i) => texts[i]!),
      ...(prompts ? { promptLengths: idx.map((i) => prompts[i]!) } : {}),
      step,
      totalSteps: pc.steps,
    });
    loss = r.metrics['loss/ce'] ?? NaN;
    tokens += r.metrics['pretrain/tokens'] ?? 0;
    const done = step + 1;
    const metrics: Record<string, number> = { ...r.metrics };
    if (measure && pc.evalEvery > 0 && done % pc.evalEvery === 0 && done < pc.steps) {
      const acc = await heldOutAccuracy(ctx, a, grader, done);
      if (acc !== undefined) metrics['eval/accuracy'] = acc;
    }
    if (done % pc.logEvery === 0 || done === pc.steps || metrics['eval/accuracy'] !== undefined) {
      const secs = (Date.now() - t0) / 1000;
      run.record({ phase: 'pretrain', step: done, agent: a.index, metrics });
      run.log(
        `pretrain ${a.name} step ${done}/${pc.steps} loss ${loss.toFixed(4)} lr ${(r.metrics['optim/lr'] ?? 0).toExponential(2)} ${(tokens / Math.max(secs, 1e-3)).toFixed(0)} tokens/s${metrics['eval/accuracy'] !== undefined ? ` ${config.eval.split === 'validation' ? 'validation' : 'held-out'} pass@1 ${pct(metrics['eval/accuracy'])}` : ''}`,
      );
      tokens = 0;
      t0 = Date.now();
    }
  }
  const accuracy = measure ? await heldOutAccuracy(ctx, a, grader, pc.steps) : undefined;
  run.record({
    phase: 'pretrain-eval',
    step: pc.steps,
    agent: a.index,
    metrics: { 'loss/ce': loss, ...(accuracy !== undefined ? { 'eval/accuracy': accuracy } : {}) },
  });
  await policy.save(dir);
  return {
    name: a.name,
    family: policy.describe().family,
    steps: pc.steps,
    loss,
    accuracy,
    split: config.eval.split,
    dir,
  };
}

/** pass@1 of one agent on the eval split's problems (held-out or validation) with the eval sampling settings (ground truth for monitoring only). */
async function heldOutAccuracy(
  ctx: RunContext,
  agent: Agent,
  grader: Grader,
  step: number,
): Promise<number | undefined> {
  const ev = ctx.loaded.config.eval;
  const problems = evalProblems(ctx.data, ev);
  if (problems.length === 0) return undefined;
  const out = await sampleChecked(
    agent,
    problems.map((p) => ({ prompt: p.prompt })),
    { n: ev.samples, ...ev.sampling, seed: mixSeed(agent.seed, 'pretrain-eval', step) },
    'pretraining evaluation',
  );
  // Graded by the one grader (the `matches` rule), as the trainer's evaluation grades.
  const rows: Graded[] = [];
  for (const [i, p] of problems.entries())
    rows.push(
      await grader.grade(
        p,
        out[i]!.map((c) => c.text),
      ),
    );
  return passAt1(rows);
}
