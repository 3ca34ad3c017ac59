// The one line `corl compare --verdict` ends with (npm start's), and that its report page carries:
// the last config against each of the others, with intervals when there are seeds enough, else the
// committed result of the same configs.
import { committedFor } from './committed';
import { resultRow, type ReportGroup } from './html';
import { evalStepFiles } from './markdown';
import { analysePairs } from './paired';
import { verdictLine, type CommittedResult } from './verdict';
import { readTextMaybeGz } from '../util/gz';

/** What a comparison's one-line verdict says, and the committed results it quotes. */
export interface OneLineVerdict {
  readonly line: string;
  readonly committed: readonly CommittedResult[];
}

/** Evaluation problems per agent of a run (its step-0 evaluation file; 0 without one). */
function problemsOf(dir: string | undefined): number {
  const file = dir ? evalStepFiles(dir).get(0) : undefined;
  return file
    ? readTextMaybeGz(file, { openSealed: true })
        .split('\n')
        .filter((l) => l.trim() && (JSON.parse(l) as { agent?: unknown }).agent === 0).length
    : 0;
}

/**
 * The one-line verdict of the configs `groups` (in the order named, the method last), on `split`:
 * with one seed, the committed result under `committedDir` of the same configs, else the page
 * `seeAlso` (docs/results.md) when there is one. Undefined with fewer than two configs.
 */
export function oneLineVerdict(
  groups: readonly ReportGroup[],
  split: 'held-out' | 'validation',
  committedDir: string,
  seeAlso?: string,
): OneLineVerdict | undefined {
  if (groups.length < 2) return undefined;
  const rows = groups.map(resultRow);
  const method = groups[groups.length - 1]!;
  const baselines = groups.slice(0, -1);
  const pairs = analysePairs(
    groups,
    baselines.map((b) => ({ a: method.name, b: b.name })),
    'final',
    { alpha: 0.05 },
  );
  const committed = committedFor(groups, committedDir);
  const seeds = Math.min(...groups.map((g) => g.runs.length));
  const line = verdictLine({
    method: rows[rows.length - 1]!,
    baselines: rows.slice(0, -1),
    pairs,
    problems: problemsOf(method.runs[0]?.dir),
    split,
    committed,
    ...(committed.length === 0 && seeds < 2 && seeAlso ? { seeAlso } : {}),
  });
  return { line, committed };
}
