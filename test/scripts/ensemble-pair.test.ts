// The budget-fair ensemble pair quoted on docs/results.md beside the prediction, recomputed from the
// committed rows (the mean and t interval are core/stats/paired's, checked against scipy there).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensemblePair } from '../../scripts/ensemble-pair';
import { ROOT } from '../../scripts/generate';

describe('scripts/ensemble-pair: two configs budget-fair ensembles, paired by seed', () => {
  it('gives the figure docs/results.md quotes for the prediction', function () {
    this.timeout(120000);
    const r = ensemblePair(path.join(ROOT, 'docs', 'results', 'prediction-slips'), 'co-rl-diff', 'ttrl');
    expect(r.n).to.equal(16);
    const f = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)}`;
    const quoted = `**${f(r.mean)} [${f(r.lo)}, ${f(r.hi)}]**`;
    expect(quoted).to.equal('**+3.1 [+1.6, +4.6]**');
    expect(fs.readFileSync(path.join(ROOT, 'docs', 'results.md'), 'utf8')).to.contain(`co-rl-diff − ttrl ${quoted}`);
  });
});
