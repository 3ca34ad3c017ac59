// Which sealed runs a plan's look has opened. A planned run's evaluations are sealed until a look
// shows them (core/util/seal.ts): a read of its comparison, under the plan, whose runs name it. A
// path inside a sealed run (its checkpoints, its config.json) is found here, so that the programs
// that would show or recompute its held-out results (`corl eval` of its checkpoints, its own page)
// know whether the look has opened it yet.
import * as path from 'node:path';
import { isSealedRunFolder } from '../util/seal';
import { readCompareMeta } from './compare';
import { folderLedger, readShows } from './reads';

/** A sealed run: its folder, its comparison folder, its config's name and seed index. */
export interface SealedRun {
  readonly run: string;
  readonly comparison: string;
  readonly config: string;
  readonly index: number | undefined;
}

/**
 * The sealed run that holds `p` (the run folder itself or anything inside it), if any: a folder with
 * a run.json that says `"sealed": true`, or a `<comparison>/<config>/seed-<i>` folder whose
 * comparison holds a seal.key (so a run.json edited to say nothing still counts).
 */
export function sealedRunOf(p: string): SealedRun | undefined {
  for (let d = path.resolve(p); ; d = path.dirname(d)) {
    const m = /^seed-(\d+)$/.exec(path.basename(d));
    const cmp = path.dirname(path.dirname(d));
    if (isSealedRunFolder(d))
      return {
        run: d,
        comparison: cmp,
        config: path.basename(path.dirname(d)),
        index: m ? Number(m[1]) : undefined,
      };
    if (path.dirname(d) === d) return undefined;
  }
}

/**
 * Whether the plan's look has opened a sealed run: its comparison's ledger is intact and holds a
 * read under the comparison's plan whose runs name this run. A run copied out of its comparison, a
 * damaged ledger or compare.json, or no such read: not opened.
 */
export function lookOpened(s: SealedRun): boolean {
  if (s.index === undefined) return false;
  try {
    const meta = readCompareMeta(s.comparison) as { plan?: { sha256?: unknown } };
    const plan = meta.plan?.sha256;
    if (typeof plan !== 'string') return false;
    const ledger = folderLedger(s.comparison);
    return (
      ledger.problems.length === 0 && ledger.reads.some((r) => r.plan === plan && readShows(r, s.config, s.index!))
    );
  } catch {
    return false;
  }
}
