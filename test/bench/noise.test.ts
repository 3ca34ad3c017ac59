// `npm run bench noise` on the committed headline-slips runs: the per-seed sd it reads is the one the
// comparison's verdicts.json holds, and the grid at the full set is that sd (no timing).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bestValid, COMMITTED, designsOf, grid, pairMinutes, readRunRows } from '../../bench/noise';
import { pairLevers, subsampleScore } from '../../core/stats/levers';
import { tempDir } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const HEADLINE = path.join(ROOT, 'docs', 'results', 'headline-slips');

describe('bench noise: variance levers on the same seeds', function () {
  this.timeout(60000);
  const ttrl = readRunRows(HEADLINE, 'ttrl');
  const coRl = readRunRows(HEADLINE, 'co-rl-diff');

  it('reads 16 seeds of 200 problems × 2 agents × 8 samples, with shared step-0 rows', () => {
    expect(ttrl.runs.map((r) => r.seed)).to.deep.equal(Array.from({ length: 16 }, (_, i) => i + 3));
    expect(ttrl.ids).to.have.length(200);
    expect(ttrl.runs[0]!.final[0]).to.have.length(2);
    expect(ttrl.runs[0]!.final[0]![0]).to.have.length(8);
    expect(coRl.runs[5]!.start).to.deep.equal(ttrl.runs[5]!.start);
  });

  it('the paired sd of co-rl-diff − ttrl is the verdicts.json one (1.7348) at 200 × 8', () => {
    const all = Array.from({ length: 200 }, (_, i) => i);
    const score = (runs: typeof ttrl.runs) =>
      runs.map((r) => ({ final: subsampleScore(r.final, all, 8), start: subsampleScore(r.start, all, 8) }));
    const l = pairLevers(score(coRl.runs), score(ttrl.runs));
    expect(l.paired.final.sd).to.be.closeTo(1.7348, 1e-4);
    expect(l.paired.change.sd).to.be.closeTo(1.7348, 1e-4);
    const v = JSON.parse(fs.readFileSync(path.join(HEADLINE, 'verdicts.json'), 'utf8')) as {
      pairs: { role: string; seeds: { diff: number }[] }[];
    };
    const diffs = v.pairs.find((p) => p.role === 'primary')!.seeds.map((s) => s.diff);
    const own = score(coRl.runs).map((x, i) => x.final - score(ttrl.runs)[i]!.final);
    own.forEach((d, i) => expect(d).to.be.closeTo(diffs[i]!, 1e-9));
    const g = grid(coRl.runs, ttrl.runs, 200, 4);
    expect(Math.sqrt(g.find((p) => p.n === 200 && p.K === 8)!.variance)).to.be.closeTo(1.7348, 1e-4);
    // fewer samples per problem or fewer problems: more variance
    expect(g.find((p) => p.n === 200 && p.K === 1)!.variance).to.be.greaterThan(
      g.find((p) => p.n === 200 && p.K === 8)!.variance,
    );
  });

  it('costs scale the evaluation by n·K / 1600; the rule picks the cheapest verdict design', () => {
    const costs = [{ evalSeconds: 60, restSeconds: 540 }];
    expect(pairMinutes(costs, 200, 8)).to.equal(10);
    expect(pairMinutes(costs, 400, 2)).to.equal(9.5);
    const levers = {
      paired: { final: { sd: 2, df: 15 }, change: { sd: 2, df: 15 }, ancova: { sd: 1, df: 14, slope: 1 } },
      independent: { final: { sd: 3, df: 30 }, change: { sd: 3, df: 30 }, ancova: { sd: 3, df: 29, slope: 0 } },
      correlation: 0.5,
      seeds: 16,
    };
    const d = designsOf(levers, { A: 4, B: 0, C: 0 }, 200, costs);
    // the ANCOVA is smallest but no verdict corl computes; with only A, fewer samples cost less for the same sd
    expect(d.find((x) => x.name === COMMITTED)!.merit).to.equal(40);
    const best = bestValid(d);
    expect(best.name).to.equal('common random numbers, final at 50 × 1');
    expect(best.sd).to.equal(2);
  });

  it('a sealed comparison is refused, naming the folder', () => {
    const tmp = tempDir('corl-noise-');
    try {
      fs.mkdirSync(path.join(tmp.dir, 'ttrl'));
      fs.writeFileSync(path.join(tmp.dir, 'seal.key'), 'x');
      expect(() => readRunRows(tmp.dir, 'ttrl'))
        .to.throw(/expected an unsealed comparison/)
        .with.property('code', 'CORL_ERR_RUN_SEALED');
      expect(() => readRunRows(tmp.dir, 'gt'))
        .to.throw(/expected runs of gt in the comparison, got none/)
        .with.property('code', 'CORL_ERR_RUN_CORRUPT');
    } finally {
      tmp.cleanup();
    }
  });
});
