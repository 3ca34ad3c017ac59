// The report's charts in the table's units, without constant series, and with one reward chart per
// reward source: shares in percent (the table says 47.9, the axis 0 … 100, not 0 … 1), a curve the
// same at every step (TTRL's agreement with its own label, 1 by definition) named and not drawn,
// and rewards of different sources (a vote's 0 … 1, RENT's negative entropy, Intuitor's ~20) never
// on one axis.
import { expect } from 'chai';
import type { MetricsRecord } from '../../../core/contracts/metrics-sink';
import { constantSeries, renderReport, rewardSources, type ReportGroup } from '../../../core/report/html';
import type { RunSummary } from '../../../core/report/runs';
import { runSummary } from '../../fixtures/run-summary';

/** A run of 20 steps: eval at 0 and 20, train metrics from `train(step, agent)`. */
function run(
  name: string,
  reward: RunSummary['reward'],
  train: (step: number, agent: number) => Record<string, number>,
): RunSummary {
  const records: MetricsRecord[] = [];
  for (const step of [0, 20])
    for (const agent of [0, 1])
      records.push({ step, agent, phase: 'eval', metrics: { 'eval/accuracy': 0.4 + step / 100 + agent / 50 } });
  for (let step = 1; step <= 20; step++)
    for (const agent of [0, 1]) records.push({ step, agent, phase: 'train', metrics: train(step, agent) });
  return { ...runSummary(name, 0, records, 20), reward };
}

/** The SVG of the chart titled `title` in a page. */
function chart(html: string, title: string): string {
  const at = html.indexOf(`aria-label="${title}"`);
  expect(at, `a chart titled ${title}`).to.be.greaterThan(-1);
  return html.slice(at, html.indexOf('</svg>', at));
}

/** The y-axis tick labels of a chart. */
function yTicks(svg: string): number[] {
  return [...svg.matchAll(/text-anchor="end" fill="#444">([^<]+)</g)].map((m) => Number(m[1]));
}

describe("report charts: the table's units, no constant series, one axis per reward source", () => {
  const vote = { use: 'corl:vote', options: { threshold: 0 } };
  const groups: ReportGroup[] = [
    {
      name: 'ttrl',
      runs: [
        run('ttrl', vote, (s) => ({
          'reward/mean': 0.3 + s / 100,
          'label/accuracy': 0.5 + s / 200,
          'label/peer_agreement': 1,
        })),
      ],
    },
    {
      name: 'co-rl',
      runs: [
        run('co-rl', vote, (s) => ({
          'reward/mean': 0.35 + s / 100,
          'label/accuracy': 0.55 + s / 200,
          'label/peer_agreement': 0.5 + s / 100,
        })),
      ],
    },
    {
      name: 'rent',
      runs: [
        run('rent', { use: 'corl:intrinsic', options: { method: 'rent', vocabSize: 0 } }, (s) => ({
          'reward/mean': -0.12 + s / 1000,
        })),
      ],
    },
    {
      name: 'intuitor',
      runs: [
        run('intuitor', { use: 'corl:intrinsic', options: { method: 'intuitor', vocabSize: 0 } }, (s) => ({
          'reward/mean': 20 + s / 10,
        })),
      ],
    },
  ];
  const html = renderReport('t', groups);

  it('draws shares in percent, as the table gives them', () => {
    for (const title of [
      'Held-out accuracy (pass@1)',
      'Pseudo-label accuracy',
      "Agreement with the supervisor's label",
    ]) {
      const svg = chart(html, title);
      expect(svg, title).to.contain('(%)');
      const ticks = yTicks(svg);
      expect(Math.max(...ticks), title)
        .to.be.above(1)
        .and.at.most(100);
      expect(Math.min(...ticks), title).to.be.at.least(0);
    }
    // the table: 0.4 + 20/100 and + 1/50 for beta: 60.0 and 62.0
    expect(html).to.contain('alpha: 60.0').and.contain('beta: 62.0');
    expect(chart(html, 'Held-out accuracy (pass@1)')).to.match(/base \(step 0[^)]*\): 41\.0%/);
  });

  it('names a curve that is the same at every step instead of drawing it', () => {
    const svg = chart(html, "Agreement with the supervisor's label");
    expect(svg).to.contain('not drawn, the same at every step: ttrl 100%');
    expect(svg).to.not.match(/<title>ttrl<\/title>/);
    expect(svg).to.match(/<title>co-rl<\/title>/);
    expect(
      constantSeries({
        points: [
          [1, 1],
          [2, 1],
          [3, 1],
        ],
      }),
    ).to.equal(true);
    expect(
      constantSeries({
        points: [
          [1, 1],
          [2, 0.99],
        ],
      }),
    ).to.equal(false);
    expect(constantSeries({ points: [[1, 1]] })).to.equal(false);
  });

  it('gives each reward source its own reward charts, named by what tells them apart', () => {
    expect(rewardSources(groups)).to.deep.equal([
      { reward: 'corl:vote', groups: [0, 1] },
      { reward: 'corl:intrinsic (method rent)', groups: [2] },
      { reward: 'corl:intrinsic (method intuitor)', groups: [3] },
    ]);
    const voteChart = chart(html, 'Mean reward: corl:vote');
    expect(voteChart)
      .to.match(/<title>ttrl<\/title>/)
      .and.match(/<title>co-rl<\/title>/)
      .and.not.match(/<title>intuitor<\/title>/);
    expect(Math.max(...yTicks(voteChart))).to.be.at.most(1);
    expect(Math.min(...yTicks(chart(html, 'Mean reward: corl:intrinsic (method intuitor)')))).to.be.at.least(19);
    expect(Math.max(...yTicks(chart(html, 'Mean reward: corl:intrinsic (method rent)')))).to.be.below(0);
    expect(html).to.not.contain('aria-label="Mean reward"');
    // one source (a single run, or configs of one reward): one chart, titled as before
    expect(renderReport('one', groups.slice(0, 2))).to.contain('aria-label="Mean reward"');
  });
});
