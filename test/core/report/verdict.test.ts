import { expect } from 'chai';
import {
  intervalText,
  levelReason,
  levelText,
  pairSentence,
  pairsMarkdown,
  provenanceLine,
  signedPoints,
  verdictLine,
} from '../../../core/report/verdict';
import type { ResultRow } from '../../../core/report/html';
import { pairFromValues, type PairResult } from '../../../core/report/paired';

const row = (name: string, mean: number, seeds = 1, sd = 0): ResultRow => ({
  name,
  supervised: false,
  seeds,
  steps: 80,
  perAgent: [],
  average: { mean, sd },
  base: { mean: 0.4, sd: 0 },
  labelAccuracy: { mean: NaN, sd: NaN },
});

/** A pair decided from per-seed values in points (t interval at alpha). */
const pair = (a: string, b: string, xa: number[], xb: number[], alpha = 0.05, margin?: number): PairResult =>
  pairFromValues(
    { a, b },
    'final',
    Object.fromEntries(xa.map((v, i) => [String(i), v])),
    Object.fromEntries(xb.map((v, i) => [String(i), v])),
    alpha,
    margin,
  );

describe('report/verdict: every verdict carries its interval and one of four outcomes', () => {
  it('formats points, intervals and levels', () => {
    expect(signedPoints(3.21)).to.equal('+3.2');
    expect(signedPoints(-0.04)).to.equal('±0.0');
    expect(signedPoints(-3.25)).to.equal('−3.3');
    expect(intervalText({ lo: -7.56, hi: 8.58 })).to.equal('[−7.6, +8.6]');
    expect(levelText(0.05)).to.equal('95%');
    expect(levelText(0.031005725)).to.equal('96.9%');
  });

  it('a pair in one sentence; one seed cannot decide', () => {
    // the example: −3.2, +2.0, +2.7 → mean +0.5, t(0.975, 2)·sd/√3 = 8.07 → [−7.6, +8.6]
    const p = pair('co-rl-diff', 'ttrl', [52.34375, 56.15625, 54.59375], [55.5625, 54.125, 51.875]);
    expect(pairSentence(p)).to.equal('co-rl-diff − ttrl: +0.5 points, 95% CI [−7.6, +8.6] over 3 seeds: inconclusive');
    expect(pairSentence(pair('a', 'b', [50], [53.2]))).to.equal(
      'a − b: −3.2 points on 1 seed: cannot decide (an interval needs at least 2 seeds)',
    );
    const eq = pair('a', 'b', [50.1, 49.9, 50.05, 49.95, 50], [50, 50, 50, 50, 50], 0.05, 1);
    expect(pairSentence(eq)).to.match(/: equivalent within ±1\.0$/);
  });

  it("npm start's line with one seed: no verdict, and the committed many-seed result of the same configs", () => {
    // differences 1, 1, 0, 0.5: mean 0.625, sd √(0.6875/3), t(0.975, 3) = 3.1824 → ±0.762 → [−0.1, +1.4]
    const committed = pair('co-rl-diff', 'ttrl', [54, 56, 55, 53], [53, 55, 55, 52.5]);
    expect(
      verdictLine({
        method: row('co-rl', 0.5),
        baselines: [row('base', 0.42), row('ttrl', 0.531)],
        pairs: [pair('co-rl', 'base', [50], [42]), pair('co-rl', 'ttrl', [50], [53.1])],
        problems: 200,
        committed: [
          { folder: 'docs/results/headline-slips', planned: true, pair: committed, names: { a: 'co-rl', b: 'ttrl' } },
        ],
      }),
    ).to.equal(
      'co-rl: +8.0 points over base, −3.1 over ttrl on 200 held-out problems; 1 seed cannot decide (an interval needs at least 2 seeds). 4 seeds of the same configs committed in docs/results/headline-slips (planned): co-rl − ttrl (there co-rl-diff − ttrl) +0.6 points (average pass@1 over agents at the last evaluation), 95% CI [−0.1, +1.4], inconclusive',
    );
  });

  it('an interval at another level than 95% says why', () => {
    const design = {
      alpha: 0.05,
      sequential: {
        boundary: 'lan-demets-pocock' as const,
        looks: [16, 24, 32],
        first: 3,
        stop: 'all-resolved' as const,
      },
    };
    // the first of three Pocock-type looks spends 3.1% of the 5%: its interval is a 96.9% one
    expect(levelReason(0.031005725, design, { look: 1 })).to.equal(
      'the nominal level at look 1 of 3 of a lan-demets-pocock group-sequential design, which keeps the overall two-sided error at 5%',
    );
    expect(levelReason(0.05)).to.equal('');
    expect(levelReason(0.1)).to.equal('two-sided error 0.1, as the design sets it');
    const p = pair('a', 'b', [51, 52, 53], [50, 50, 50], 0.1);
    expect(pairSentence(p, levelReason(0.1))).to.match(
      /^a − b: \+2\.0 points, 90% CI \[.*\] \(two-sided error 0\.1, as the design sets it\) over 3 seeds/,
    );
  });

  it('with seeds enough, each difference has its interval and outcome', () => {
    // over base 10, 8.5, 11.5: sd 1.5, ±4.3027·1.5/√3 = ±3.73; over ttrl 3, −2, 2: sd √7, ±6.57
    expect(
      verdictLine({
        method: row('co-rl', 0.55, 3),
        baselines: [row('base', 0.45, 3), row('ttrl', 0.54, 3)],
        pairs: [
          pair('co-rl', 'base', [55, 54, 56], [45, 45.5, 44.5]),
          pair('co-rl', 'ttrl', [55, 54, 56], [52, 56, 54]),
        ],
        problems: 100,
        split: 'validation',
      }),
    ).to.equal(
      'co-rl: +10.0 points over base [+6.3, +13.7], ahead; +1.0 over ttrl [−5.6, +7.6], inconclusive on 100 validation problems; 95% intervals over 3 seeds',
    );
  });

  it("adds each agent's change over the same agent of the first baseline, when their agents match", () => {
    const agents = (name: string, mean: number, a: number, b: number): ResultRow => ({
      ...row(name, mean),
      perAgent: [
        { name: 'alpha', mean: a, sd: 0 },
        { name: 'beta', mean: b, sd: 0 },
      ],
    });
    // alpha 0.499 − 0.436 = +6.3, beta 0.580 − 0.474 = +10.6
    expect(
      verdictLine({
        method: agents('co-rl', 0.5395, 0.499, 0.58),
        baselines: [agents('base', 0.455, 0.436, 0.474)],
        pairs: [pair('co-rl', 'base', [53.9], [45.5])],
        problems: 200,
      }),
    ).to.equal(
      'co-rl: +8.4 points over base (alpha +6.3, beta +10.6) on 200 held-out problems; 1 seed cannot decide (an interval needs at least 2 seeds)',
    );
  });

  it('the pairs table and the provenance line', () => {
    const p = pair('co-rl-diff', 'ttrl', [52.34375, 56.15625, 54.59375], [55.5625, 54.125, 51.875], 0.05, 2);
    const md = pairsMarkdown([{ ...p, role: 'primary' }], 'held-out final pass@1');
    expect(md).to.contain(
      '| co-rl-diff − ttrl (primary) | 3 | +0.5 | [−7.6, +8.6] | – | **inconclusive** | 3.25 | – | – |',
    );
    expect(provenanceLine({ split: 'held-out', reads: 4, reconstructed: 4 })).to.equal(
      'Plan: none (an unplanned comparison). Held-out reads of this folder: 4 (4 reconstructed from the history) (reads.jsonl).',
    );
    expect(provenanceLine({ split: 'validation', reads: 0 })).to.equal(
      'Plan: none (an unplanned comparison). Split: validation, so these tables read no held-out result.',
    );
    expect(
      provenanceLine({
        plan: { name: 'headline', file: 'docs/results/headline/plan.json', sha256: 'ab'.repeat(32) },
        follow: {
          followed: false,
          checks: [{ ok: false, text: 'reads: 2, of which read 1 …' }],
          before: {
            ok: true,
            text: "written before its runs (each of the 6 run(s) recorded the plan's sha256 at its start)",
          },
        },
        split: 'held-out',
        reads: 2,
      }),
    ).to.equal(
      "Plan: headline (docs/results/headline/plan.json, sha256 abababababab…), written before its runs (each of the 6 run(s) recorded the plan's sha256 at its start); followed: no (reads: 2, of which read 1 …). Held-out reads of this folder: 2 (reads.jsonl).",
    );
  });
});
