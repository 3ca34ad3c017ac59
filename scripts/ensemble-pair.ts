// The budget-fair ensembles of two configs of a finished comparison, paired by seed: the ensemble
// metric of each seed's last evaluation (a − b, points), its mean, sd and 95% t interval over seeds.
// A figure to read beside a plan's verdicts (docs/results.md, the prediction), never a decision: the
// plan's decided metric is pass@1. Sealed runs are opened as the comparison's report opens them; it
// adds no read, since the look that showed them is already in the folder's ledger.
//   node dist/scripts/ensemble-pair.js docs/results/prediction-slips co-rl-diff ttrl
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRun, valueAt } from '../core/report/runs';
import { sample, tInterval } from '../core/stats/paired';

/** The metric the budget-fair ensemble is recorded as: maj@8 over 4 samples per model. */
export const ENSEMBLE_METRIC = 'ensemble/maj@8';

/** Each seed's ensemble after training, in points, of one config of the comparison in `dir`. */
function finalEnsembles(dir: string, config: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const seed of fs.readdirSync(path.join(dir, config))) {
    const m = /^seed-(\d+)$/.exec(seed);
    if (!m) continue;
    const run = readRun(path.join(dir, config, seed), { sealed: 'open' });
    const last = Math.max(...run.records.filter((r) => r.phase === 'eval').map((r) => r.step));
    const v = valueAt(run.records, ENSEMBLE_METRIC, null, last);
    if (v !== undefined) out.set(Number(m[1]), 100 * v);
  }
  return out;
}

/** a − b by seed over the seeds both have: n, mean, sd and the 95% t interval, in points. */
export function ensemblePair(
  dir: string,
  a: string,
  b: string,
): { n: number; mean: number; sd: number; lo: number; hi: number } {
  const ea = finalEnsembles(dir, a);
  const eb = finalEnsembles(dir, b);
  const d = [...ea.keys()].filter((i) => eb.has(i)).map((i) => ea.get(i)! - eb.get(i)!);
  const s = sample(d);
  const t = tInterval(s, 0.05);
  return { n: s.n, mean: s.mean, sd: s.sd, lo: t?.lo ?? NaN, hi: t?.hi ?? NaN };
}

if (require.main === module) {
  const [dir, a, b] = process.argv.slice(2);
  if (!dir || !a || !b) {
    process.stderr.write('usage: node dist/scripts/ensemble-pair.js <comparison folder> <config a> <config b>\n');
    process.exit(2);
  }
  for (const c of [a, b])
    if (!fs.existsSync(path.join(dir, c))) {
      process.stderr.write(`ensemble-pair: expected a config folder ${path.join(dir, c)} of finished runs, got none\n`);
      process.exit(2);
    }
  const r = ensemblePair(dir, a, b);
  const f = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)}`;
  process.stdout.write(
    `${a} − ${b}, ${ENSEMBLE_METRIC} after training: ${f(r.mean)} points, 95% t interval [${f(r.lo)}, ${f(r.hi)}], sd ${r.sd.toFixed(2)}, ${r.n} seeds (read, not decided)\n`,
  );
}
