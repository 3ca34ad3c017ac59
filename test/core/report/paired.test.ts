import { expect } from 'chai';
import * as path from 'node:path';
import { readComparison } from '../../../core/report/compare';
import { comparisonVerdicts, type Design } from '../../../core/report/design';
import { analysePairs, defaultPairs } from '../../../core/report/paired';
import { boundary } from '../../../core/stats/sequential';
import { seedsFor, tTestPower } from '../../../core/stats/power';
import { studentTQuantile } from '../../../core/stats/distributions';
import { writeComparison, type Answers } from '../../fixtures/comparison';
import { tempDir } from '../../fixtures/configs';

const T = true;
const F = false;

/**
 * Two agents, two problems, two samples. Step 0 is the same for a and b (a shared base): agent 0
 * p0 TF, p1 FF; agent 1 p0 TT, p1 TF (average 0.5). Last step: b every seed agent 0 TT/FF, agent 1
 * TT/TF (0.625); a seed 0 TT/TF, TT/TT (0.875), seed 1 TT/FF, TT/TT (0.75), seed 2 TT/TT, TT/TF
 * (0.875). c ends like b but starts with agent 1 p1 TT (0.625 at step 0).
 */
const answers: Answers = (config, seed, step, agent, problem) => {
  if (step === 0) {
    if (config === 'c' && agent === 1 && problem === 1) return [T, T];
    return [
      [
        [T, F],
        [F, F],
      ],
      [
        [T, T],
        [T, F],
      ],
    ][agent]![problem]!;
  }
  const end: Record<string, boolean[][][]> = {
    b: [
      [
        [T, T],
        [F, F],
      ],
      [
        [T, T],
        [T, F],
      ],
    ],
  };
  end.c = end.b!;
  const a = [
    [
      [
        [T, T],
        [T, F],
      ],
      [
        [T, T],
        [T, T],
      ],
    ],
    [
      [
        [T, T],
        [F, F],
      ],
      [
        [T, T],
        [T, T],
      ],
    ],
    [
      [
        [T, T],
        [T, T],
      ],
      [
        [T, T],
        [T, F],
      ],
    ],
  ];
  return config === 'a' ? a[seed]![agent]![problem]! : end[config]![agent]![problem]!;
};

