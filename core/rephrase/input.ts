// Problems for `corl rephrase`: from a JSONL file, or from a config's task.
import * as path from 'node:path';
import type { TaskData } from '../contracts/task';
import { CorlError, errorLine } from '../errors';
import { readUserText, NotARegularFile } from '../util/files';
import { parseJson } from '../util/json';

/** One problem to rephrase, with where it came from (for reports). */
export interface RephraseRow {
  readonly id: string;
  readonly prompt: string;
  /** The reference answer, when known: copied to the output and used by the leak check. */
  readonly answer?: string;
  /** Local image files (absolute), shown to a chat backend with the instruction. */
  readonly images?: readonly string[];
  /** 1-based line of the input file, or 1-based row of the task (train, then held-out). */
  readonly line: number;
}

/**
 * Read a problems JSONL file: one object per line with `id` (string or number), the text in
 * `prompt` (or `question`, or `problem`), and optionally `answer` (a GSM8K-style "… #### 42" keeps
 * what follows "####") and `images` (relative to the file). Blank lines are skipped.
 */
export function readProblemsJsonl(file: string): RephraseRow[] {
  let text: string;
  try {
    text = readUserText(file);
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected a readable problems file for --in, got ${e instanceof NotARegularFile ? e.message : ((e as NodeJS.ErrnoException).code ?? errorLine(e))}`,
      { where: file },
    );
  }
  const rows: RephraseRow[] = [];
  const seen = new Set<string>();
  const dir = path.dirname(file);
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    const where = `${file}:${i + 1}`;
    let v: Record<string, unknown>;
    try {
      v = parseJson(raw) as Record<string, unknown>;
    } catch {
      throw new CorlError('CORL_ERR_TASK_DATA', 'expected a JSON object, got invalid JSON', { where });
    }
    if (!v || typeof v !== 'object' || Array.isArray(v))
      throw new CorlError('CORL_ERR_TASK_DATA', `expected a JSON object, got ${JSON.stringify(v)}`, { where });
    const id = typeof v.id === 'number' ? String(v.id) : v.id;
    if (typeof id !== 'string' || id === '')
      throw new CorlError('CORL_ERR_TASK_DATA', `expected an "id" (string or number), got ${JSON.stringify(v.id)}`, {
        where,
        hint: 'give every row an id: variants are matched to problems by id',
      });
    if (seen.has(id)) throw new CorlError('CORL_ERR_TASK_DATA', `expected unique ids, got "${id}" twice`, { where });
    seen.add(id);
    const prompt = [v.prompt, v.question, v.problem].find((x) => typeof x === 'string');
    if (typeof prompt !== 'string')
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        'expected the problem text in "prompt", "question" or "problem", got none',
        { where },
      );
    let answer: string | undefined;
    if (typeof v.answer === 'number') answer = String(v.answer);
    else if (typeof v.answer === 'string')
      answer = v.answer.includes('####') ? v.answer.slice(v.answer.lastIndexOf('####') + 4).trim() : v.answer;
    let images: string[] | undefined;
    if (v.images !== undefined) {
      if (!Array.isArray(v.images) || !v.images.every((f) => typeof f === 'string'))
        throw new CorlError(
          'CORL_ERR_TASK_DATA',
          `expected "images" to be a list of file paths, got ${JSON.stringify(v.images)}`,
          { where },
        );
      images = v.images.map((f: string) => path.resolve(dir, f));
    }
    rows.push({ id, prompt, line: i + 1, ...(answer !== undefined ? { answer } : {}), ...(images ? { images } : {}) });
  });
  return rows;
}

/** The problems of a loaded task: train, then held-out, with their references. */
export function taskRows(data: TaskData): RephraseRow[] {
  return [...data.train, ...data.heldOut].map((p, i) => {
    const answer = data.groundTruth.get(p.id)?.answer;
    return {
      id: p.id,
      prompt: p.prompt,
      line: i + 1,
      ...(answer !== undefined ? { answer } : {}),
      ...(p.images ? { images: p.images } : {}),
    };
  });
}
