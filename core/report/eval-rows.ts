import { existingOrGz, readTextMaybeGz } from '../util/gz';
import { CorlError } from '../errors';
import { checkEvalRow } from '../trainer/run-files';
import { parseJson } from '../util/json';
import { sampleAccuracy } from '../metrics/accuracy';

/** One evaluation row as the report reads it (`eval/step-*.jsonl`, plain or gzip-compressed). */
export interface GradedEvalRow {
  readonly agent: number;
  /** The problem's id, when the row has one. */
  readonly id?: string;
  /** The problem's category, when the task gives one. */
  readonly category?: string;
  /** Whether each sample's answer matched the reference (anything but `true` counts as wrong). */
  readonly correct: readonly boolean[];
}

/**
 * The evaluation rows of one step file (`file` or `file.gz`): every row with a numeric `agent` and a
 * `correct` array; other rows (a summary line, a row of another shape) are skipped. A line that is
 * not JSON stops the report with its file and line.
 */
export function readEvalRows(file: string): GradedEvalRow[] {
  const rows: GradedEvalRow[] = [];
  readTextMaybeGz(existingOrGz(file), { openSealed: true })
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let v: { agent?: unknown; id?: unknown; category?: unknown; correct?: unknown };
      try {
        v = parseJson(line) as typeof v;
      } catch {
        throw new CorlError('CORL_ERR_RUN_CORRUPT', 'expected a JSON evaluation row, got invalid JSON', {
          where: `${file}:${i + 1}`,
        });
      }
      // a summary line or a row of another kind is skipped; a row of agent results is checked whole
      if (v === null || typeof v !== 'object' || Array.isArray(v) || (!('agent' in v) && !('correct' in v))) return;
      checkEvalRow(v, file, i + 1);
      if (typeof v.agent !== 'number' || !Array.isArray(v.correct)) return;
      rows.push({
        agent: v.agent,
        ...(typeof v.id === 'string' ? { id: v.id } : {}),
        ...(typeof v.category === 'string' ? { category: v.category } : {}),
        correct: v.correct.map((c) => c === true),
      });
    });
  return rows;
}

/** The share of a row's samples that were right (NaN for a row without samples): the one pass@1 rule. */
export function passOf(row: GradedEvalRow): number {
  return sampleAccuracy(row.correct);
}
