import * as path from 'node:path';
import type { Command } from 'commander';
import { CorlError } from '../../errors';
import { DEFAULT_INSTRUCTION } from '../../rephrase/rephrase';
import { rephraseConfig } from '../../rephrase/sources';
import { intFlag } from '../output';
import { noConfig, pickConfig } from '../config-arg';

interface RephraseFlags {
  config?: string;
  backend?: string;
  agent?: string;
  in?: string;
  out?: string;
  variants?: string;
  temperature?: string;
  topP?: string;
  maxTokens?: string;
  instruction?: string;
  batch?: string;
  resume?: boolean;
  force?: boolean;
  quiet?: boolean;
}

function numberFlag(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected ${name} to be a number in [${min}, ${max}], got "${value}"`, {
      where: name,
    });
  return n;
}

/** `corl rephrase`: offline input rephrasing into a variants file that `corl:rephrase` reads. */
export function rephraseCommand(program: Command): void {
  program
    .command('rephrase')
    .argument('[config]', 'config file (the same as -c <file>)')
    .description(
      'rephrase problems through a chat backend into row-aligned variants (same ids and answers) for corl:rephrase; variants that change a number are dropped',
    )
    .option(
      '-c, --config <file>',
      'config: its plugins, seed, and (without --backend) agent policy and (without --in) task',
    )
    .option(
      '--backend <file>',
      'JSON file with a policy selection, e.g. {"use": "corl:openai", "options": {...}} (default: the policy of --agent)',
    )
    .option(
      '--agent <name|index>',
      'the config agent whose policy rephrases, when there is no --backend (default: the first)',
    )
    .option(
      '--in <file>',
      'problems JSONL: {"id", "prompt"|"question"|"problem", "answer"?, "images"?} per line (default: the config\'s task, train then held-out)',
    )
    .option(
      '--out <file>',
      'variants JSONL to write: {"id", "variants": [...], "answer"?} per input row, in input order',
    )
    .option('--variants <n>', 'rephrasings asked for per problem', '1')
    .option('--temperature <t>', 'sampling temperature', '0.7')
    .option('--top-p <p>', 'nucleus sampling mass', '1')
    .option('--max-tokens <n>', 'longest rephrasing, in tokens', '512')
    .option('--instruction <text>', 'instruction sent per problem; {prompt} is replaced by the problem text')
    .option('--batch <n>', 'problems per sampling call (and per progress line and partial-file write)', '16')
    .option('--resume', 'continue <out>.partial left by an interrupted run')
    .option('--force', 'replace an existing --out file (only once the new one is complete)')
    .option('-q, --quiet', 'no progress lines (dropped variants are still reported)')
    .addHelpText(
      'after',
      [
        '',
        'A variant is dropped, and reported with its input line and id, when it is empty, when the numbers',
        "in it differ from the original's (as a multiset), or when it contains the reference answer and the",
        'original does not. A problem whose every variant is dropped keeps its row with "variants": [].',
        'Output goes to <out>.partial batch by batch and is renamed onto <out> when complete; an existing',
        '<out> is never touched before then. Use the file with diversity {"use": "corl:rephrase",',
        '"options": {"file": "<out>", "missing": "original"}}.',
        '',
        'Examples:',
        '  corl rephrase -c configs/co-rl.json --backend vllm.json --in gsm8k.jsonl --out gsm8k.variants.jsonl',
        '  corl rephrase -c vlm.json --agent judge --out variants.jsonl --variants 2 --resume',
        '',
      ].join('\n'),
    )
    .action(async (config: string | undefined, flags: RephraseFlags) => {
      flags.config = pickConfig(config, flags.config, 'corl rephrase');
      if (!flags.config) throw noConfig('corl rephrase');
      if (!flags.out) throw new CorlError('CORL_ERR_CLI_USAGE', 'expected --out <file>, got none', { where: '--out' });
      if (flags.backend && flags.agent)
        throw new CorlError('CORL_ERR_CLI_USAGE', 'expected either --backend or --agent, got both', {
          where: '--agent',
        });
      const variants = intFlag('--variants', flags.variants, 1)!;
      const batch = intFlag('--batch', flags.batch, 1)!;
      const maxTokens = intFlag('--max-tokens', flags.maxTokens, 1)!;
      const temperature = numberFlag('--temperature', flags.temperature, 0.7, 0, 10);
      const topP = numberFlag('--top-p', flags.topP, 1, Number.MIN_VALUE, 1);
      const s = await rephraseConfig(flags.config, {
        ...(flags.in !== undefined ? { in: flags.in } : {}),
        ...(flags.backend !== undefined ? { backend: flags.backend } : {}),
        ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
        out: path.resolve(flags.out),
        variants,
        instruction: flags.instruction ?? DEFAULT_INSTRUCTION,
        temperature,
        topP,
        maxTokens,
        batch,
        resume: flags.resume === true,
        force: flags.force === true,
        log: (line) => {
          if (!flags.quiet || !line.startsWith('rephrase:')) process.stderr.write(`${line}\n`);
        },
      });
      process.stdout.write(
        `${s.problems} problem(s)${s.resumed ? ` (${s.resumed} resumed)` : ''}: ${s.kept} variant(s) kept, ${s.dropped} dropped; wrote ${flags.out}\n`,
      );
    });
}
