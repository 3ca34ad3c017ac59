import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import * as path from 'node:path';
import type { Problem, Reference } from '../../core/contracts/problem';
import { MapGroundTruth } from '../../core/contracts/problem';
import type { Task, TaskData } from '../../core/contracts/task';
import { CorlError, errorLine } from '../../core/errors';
import { readUserText } from '../../core/util/files';
import { parseJson } from '../../core/util/json';
import { definePlugin } from '../../core/registry/define';
import { chatDiscussionPrompt, chatEvaluationPrompt } from '../../core/discussion/prompts';
import { mixSeed, Rng } from '../../core/util/rng';
import { lastBoxed } from '../answers/extract';

/** How the reference answer is written in a file. */
export type JsonlAnswerFormat = JsonlOptions['format'];

/** Field names each format reads when `fields` does not name them. */
export const FORMAT_FIELDS: Readonly<
  Record<JsonlAnswerFormat, { question: string; answer: string; id: readonly string[] }>
> = {
  gsm8k: { question: 'question', answer: 'answer', id: ['id'] },
  math: { question: 'problem', answer: 'answer', id: ['unique_id', 'id'] },
  plain: { question: 'prompt', answer: 'answer', id: ['id'] },
};

/** Metadata a MATH row may carry (never the answer). */
const MATH_METADATA = ['level', 'subject', 'type'];

/** One parsed line. */
export interface JsonlRow {
  readonly id: string;
  readonly question: string;
  readonly reference?: Reference;
  readonly metadata?: Record<string, unknown>;
  /** 1-based line in its file. */
  readonly line: number;
}

/** The reference of a GSM8K answer: what follows the last `####`, thousands commas removed. */
export function gsm8kReference(answer: string): { answer: string; solution: string } | null {
  const at = answer.lastIndexOf('####');
  if (at < 0) return null;
  const final = answer
    .slice(at + 4)
    .trim()
    .replace(/,/g, '');
  if (final === '') return null;
  return { answer: final, solution: answer.slice(0, at).trim() };
}

/** Read one JSONL file of problems (blank lines skipped). Errors name the file and line and say what to fix. */
export function readJsonlProblems(
  file: string,
  format: JsonlAnswerFormat,
  fields: JsonlOptions['fields'] = {},
  option = 'task.options.train',
): JsonlRow[] {
  let text: string;
  try {
    text = readUserText(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CorlError(
      'CORL_ERR_TASK_DATA',
      `expected a readable JSONL file, got ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder' : errorLine(e)}`,
      {
        where: file,
        hint: `check ${option} (relative paths are resolved against the config's folder)`,
      },
    );
  }
  const defaults = FORMAT_FIELDS[format];
  const qField = fields.question ?? defaults.question;
  const aField = fields.answer ?? defaults.answer;
  const idFields = fields.id !== undefined ? [fields.id] : defaults.id;
  const stem = path.basename(file).replace(/\.jsonl?$/i, '');
  const rows: JsonlRow[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    const line = i + 1;
    const where = `${file}:${line}`;
    let v: unknown;
    try {
      v = parseJson(raw);
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        `expected one JSON object per line, got invalid JSON (${errorLine(e)})`,
        { where, hint: 'fix or remove the line' },
      );
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      throw new CorlError('CORL_ERR_TASK_DATA', `expected a JSON object, got ${JSON.stringify(v)?.slice(0, 60)}`, {
        where,
        hint: 'write one {...} object per line',
      });
    }
    const o = v as Record<string, unknown>;
    const question = o[qField];
    if (typeof question !== 'string' || question.trim() === '') {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        `expected the problem text in "${qField}" (format ${format}), got ${question === undefined ? 'no such field' : JSON.stringify(question)?.slice(0, 60)}`,
        {
          where,
          hint: `add "${qField}" to the line, or name the field that holds the text with options.fields.question`,
        },
      );
    }
    let id: string | undefined;
    for (const f of idFields) {
      const x = o[f];
      if (typeof x === 'string' && x !== '') {
        id = x;
        break;
      }
      if (typeof x === 'number' && Number.isFinite(x)) {
        id = String(x);
        break;
      }
    }
    if (id === undefined) {
      if (fields.id !== undefined) {
        throw new CorlError(
          'CORL_ERR_TASK_DATA',
          `expected an id (string or number) in "${fields.id}", got ${JSON.stringify(o[fields.id]) ?? 'no such field'}`,
          { where, hint: 'give the line an id, or drop options.fields.id to number lines as <file>-<line>' },
        );
      }
      id = `${stem}-${line}`;
    }
    const reference = referenceOf(o, format, aField, fields.answer !== undefined, where);
    const metadata: Record<string, unknown> = {};
    if (format === 'math') for (const k of MATH_METADATA) if (o[k] !== undefined) metadata[k] = o[k];
    rows.push({
      id,
      question,
      line,
      ...(reference ? { reference } : {}),
      ...(Object.keys(metadata).length ? { metadata } : {}),
    });
  }
  return rows;
}

