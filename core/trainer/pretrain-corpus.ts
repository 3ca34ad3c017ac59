import { CorlError } from '../errors';
import { readTextMaybeGz } from '../util/gz';
import { parseJson } from '../util/json';

/** Pretraining texts read from a corpus file, as a task's `pretrainText` and `pretrainPromptLengths`. */
export interface PretrainCorpus {
  readonly texts: readonly string[];
  readonly promptLengths: readonly number[];
}

/**
 * Read `pretrain.corpus`: one `{"prompt": string, "completion": string}` object per line (blank lines
 * skipped; `.gz` is gunzipped). Each text is prompt + completion, and the prompt is context only.
 */
export function readPretrainCorpus(file: string): PretrainCorpus {
  let text: string;
  try {
    text = readTextMaybeGz(file);
  } catch (e) {
    throw new CorlError('CORL_ERR_TASK_DATA', `expected a readable pretraining corpus, got ${(e as Error).message}`, {
      where: 'pretrain.corpus',
      hint: 'give a JSONL file of {"prompt", "completion"} rows, relative to the config file',
    });
  }
  const texts: string[] = [];
  const promptLengths: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${file}:${i + 1}`;
    let row: unknown;
    try {
      row = parseJson(line);
    } catch (e) {
      throw new CorlError('CORL_ERR_TASK_DATA', `expected a JSON object, got ${(e as Error).message}`, { where });
    }
    const r = row as { prompt?: unknown; completion?: unknown } | null;
    if (typeof r !== 'object' || r === null || typeof r.prompt !== 'string' || typeof r.completion !== 'string') {
      throw new CorlError(
        'CORL_ERR_TASK_DATA',
        `expected {"prompt": string, "completion": string}, got ${line.slice(0, 80)}`,
        {
          where,
          hint: 'every row needs a string "prompt" (context only) and a non-empty string "completion" (trained on)',
        },
      );
    }
    if (r.completion === '')
      throw new CorlError('CORL_ERR_TASK_DATA', 'expected a non-empty "completion", got ""', { where });
    texts.push(r.prompt + r.completion);
    promptLengths.push(r.prompt.length);
  });
  if (texts.length === 0)
    throw new CorlError('CORL_ERR_TASK_DATA', 'expected at least one row in the pretraining corpus, got none', {
      where: file,
    });
  return { texts, promptLengths };
}
