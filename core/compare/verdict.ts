// The one line `corl compare --verdict` ends with (npm start's): the last config against each of
// the others, with intervals when there are seeds enough, else the committed result of the same configs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoadedConfig } from '../config/load';
import { committedResult } from '../report/committed';
import { committedFolder, resultsPage, type Comparison } from '../report/compare';
import { resultRow } from '../report/html';
import { configDigest, SAME_CONFIG_OMIT } from '../report/identity';
import { evalStepFiles } from '../report/markdown';
import { analysePairs } from '../report/paired';
import { readTextMaybeGz } from '../util/gz';
import { verdictLine, type CommittedResult } from '../report/verdict';
import { readUserText } from '../util/files';

/** The verdict line of a comparison: its last config against each of the others. */
export function verdictFor(c: Comparison, loaded: readonly LoadedConfig[], committedDir?: string): string {
  const groups = c.groups;
  const rows = groups.map(resultRow);
  const method = groups[groups.length - 1]!;
  const baselines = groups.slice(0, -1);
  const pairs = analysePairs(
    groups,
    baselines.map((b) => ({ a: method.name, b: b.name })),
    'final',
    { alpha: 0.05 },
  );
  const first = method.runs[0];
  const file = first ? evalStepFiles(first.dir).get(0) : undefined;
  const problems = file
    ? readTextMaybeGz(file)
        .split('\n')
        .filter((l) => l.trim() && (JSON.parse(l) as { agent?: unknown }).agent === 0).length
    : 0;
  const split = loaded[loaded.length - 1]!.config.eval.split === 'validation' ? 'validation' : 'held-out';
  const dir = committedDir ?? committedFolder();
  const identity = (name: string): string | undefined => {
    const run = groups.find((g) => g.name === name)?.runs[0];
    const src = run && path.join(run.dir, 'config.source.json');
    return src && fs.existsSync(src) ? configDigest(JSON.parse(readUserText(src)), SAME_CONFIG_OMIT) : undefined;
  };
  const seeds = Math.min(...groups.map((g) => g.runs.length));
  const committed: CommittedResult[] = [];
  if (seeds < 2) {
    const m = identity(method.name);
    // the strongest baseline first: the last named (npm start: ttrl, then base)
    for (const b of [...baselines].reverse()) {
      const id = identity(b.name);
      const found = m && id ? committedResult(dir, m, id) : undefined;
      if (found) {
        committed.push(found);
        break;
      }
    }
  }
  const page = committed.length === 0 && seeds < 2 ? resultsPage() : undefined;
  return verdictLine({
    method: rows[rows.length - 1]!,
    baselines: rows.slice(0, -1),
    pairs,
    problems,
    split,
    committed,
    ...(page ? { seeAlso: page } : {}),
  });
}
