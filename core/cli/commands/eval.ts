import * as path from 'node:path';
import type { Command } from 'commander';
import { checkDataOptions, runEvaluation } from '../../api/evaluate';
import type { Usage } from '../../api/usage';
import { CorlError } from '../../errors';
import { BENCHMARK_FORMATS, type BenchmarkFormat, type EvalSummary } from '../../trainer/benchmark';
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
      `answer format of --data: ${BENCHMARK_FORMATS.join(' | ')} (default: math when the first row has "problem", plain when it has "prompt", else gsm8k)`,
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

/** `corl eval`'s names for its inputs, in its usage errors. */
const CLI_EVAL: Usage = {
  code: 'CORL_ERR_CLI_USAGE',
  name: (input) => (input === 'config' ? '-c' : `--${input.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`),
};

/** Evaluate as the flags say. */
export async function runEval(flags: EvalFlags): Promise<EvalSummary> {
  if (!flags.config) throw noConfig('corl eval');
  const data = {
    ...(flags.data !== undefined ? { data: flags.data } : {}),
    ...(flags.format !== undefined ? { format: flags.format as BenchmarkFormat } : {}),
    ...(flags.template !== undefined ? { template: flags.template } : {}),
  };
  checkDataOptions(data, CLI_EVAL);
  const numbers = {
    samples: intFlag('--samples', flags.samples, 1),
    ensemble: intFlag('--ensemble', flags.ensemble, 1),
    limit: intFlag('--limit', flags.limit, 0),
    batch: intFlag('--batch', flags.batch ?? '32', 0),
    temperature: numberFlag('--temperature', flags.temperature, 0),
    maxTokens: intFlag('--max-tokens', flags.maxTokens, 1),
  };
  return runEvaluation(
    {
      config: flags.config,
      ...data,
      ...Object.fromEntries(Object.entries(numbers).filter(([, v]) => v !== undefined)),
      agent: flags.agent ?? 'all',
      ...(flags.out !== undefined ? { out: flags.out } : {}),
      progress: flags.quiet ? 'none' : 'auto',
    },
    CLI_EVAL,
  );
}
