import type { Command } from 'commander';
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import type { AnswerExtractor } from '../../contracts/answer-extractor';
import type { Equivalence } from '../../contracts/equivalence';
import { standalonePlugin, standaloneRegistry } from '../../config/standalone';
import { CorlError } from '../../errors';
import { parseJson } from '../../util/json';
import { describeStat, kernelFileSystem } from '../../util/files';

interface AnswersFlags {
  extractor: string;
  equivalence: string;
  extractorOptions?: string;
  equivalenceOptions?: string;
  plugin?: string[];
}

/** `corl answers extract|equal`: run the grading plugins over JSONL, for checking graders on one's data. */
export function answersCommand(program: Command): void {
  const answers = program
    .command('answers')
    .description(
      'check answer extraction and equivalence on your data: JSONL in (a file or stdin), one JSON line out per input line',
    );
  const common = (c: Command): Command =>
    c
      .argument('[file]', 'JSONL input (default: stdin)')
      .option('--extractor <name>', 'answer extractor plugin', 'corl:math')
      .option('--equivalence <name>', 'equivalence plugin', 'corl:math')
      .option('--extractor-options <json>', 'options of the extractor, as JSON')
      .option('--equivalence-options <json>', 'options of the equivalence, as JSON')
      .option('--plugin <module...>', 'also load these plugin modules');
  common(answers.command('extract'))
    .description('lines {"text": completion} → {"answer": raw answer or null, "key": canonical key or null}')
    .action(async (file: string | undefined, flags: AnswersFlags) => {
      const tools = await buildTools(flags);
      try {
        await eachLine(file, 'text', ['text'], async (o) => {
          const answer = tools.extractor.extract(o.text!);
          return { answer, key: answer === null ? null : tools.equivalence.key(answer) };
        });
      } finally {
        await tools.equivalence.close?.();
      }
    });
  common(answers.command('equal'))
    .description(
      'lines {"a": answer, "b": answer} → {"equal": true|false} (raw answers are keyed first; an empty answer equals nothing)',
    )
    .action(async (file: string | undefined, flags: AnswersFlags) => {
      const tools = await buildTools(flags);
      try {
        await eachLine(file, 'a and b', ['a', 'b'], async (o) => {
          const a = tools.equivalence.key(o.a!);
          const b = tools.equivalence.key(o.b!);
          return { equal: a !== null && b !== null && (a === b || (await tools.equivalence.equal(a, b))) };
        });
      } finally {
        await tools.equivalence.close?.();
      }
    });
}

/** The extractor and equivalence the flags name, made as a config's would be. */
async function buildTools(flags: AnswersFlags): Promise<{ extractor: AnswerExtractor; equivalence: Equivalence }> {
  const baseDir = process.cwd();
  const registry = await standaloneRegistry(flags.plugin ?? [], baseDir);
  const extractor = await standalonePlugin(
    registry,
    'extractor',
    { use: flags.extractor, options: jsonObjectFlag(flags.extractorOptions, '--extractor-options') },
    { baseDir, where: '--extractor', optionsWhere: '--extractor-options' },
  );
  const equivalence = await standalonePlugin(
    registry,
    'equivalence',
    { use: flags.equivalence, options: jsonObjectFlag(flags.equivalenceOptions, '--equivalence-options') },
    { baseDir, where: '--equivalence', optionsWhere: '--equivalence-options' },
  );
  return { extractor, equivalence };
}

/** A flag holding a JSON object (absent: `{}`). */
function jsonObjectFlag(json: string | undefined, flag: string): Record<string, unknown> {
  let options: unknown = {};
  if (json !== undefined) {
    try {
      options = parseJson(json);
    } catch (e) {
      throw new CorlError('CORL_ERR_CLI_USAGE', `expected JSON in ${flag}, got ${(e as Error).message}`, {
        where: flag,
      });
    }
  }
  if (!options || typeof options !== 'object' || Array.isArray(options))
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected a JSON object in ${flag}, got ${JSON.stringify(options)}`, {
      where: flag,
    });
  return options as Record<string, unknown>;
}

/**
 * Read JSONL from `file` or stdin; each good line gives one output line. A bad line (not JSON, not an
 * object, a field missing or not a string) is reported on stderr with its line number and skipped;
 * blank lines are ignored. Ends with CORL_ERR_ANSWERS_INPUT (exit status 1) if any line was bad.
 */
async function eachLine(
  file: string | undefined,
  what: string,
  fields: readonly string[],
  handle: (o: Record<string, string>) => Promise<unknown>,
): Promise<void> {
  let input: NodeJS.ReadableStream;
  if (file) {
    // Read as a stream (a FIFO is fine, as stdin is), but never a device, a socket or a kernel file.
    const st = fs.existsSync(file) ? fs.statSync(file) : undefined;
    const kernel = kernelFileSystem(file);
    const problem = !st
      ? 'no file'
      : !st.isFile() && !st.isFIFO()
        ? describeStat(st)
        : kernel
          ? `a file of the kernel's ${kernel} file system`
          : undefined;
    if (problem)
      throw new CorlError('CORL_ERR_IO', `expected a readable JSONL file, got ${problem} at ${file}`, { where: file });
    input = fs.createReadStream(file, { encoding: 'utf8' });
  } else {
    input = process.stdin;
  }
  const where = file ?? '<stdin>';
  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  let bad = 0;
  for await (const line of rl) {
    n++;
    if (line.trim() === '') continue;
    let value: unknown;
    let problem: string | undefined;
    try {
      value = parseJson(line);
    } catch (e) {
      problem = `expected a JSON object, got invalid JSON (${(e as Error).message})`;
    }
    if (!problem) {
      if (!value || typeof value !== 'object' || Array.isArray(value))
        problem = `expected a JSON object with ${what}, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`;
      else {
        const missing = fields.find((f) => typeof (value as Record<string, unknown>)[f] !== 'string');
        if (missing) {
          const got = (value as Record<string, unknown>)[missing];
          problem = `expected a string field "${missing}", got ${got === undefined ? 'none' : JSON.stringify(got)?.slice(0, 40)}`;
        }
      }
    }
    if (problem) {
      bad++;
      process.stderr.write(`CORL_ERR_ANSWERS_INPUT: ${where}:${n}: ${problem}; line skipped\n`);
      continue;
    }
    const out = await handle(value as Record<string, string>);
    if (!process.stdout.write(JSON.stringify(out) + '\n')) await new Promise((r) => process.stdout.once('drain', r));
  }
  if (bad > 0) {
    throw new CorlError(
      'CORL_ERR_ANSWERS_INPUT',
      `expected every line of ${where} to be a JSON object with ${what}, got ${bad} bad line${bad === 1 ? '' : 's'} of ${n} (reported above, skipped)`,
      { where },
    );
  }
}