function referenceOf(
  o: Record<string, unknown>,
  format: JsonlAnswerFormat,
  field: string,
  named: boolean,
  where: string,
): Reference | undefined {
  const a = o[field];
  const bad = (expected: string, hint: string): CorlError =>
    new CorlError('CORL_ERR_TASK_DATA', `expected ${expected} in "${field}", got ${JSON.stringify(a)?.slice(0, 80)}`, {
      where,
      hint,
    });
  if (format === 'gsm8k') {
    if (typeof a === 'number' && Number.isFinite(a)) return { answer: String(a) };
    if (a === undefined) return undefined;
    if (typeof a !== 'string')
      throw bad(
        'a GSM8K answer (worked solution ending in "#### <number>")',
        'fix the line, or use format "plain" for bare answers',
      );
    const r = gsm8kReference(a);
    if (!r)
      throw bad(
        'a GSM8K answer ending in "#### <number>"',
        'end the answer with "#### <final answer>", or use format "plain" for bare answers',
      );
    return r.solution ? { answer: r.answer, solution: r.solution } : { answer: r.answer };
  }
  if (format === 'math') {
    const solution = typeof o.solution === 'string' ? o.solution : undefined;
    if (typeof a === 'number' && Number.isFinite(a)) return { answer: String(a), ...(solution ? { solution } : {}) };
    if (typeof a === 'string' && a.trim() !== '') return { answer: a.trim(), ...(solution ? { solution } : {}) };
    if (a !== undefined && (named || typeof a !== 'string'))
      throw bad(
        'a final answer (string or number)',
        'fix the line, or drop the field so the last \\boxed{} of "solution" is used',
      );
    if (solution !== undefined) {
      const boxed = lastBoxed(solution);
      if (boxed === null) {
        throw new CorlError(
          'CORL_ERR_TASK_DATA',
          `expected "${field}", or a "solution" with a \\boxed{...} final answer, got a solution without one`,
          { where, hint: 'add the final answer as "answer", or box it in the solution' },
        );
      }
      return { answer: boxed, solution };
    }
    return undefined;
  }
  if (a === undefined) return undefined;
  if (typeof a === 'number' && Number.isFinite(a)) return { answer: String(a) };
  if (typeof a !== 'string') throw bad('the reference answer as a string or number', 'fix the line');
  return { answer: a.trim() };
}

/** The indices held out of `n` rows: a seeded sample of round(fraction·n), returned in file order. */
export function heldOutIndices(n: number, fraction: number, seed: number): Set<number> {
  const count = Math.round(n * fraction);
  const order = new Rng(mixSeed(seed, 'jsonl-split')).shuffle(Array.from({ length: n }, (_, i) => i));
  return new Set(order.slice(0, count));
}