describe('report/paired: paired differences of a comparison, by hand', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-paired-');
  });
  afterEach(() => tmp.cleanup());

  const write = (seeds: number[]): string =>
    writeComparison(path.join(tmp.dir, 'cmp'), {
      configs: [{ name: 'b' }, { name: 'a' }, { name: 'c' }],
      seeds,
      problems: 2,
      answers,
    });

  it('per-seed differences, the t interval, the bootstrap and the outcome', () => {
    const c = readComparison(write([0, 1, 2]));
    const [r] = analysePairs(c.groups, [{ a: 'a', b: 'b' }], 'final', { alpha: 0.05 });
    // a − b: 87.5 − 62.5, 75 − 62.5, 87.5 − 62.5 = 25, 12.5, 25 points
    expect(r!.seeds.map((s) => s.diff)).to.deep.equal([25, 12.5, 25]);
    expect(r!.mean).to.be.closeTo(125 / 6, 1e-12);
    const sd = Math.sqrt(((25 - 125 / 6) ** 2 * 2 + (12.5 - 125 / 6) ** 2) / 2);
    expect(r!.sd).to.be.closeTo(sd, 1e-12);
    const half = studentTQuantile(0.975, 2) * (sd / Math.sqrt(3));
    expect(r!.t!.lo).to.be.closeTo(125 / 6 - half, 1e-9);
    expect(r!.outcome).to.equal('ahead');
    expect(r!.problems).to.equal(2);
    // every bootstrap mean lies between the smallest and largest problem-level difference (0 and 50)
    expect(r!.bootstrap!.lo).to.be.within(0, 125 / 6);
    expect(r!.bootstrap!.hi).to.be.within(125 / 6, 50);
    expect(analysePairs(c.groups, [{ a: 'a', b: 'b' }], 'final', { alpha: 0.05 })[0]!.bootstrap).to.deep.equal(
      r!.bootstrap,
    );
    expect(r!.seedsNeeded!.difference).to.equal(seedsFor((n) => tTestPower(n, 2, sd, 0.05)));
  });

  it('splits the variance: evaluation sampling p̂(1 − p̂)/(K − 1) per problem, identical step-0 rows cancel', () => {
    const c = readComparison(write([0, 1, 2]));
    // Var of a run's average = Σ p̂(1 − p̂)/(K − 1) / (agents·problems)², K = 2: b's last step has one
    // problem at ½ (0.25/16), a's seed 0 one, seed 1 none, seed 2 one; ×10⁴ for points²
    const [final, change] = [
      analysePairs(c.groups, [{ a: 'a', b: 'b' }], 'final', { alpha: 0.05 })[0]!,
      analysePairs(c.groups, [{ a: 'a', b: 'b' }], 'change', { alpha: 0.05 })[0]!,
    ];
    expect(final.seeds.map((s) => s.evalVariance)).to.deep.equal([312.5, 156.25, 312.5]);
    expect(change.seeds.map((s) => s.evalVariance)).to.deep.equal([312.5, 156.25, 312.5]);
    expect(final.variance!.evaluation).to.be.closeTo(781.25 / 3, 1e-9);
    expect(final.variance!.total).to.be.closeTo(final.sd ** 2, 1e-9);
    expect(final.variance!.training).to.equal(0); // evaluation alone explains more than was observed
    // c − b: step-0 rows differ, so both step-0 evaluations add: c₀ 0.25/16, b₀ 0.5/16
    const cb = analysePairs(c.groups, [{ a: 'c', b: 'b' }], 'change', { alpha: 0.05 })[0]!;
    expect(cb.seeds.map((s) => s.diff)).to.deep.equal([-12.5, -12.5, -12.5]);
    expect(cb.seeds[0]!.evalVariance).to.be.closeTo(((0.25 + 0.25 + 0.25 + 0.5) / 16) * 1e4, 1e-9);
    expect(cb.outcome).to.equal('behind'); // sd 0: the interval is the point
  });

  it('pairs by seed index and lists seeds one config lacks', () => {
    const dir = write([0, 1, 2]);
    const c = readComparison(dir);
    const short = c.groups.map((g) =>
      g.name === 'b' ? { ...g, runs: g.runs.filter((r) => !r.dir.endsWith('seed-1')) } : g,
    );
    const [r] = analysePairs(short, [{ a: 'a', b: 'b' }], 'final', { alpha: 0.05 });
    expect(r!.seeds.map((s) => s.index)).to.deep.equal([0, 2]);
    expect(r!.unpaired).to.deep.equal(['b/seed-1']);
    expect(defaultPairs(['b', 'a', 'c'])).to.deep.equal([
      { a: 'a', b: 'b' },
      { a: 'c', b: 'b' },
    ]);
    expect(defaultPairs(['b', 'a', 'c'], ['b', 'c'])).to.deep.equal([
      { a: 'a', b: 'b' },
      { a: 'a', b: 'c' },
    ]);
    expect(() => defaultPairs(['b', 'a'], ['x'])).to.throw(/--against/);
  });

  it('a sequential design decides at its looks with the boundary’s nominal levels, and stops when all pairs resolve', () => {
    const c = readComparison(write([0, 1, 2]));
    const seq: Design = {
      metric: 'change',
      pairs: [{ a: 'a', b: 'b', role: 'primary' }],
      alpha: 0.05,
      margin: 2,
      sequential: { boundary: 'lan-demets-pocock', looks: [2, 3], first: 0, stop: 'all-resolved' },
    };
    const v = comparisonVerdicts(c.groups, ['b', 'a', 'c'], seq);
    const nominal = boundary('lan-demets-pocock', 0.05, [2 / 3, 1]).nominal;
    expect(v.looks!.map((l) => [l.seeds, l.alpha])).to.deep.equal([
      [2, nominal[0]],
      [3, nominal[1]],
    ]);
    // look 1 (25, 12.5): t(1 − α₁/2, 1)·6.25 is wide; look 2 at the stricter nominal level is still inconclusive
    expect(v.looks!.map((l) => l.pairs[0]!.outcome)).to.deep.equal(['inconclusive', 'inconclusive']);
    expect(v.stopped).to.equal(true);
    expect(v.next).to.equal(undefined);
    expect(v.pairs[0]!.alpha).to.equal(nominal[1]);
    // c − b has no spread: resolved (behind) at look 1, where the comparison stops
    const cb = comparisonVerdicts(c.groups, ['b', 'a', 'c'], { ...seq, pairs: [{ a: 'c', b: 'b' }] });
    expect(cb.looks).to.have.length(1);
    expect(cb.pairs[0]!.outcome).to.equal('behind');
    expect(cb.pairs[0]!.n).to.equal(2);
    expect(cb.stopped).to.equal(true);
  });

  it('before the first look there is no verdict, and it says what comes next', () => {
    const c = readComparison(write([0]));
    const v = comparisonVerdicts(c.groups, ['b', 'a', 'c'], {
      metric: 'final',
      pairs: [{ a: 'a', b: 'b' }],
      alpha: 0.05,
      sequential: { boundary: 'lan-demets-pocock', looks: [2, 3], first: 0, stop: 'all-resolved' },
    });
    expect(v.pairs).to.deep.equal([]);
    expect(v.stopped).to.equal(false);
    expect(v.next).to.equal('the design calls for look 1: 2 seeds per config (1 finished)');
  });
});
