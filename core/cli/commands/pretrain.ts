import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import type { Policy } from '../../contracts/policy';
import { loadConfig } from '../../config/load';
import { CorlError } from '../../errors';
import { AnswerKeys } from '../../reward/answer-keys';
import { readPretrainCorpus } from '../../trainer/pretrain-corpus';
import { buildRunContext, epochBatch, sampleChecked, type Agent, type RunContext } from '../../trainer/run-context';
import { evalProblems, gradingKeys, mean } from '../../trainer/evaluate';
import { mixSeed } from '../../util/rng';
import { intFlag, pct, table } from '../output';
import { noConfig, pickConfig } from '../config-arg';

interface PretrainFlags {
  config?: string;
  agent?: string;
  out?: string;
  steps?: string;
  quiet?: boolean;
}

/** `corl pretrain`: SFT (cross-entropy) on the task's pretraining text, then a checkpoint per agent. */
export function pretrainCommand(program: Command): void {
  program
    .command('pretrain')
    .argument('[config]', 'config file (the same as -c <file>)')
    .description(
      "pretrain the agents' policies on the task's worked solutions (SFT: cross-entropy) and save checkpoints",
    )
    .option('-c, --config <file>', 'config file (its task, agents and pretrain section)')
    .option('--agent <i>', 'pretrain only agent i (default: every agent, concurrently)')
    .option('--out <dir>', 'where to write the checkpoint (several agents: one folder per agent name inside it)')
    .option('--steps <n>', 'override pretrain.steps')
    .option('-q, --quiet', 'no progress output')
    .addHelpText(
      'after',
      '\nExamples:\n  corl pretrain -c configs/pretrain/slips/alpha.json --out models/my-alpha\n  corl pretrain -c configs/co-rl.json --agent 0 --out models/family-a --steps 200\n\nA config then starts from it with the policy option "checkpoint": "models/family-a".\n',
    )
    .action(async (config: string | undefined, flags: PretrainFlags) => {
      flags.config = pickConfig(config, flags.config, 'corl pretrain');
      const results = await runPretrain(flags);
      const split = results[0]?.split === 'validation' ? 'validation' : 'held-out';
      process.stdout.write(
        table([
          ['agent', 'family', 'steps', 'final loss', `${split} pass@1`, 'checkpoint'],
          ...results.map((r) => [r.name, r.family, String(r.steps), r.loss.toFixed(4), pct(r.accuracy), r.dir]),
        ]) + '\n',
      );
    });
}

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

/** The texts of step `step`: epochs of a permutation seeded by (dataSeed, epoch), as training batches are. */
export function pretrainBatch(count: number, step: number, batchSize: number, dataSeed: number): number[] {
  const indices = Array.from({ length: count }, (_, i) => i);
  return epochBatch(indices, step, batchSize, (epoch) => mixSeed(dataSeed, 'pretrain', epoch));
}

/** pass@1 of one agent on the eval split's problems (held-out or validation) with the eval sampling settings (ground truth for monitoring only). */
async function heldOutAccuracy(
  ctx: RunContext,
  agent: Agent,
  keys: AnswerKeys,
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
  return mean(
    problems.map((p, i) => {
      const ref = keys.referenceKey(p.id, ctx.data.groundTruth);
      return mean(out[i]!.map((c) => (ref !== null && keys.of(c.text).key === ref ? 1 : 0)));
    }),
  );
}

/** Pretrain as the flags say; resolves to one result per pretrained agent. */
export async function runPretrain(flags: PretrainFlags): Promise<PretrainResult[]> {
  if (!flags.config) throw noConfig('corl pretrain');
  if (!flags.out)
    throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --out <dir> for the checkpoint, got none', { where: '--out' });
  const steps = intFlag('--steps', flags.steps, 1);
  const loaded = await loadConfig(flags.config, { overrides: steps === undefined ? {} : { 'pretrain.steps': steps } });
  const only = intFlag('--agent', flags.agent, 0);
  if (only !== undefined && only >= loaded.config.agents.length) {
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected --agent in [0, ${loaded.config.agents.length - 1}], got ${only}`,
      { where: '--agent' },
    );
  }
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
    const agents = ctx.agents.filter((a) => only === undefined || a.index === only);
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
    const pc = loaded.config.pretrain;
    const keys = gradingKeys(ctx);
    const prompts = corpus ? corpus.promptLengths : ctx.data.pretrainPromptLengths;
    // A corpus of other texts (a verifier's verdicts) does not teach the task: its pass@1 is not measured.
    const measure = corpus === undefined;
    const out = path.resolve(flags.out);
    const dirOf = (a: Agent) => (agents.length === 1 ? out : path.join(out, a.name));
    const log = (line: string) => {
      if (!flags.quiet) process.stderr.write(`${line}\n`);
    };
    fs.mkdirSync(out, { recursive: true });
    const metricsFile = path.join(out, 'pretrain-metrics.jsonl');
    const record = (r: Record<string, unknown>) => fs.appendFileSync(metricsFile, JSON.stringify(r) + '\n');
    return await Promise.all(
      agents.map(async (a): Promise<PretrainResult> => {
        const policy = a.policy as Policy & Required<Pick<Policy, 'pretrainStep'>>;
        let loss = NaN;
        let tokens = 0;
        let t0 = Date.now();
        for (let step = 0; step < pc.steps; step++) {
          const idx = pretrainBatch(texts.length, step, pc.batchSize, loaded.config.dataSeed);
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
            const acc = await heldOutAccuracy(ctx, a, keys, done);
            if (acc !== undefined) metrics['eval/accuracy'] = acc;
          }
          if (done % pc.logEvery === 0 || done === pc.steps || metrics['eval/accuracy'] !== undefined) {
            const secs = (Date.now() - t0) / 1000;
            record({ phase: 'pretrain', step: done, agent: a.index, metrics });
            log(
              `pretrain ${a.name} step ${done}/${pc.steps} loss ${loss.toFixed(4)} lr ${(r.metrics['optim/lr'] ?? 0).toExponential(2)} ${(tokens / Math.max(secs, 1e-3)).toFixed(0)} tokens/s${metrics['eval/accuracy'] !== undefined ? ` ${ctx.loaded.config.eval.split === 'validation' ? 'validation' : 'held-out'} pass@1 ${pct(metrics['eval/accuracy'])}` : ''}`,
            );
            tokens = 0;
            t0 = Date.now();
          }
        }
        const accuracy = measure ? await heldOutAccuracy(ctx, a, keys, pc.steps) : undefined;
        record({
          phase: 'pretrain-eval',
          step: pc.steps,
          agent: a.index,
          metrics: { 'loss/ce': loss, ...(accuracy !== undefined ? { 'eval/accuracy': accuracy } : {}) },
        });
        const dir = dirOf(a);
        await policy.save(dir);
        return {
          name: a.name,
          family: policy.describe().family,
          steps: pc.steps,
          loss,
          accuracy,
          split: ctx.loaded.config.eval.split,
          dir,
        };
      }),
    );
  } finally {
    await ctx.close();
  }
}