const JSONL_TASK_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    train: {
      type: 'string',
      minLength: 1,
      description:
        'training problems JSONL, relative to the config (optional when heldOut is given: an evaluation-only task)',
    },
    heldOut: {
      type: 'string',
      minLength: 1,
      description:
        'held-out problems JSONL, relative to the config; without it, heldOutFraction of the train file is held out',
    },
    heldOutFraction: {
      type: 'number',
      minimum: 0,
      exclusiveMaximum: 1,
      default: 0,
      description: 'share of the train file held out (seeded by splitSeed) when there is no heldOut file',
    },
    splitSeed: {
      type: 'integer',
      default: 0,
      description: 'seed of the held-out split (independent of the run seed)',
    },
    format: {
      enum: ['gsm8k', 'math', 'plain'],
      default: 'gsm8k',
      description:
        'answer format: gsm8k (reference after "####", commas removed), math ("answer", else the last \\boxed{} of "solution"), plain ("answer" as is)',
    },
    fields: {
      type: 'object',
      default: {},
      description:
        "field names, when they differ from the format's (gsm8k: question/answer/id; math: problem/answer/unique_id; plain: prompt/answer/id); rows without an id are numbered after the file name and line, e.g. test-12",
      properties: {
        id: {
          type: 'string',
          minLength: 1,
          description: 'field holding the problem id (then required on every line)',
        },
        question: { type: 'string', minLength: 1, description: 'field holding the problem text' },
        answer: { type: 'string', minLength: 1, description: 'field holding the reference answer' },
      },
      additionalProperties: false,
    },
    limit: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description: 'at most this many problems per split, the first in file order (0: all)',
    },
    template: {
      type: 'string',
      pattern: '\\{question\\}',
      default: '{question}',
      description:
        'prompt text; {question} is replaced by the problem, e.g. "{question}\\nPut the final answer in \\\\boxed{}."',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
export type JsonlOptions = FromSchema<typeof JSONL_TASK_OPTIONS_SCHEMA>;

/** Problems from JSONL files: GSM8K, MATH / MATH-500, or plain question/answer rows. */
export const jsonlTask = definePlugin({
  manifest: {
    name: 'corl:jsonl',
    kind: 'task',
    description:
      'Problems from JSONL files (GSM8K "#### n" answers, MATH/MATH-500 \\boxed{} solutions, or plain answers), train and held-out files or a seeded split',
    corl: '^0.1.0',
    options: JSONL_TASK_OPTIONS_SCHEMA,
  },
  create(options: JsonlOptions, ctx): Task {
    if (options.train === undefined && options.heldOut === undefined) {
      throw new CorlError('CORL_ERR_PLUGIN_OPTIONS', 'expected a "train" or "heldOut" file, got neither', {
        where: 'task.options',
        hint: 'name at least one JSONL file',
      });
    }
    if (options.train === undefined && options.heldOutFraction > 0) {
      throw new CorlError('CORL_ERR_PLUGIN_OPTIONS', 'expected a train file to split with heldOutFraction, got none', {
        where: 'task.options.heldOutFraction',
        hint: 'give "train", or drop heldOutFraction',
      });
    }
    if (options.heldOut !== undefined && options.heldOutFraction > 0) {
      throw new CorlError(
        'CORL_ERR_PLUGIN_OPTIONS',
        `expected either a heldOut file or heldOutFraction, got both (heldOutFraction ${options.heldOutFraction})`,
        { where: 'task.options.heldOutFraction', hint: 'drop one of them' },
      );
    }
    const read = (file: string, option: string): JsonlRow[] =>
      readJsonlProblems(path.resolve(ctx.baseDir, file), options.format, options.fields, option);
    return {
      discussionPrompt: chatDiscussionPrompt,
      evaluationPrompt: chatEvaluationPrompt,
      async load(): Promise<TaskData> {
        let train = options.train !== undefined ? read(options.train, 'task.options.train') : [];
        let heldOut = options.heldOut !== undefined ? read(options.heldOut, 'task.options.heldOut') : [];
        if (options.heldOutFraction > 0) {
          const out = heldOutIndices(train.length, options.heldOutFraction, options.splitSeed);
          heldOut = train.filter((_, i) => out.has(i));
          train = train.filter((_, i) => !out.has(i));
        }
        if (options.limit > 0) {
          train = train.slice(0, options.limit);
          heldOut = heldOut.slice(0, options.limit);
        }
        const refs: [string, Reference][] = [];
        const seen = new Map<string, string>();
        const toProblems = (rows: JsonlRow[], file: string): Problem[] =>
          rows.map((r) => {
            const at = `${path.resolve(ctx.baseDir, file)}:${r.line}`;
            const before = seen.get(r.id);
            if (before !== undefined) {
              throw new CorlError(
                'CORL_ERR_TASK_DATA',
                `expected unique problem ids, got "${r.id}" again (first at ${before})`,
                { where: at, hint: 'give the lines distinct ids (ids are unique across train and held-out)' },
              );
            }
            seen.set(r.id, at);
            if (r.reference) refs.push([r.id, r.reference]);
            return {
              id: r.id,
              prompt: options.template.split('{question}').join(r.question),
              ...(r.metadata ? { metadata: r.metadata } : {}),
            };
          });
        const trainProblems = toProblems(train, options.train ?? '');
        const heldOutProblems = toProblems(heldOut, options.heldOut ?? options.train ?? '');
        return { train: trainProblems, heldOut: heldOutProblems, groundTruth: new MapGroundTruth(refs) };
      },
    };
  },
});
