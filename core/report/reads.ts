// The held-out reads of a comparison folder, counted in its reads.jsonl.
//
// A read is one rendering, for a person, of evaluation results on the held-out split (the results
// table, the report page, the verdicts, results.md; by `corl compare` at its end or at a look, or by
// `corl report`) over a set of finished runs that no earlier read of the folder showed. Rendering
// the same runs again (another `corl report`, a regenerated docs table) shows nothing new and is not
// a read. The ledger names each read's runs (config → seed indices), what rendered them and, under a
// plan, the plan's sha256; `reconstructed` entries were added by hand from the history of results
// made before corl counted reads. Renderings of the validation split are not counted. Held-out
// numbers a person sees elsewhere (the progress display of an unplanned comparison prints held-out
// pass@1 at every evaluation; a plan's comparison hides it) are not in the ledger.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../errors';
import { writeFileAtomic } from '../util/fs';
import type { ReportGroup } from './html';
import { seedIndex } from './paired';

/** The ledger's file in a comparison folder. */
export const READS_FILE = 'reads.jsonl';

/** One read. */
export interface Read {
  /** 1-based count. */
  readonly read: number;
  /** What rendered it ("corl compare", "corl report", "corl compare, look 2"). */
  readonly by: string;
  /** ISO time (absent from reconstructed entries whose time is unknown). */
  readonly at?: string;
  /** Finished runs shown: config name → seed indices as ranges ("3-18", "0-2,5"). */
  readonly runs: Readonly<Record<string, string>>;
  /** sha256 of the plan the comparison ran under, if any. */
  readonly plan?: string;
  /** Added by hand from the history of results made before corl counted reads. */
  readonly reconstructed?: boolean;
  readonly note?: string;
}

/** "0-2,5,7-8" for [0, 1, 2, 5, 7, 8]. */
export function ranges(xs: readonly number[]): string {
  const s = [...new Set(xs)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    out.push(j === i ? String(s[i]) : `${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

/** The runs of a rendering, as a ledger names them. */
export function runsOf(groups: readonly ReportGroup[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const g of [...groups].sort((a, b) => a.name.localeCompare(b.name)))
    out[g.name] = ranges(g.runs.map((r) => seedIndex(r) ?? -1).filter((i) => i >= 0));
  return out;
}

const same = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/** The reads recorded in a comparison folder (none when it has no ledger). */
export function readLedger(dir: string): Read[] {
  const file = path.join(dir, READS_FILE);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line, i) => {
      if (!line.trim()) return [];
      try {
        const r = JSON.parse(line) as Read;
        if (typeof r.read !== 'number' || !r.runs || typeof r.runs !== 'object') throw new Error('fields');
        return [r];
      } catch {
        throw new CorlError(
          'CORL_ERR_RUN_CORRUPT',
          `expected a read {"read", "by", "runs"} per line, got ${JSON.stringify(line.slice(0, 80))}`,
          {
            where: `${file}:${i + 1}`,
            hint: 'restore reads.jsonl from version control; it is append-only',
          },
        );
      }
    });
}

/**
 * Count a rendering of `groups` as a read of the held-out split, unless an earlier read showed
 * exactly these runs. Returns the ledger after it and whether this rendering was a new read.
 */
export async function countRead(
  dir: string,
  groups: readonly ReportGroup[],
  by: string,
  plan?: string,
): Promise<{ readonly reads: readonly Read[]; readonly counted: boolean }> {
  const reads = readLedger(dir);
  const runs = runsOf(groups);
  if (reads.some((r) => same(r.runs, runs))) return { reads, counted: false };
  const entry: Read = { read: reads.length + 1, by, at: new Date().toISOString(), runs, ...(plan ? { plan } : {}) };
  const all = [...reads, entry];
  await writeFileAtomic(path.join(dir, READS_FILE), all.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return { reads: all, counted: true };
}
