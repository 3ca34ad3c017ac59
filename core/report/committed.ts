// The committed many-seed result of the same configs (docs/results/*/verdicts.json), for a verdict
// that one seed cannot give: configs are "the same" when their sources agree but for name,
// description, seed and $schema (./identity.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Design, PlanRecord } from './design';
import { pairFromValues, type PairResult, type PrimaryMetric } from './paired';
import { portablePath } from './portable';
import type { CommittedResult } from './verdict';
import { readUserText } from '../util/files';

interface VerdictsFile {
  readonly design?: Design;
  readonly plan?: Pick<PlanRecord, 'file' | 'sha256'> & { readonly name: string };
  readonly pairs?: readonly PairResult[];
  readonly identities?: Readonly<Record<string, string>>;
  readonly values?: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, number>>>>>>;
}

/**
 * The committed comparison under `dir` (its sub-folders' verdicts.json) holding configs with the
 * identities `a` and `b`, planned ones first, then the most seeds, then the most configs (the main
 * comparison rather than a copy of its runs in another): the decided pair when its design
 * names it, else the pair decided from the per-seed values at two-sided 5%. Undefined when none.
 */
export function committedResult(dir: string, a: string, b: string): CommittedResult | undefined {
  if (!fs.existsSync(dir)) return undefined;
  const found: (CommittedResult & { configs: number })[] = [];
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const file = path.join(dir, d.name, 'verdicts.json');
    if (!fs.existsSync(file)) continue;
    let v: VerdictsFile;
    try {
      v = JSON.parse(readUserText(file)) as VerdictsFile;
    } catch {
      continue;
    }
    const ids = Object.entries(v.identities ?? {});
    const na = ids.find(([, id]) => id === a)?.[0];
    const nb = ids.find(([, id]) => id === b)?.[0];
    if (!na || !nb || na === nb) continue;
    const decided = v.pairs?.find((p) => p.a === na && p.b === nb && p.n >= 2);
    const metric: PrimaryMetric = v.design?.metric ?? 'final';
    const values = v.values?.[metric];
    const pair =
      decided ??
      (values?.[na] && values[nb]
        ? pairFromValues({ a: na, b: nb }, metric, values[na], values[nb], 0.05, v.design?.margin)
        : undefined);
    if (pair && pair.n >= 2)
      found.push({ folder: portablePath(path.resolve(dir, d.name)), planned: !!v.plan, pair, configs: ids.length });
  }
  found.sort(
    (x, y) =>
      Number(y.planned) - Number(x.planned) ||
      y.pair.n - x.pair.n ||
      y.configs - x.configs ||
      x.folder.localeCompare(y.folder),
  );
  const best = found[0];
  return best && { folder: best.folder, planned: best.planned, pair: best.pair };
}
