// The arithmetic behind `npm run bench seeds`' time to a decision, on hand-computed numbers and on
// the committed planned slip results (never a timing).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { primaryDifferences } from '../../bench/seeds';
import { sample } from '../../core/stats/paired';
import { decisionTime, tTestPower } from '../../core/stats/power';
import { tempDir } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');

describe('bench seeds: minutes to a decision', () => {
  it('seeds from the paired t power × minutes per seed of the pair (sd 1.73: 26 seeds for 1 point, 9 for 2)', () => {
    // scipy's noncentral t: n = 26 gives power 0.806 for δ = 1, sd 1.7348 at two-sided 5%; n = 25 falls short
    const one = decisionTime(1, 1.734750334762422, 0.05, 2.5);
    expect(one).to.deep.equal({ seeds: 26, minutes: 65 });
    expect(tTestPower(26, 1, 1.734750334762422, 0.05)).to.be.closeTo(0.8064, 1e-4);
    expect(tTestPower(25, 1, 1.734750334762422, 0.05)).to.be.below(0.8);
    expect(decisionTime(2, 1.734750334762422, 0.05, 2.5)).to.deep.equal({ seeds: 9, minutes: 22.5 });
    // a target of 90% needs more seeds; zero minutes per seed is zero minutes
    expect(decisionTime(1, 1.734750334762422, 0.05, 0, 0.9).seeds).to.be.greaterThan(26);
    expect(decisionTime(1, 1.734750334762422, 0.05, 0, 0.9).minutes).to.equal(0);
  });

  it('reads the primary pair of the committed headline-slips verdicts: 16 seeds, sd 1.73 points', () => {
    const p = primaryDifferences(path.join(ROOT, 'docs', 'results', 'headline-slips', 'verdicts.json'));
    expect([p.a, p.b]).to.deep.equal(['co-rl-diff', 'ttrl']);
    expect(p.diffs).to.have.length(16);
    expect(sample(p.diffs).sd).to.be.closeTo(1.7348, 1e-4);
  });

  it('a verdicts file without a primary pair is a coded error naming the file', () => {
    const tmp = tempDir('corl-seeds-');
    try {
      const f = path.join(tmp.dir, 'verdicts.json');
      fs.writeFileSync(f, JSON.stringify({ pairs: [{ a: 'x', b: 'y', role: 'secondary', seeds: [] }] }));
      expect(() => primaryDifferences(f))
        .to.throw(/expected a primary pair in verdicts.json, got none/)
        .with.property('code', 'CORL_ERR_RUN_CORRUPT');
    } finally {
      tmp.cleanup();
    }
  });
});
