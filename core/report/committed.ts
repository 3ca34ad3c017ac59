// The committed many-seed result of the same configs (docs/results/*/verdicts.json), for a verdict
// that one seed cannot give: configs are "the same" when their sources agree but for name,
// description, seed, $schema, metrics sinks and how their paths are written (./identity.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Design, PlanRecord } from './design';
import type { ReportGroup } from './html';
import { sameConfigIdentity } from './identity';
import { pairFromValues, type PairResult, type PrimaryMetric } from './paired';
import { portablePath } from './portable';
import { levelReason, type CommittedResult } from './verdict';
import { readUserText } from '../util/files';

interface VerdictsFile {
  readonly design?: Design;
  readonly plan?: Pick<PlanRecord, 'file' | 'sha256'> & { readonly name: string };
  readonly pairs?: readonly PairResult[];
  readonly looks?: readonly { readonly look: number; readonly alpha: number }[];
  readonly identities?: Readonly<Record<string, string>>;
  readonly values?: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, number>>>>>>;
}

/**
 * The identity of the config a run directory ran (see {@link sameConfigIdentity}): its
 * config.source.json, paths read from run.json's baseDir. Undefined without a readable source.
 */
export function runIdentity(dir: string): string | undefined {
  try {
    const source = JSON.parse(readUserText(path.join(dir, 'config.source.json'))) as unknown;
    let baseDir = dir;
    try {
      const meta = JSON.parse(readUserText(path.join(dir, 'run.json'))) as { baseDir?: unknown };
      if (typeof meta.baseDir === 'string') baseDir = meta.baseDir;
    } catch {
      // no run.json: paths are read from the run's own folder
    }
    return sameConfigIdentity(source, baseDir);
  } catch {
    return undefined;
  }
}

/** The identity of each config of a comparison, from its first run (configs without one are left out). */
export function groupIdentities(groups: readonly ReportGroup[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const g of groups) {
    const first = g.runs[0];
    const id = first && runIdentity(first.dir);
    if (id) out[g.name] = id;
  }
  return out;
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
    if (!pair || pair.n < 2) continue;
    // a decided pair has the level of the comparison's last look; one read from the values, 5%
    const look = decided ? v.looks?.[v.looks.length - 1] : undefined;
    const reason = decided
      ? levelReason(pair.alpha, v.design, look)
      : v.design?.sequential
        ? 'a pair its design does not decide, read from its per-seed values at two-sided 5% with no sequential correction'
        : levelReason(pair.alpha);
    found.push({
      folder: portablePath(path.resolve(dir, d.name)),
      planned: !!v.plan,
      pair,
      ...(reason ? { reason } : {}),
      configs: ids.length,
    });
  }
  found.sort(
    (x, y) =>
      Number(y.planned) - Number(x.planned) ||
      y.pair.n - x.pair.n ||
      y.configs - x.configs ||
      x.folder.localeCompare(y.folder),
  );
  const best = found[0];
  return (
    best && {
      folder: best.folder,
      planned: best.planned,
      pair: best.pair,
      ...(best.reason ? { reason: best.reason } : {}),
    }
  );
}

/**
 * What one seed of a comparison can quote: the committed result of its last config (the method)
 * against the strongest of the others that has one, the last named first (npm start: ttrl, then
 * base), under this comparison's names. Empty when none matches or every config has 2 seeds or more.
 */
export function committedFor(groups: readonly ReportGroup[], dir: string): CommittedResult[] {
  const seeds = Math.min(...groups.map((g) => g.runs.length));
  if (groups.length < 2 || seeds >= 2) return [];
  const ids = groupIdentities(groups);
  const method = groups[groups.length - 1]!.name;
  const m = ids[method];
  if (!m) return [];
  for (const b of groups.slice(0, -1).reverse()) {
    const id = ids[b.name];
    const found = id ? committedResult(dir, m, id) : undefined;
    if (found) return [{ ...found, names: { a: method, b: b.name } }];
  }
  return [];
}
