import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { reportCompare } from '../../../core/report/compare';
import { portablePath, portableText } from '../../../core/report/portable';
import { movingAverage } from '../../../core/report/runs';
import {
  lineChart,
  offScale,
  paletteColor,
  PALETTE,
  textWidth,
  tickLabels,
  ticks,
  wrapText,
} from '../../../core/report/svg';
import { machinePaths } from '../../../scripts/report-browser';
import { tempDir } from '../../fixtures/configs';

const RESULTS = path.resolve(__dirname, '../../../../docs/results');

/** The y-axis tick labels of a chart (right-aligned, left of the plot). */
const yTickLabels = (svg: string): string[] =>
  [...svg.matchAll(/font-size="10" text-anchor="end" fill="#444">([^<]*)<\/text>/g)].map((m) => m[1]!);
/** Numeric attribute `name` of the first element matching `selector` (an element name and class). */
function attr(svg: string, element: string, cls: string, name: string): number {
  const m = new RegExp(`<${element} class="${cls}"[^>]*?\\s${name}="([-\\d.]+)"`).exec(svg);
  if (!m) throw new Error(`no <${element} class="${cls}" ${name}=…> in the chart`);
  return Number(m[1]);
}
const line = (ys: readonly number[], x0 = 0, dx = 10): [number, number][] => ys.map((y, k) => [x0 + dx * k, y]);

describe('core/report/svg and runs (charts of the report)', () => {
  it('movingAverage: trailing mean over the finite values of the last `window` points', () => {
    const pts: [number, number][] = [
      [1, 1],
      [2, 3],
      [3, NaN],
      [4, 5],
      [5, 9],
    ];
    // window 2: [1], [1,3] → 2, [3, NaN] → 3, [NaN, 5] → 5, [5, 9] → 7
    expect(movingAverage(pts, 2)).to.deep.equal([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 5],
      [5, 7],
    ]);
    // window 3: 1, 2, 2, (3+5)/2 = 4, (5+9)/2 = 7
    expect(movingAverage(pts, 3)).to.deep.equal([
      [1, 1],
      [2, 2],
      [3, 2],
      [4, 4],
      [5, 7],
    ]);
    expect(movingAverage(pts, 1).map((p) => p[1])).to.deep.equal([1, 3, NaN, 5, 9]);
    expect(movingAverage([[0, NaN]], 4)[0]![1]).to.be.NaN;
    expect(() => movingAverage(pts, 0)).to.throw(RangeError);
  });

  it('twelve distinct colours; a series keeps the colour it was given', () => {
    expect(new Set(PALETTE).size).to.equal(12);
    expect(paletteColor(12)).to.equal(paletteColor(0));
    const svg = lineChart(
      [
        {
          name: 'a',
          points: [
            [0, 0.5],
            [1, 0.6],
          ],
          color: paletteColor(5),
        },
        {
          name: 'b',
          points: [
            [0, 0.1],
            [1, 0.2],
          ],
        },
      ],
      { title: 't', xLabel: 'x', yLabel: 'y' },
    );
    expect(svg).to.contain(`stroke="${paletteColor(5)}"`);
    expect(svg).to.contain(`stroke="${paletteColor(1)}"`); // b: the colour of its position
  });

  it('a series with no finite value is left out, legend included', () => {
    const svg = lineChart(
      [
        {
          name: 'logged',
          points: [
            [0, 1],
            [1, 2],
          ],
        },
        {
          name: 'never-logged',
          points: [
            [0, NaN],
            [1, NaN],
          ],
        },
        { name: 'empty', points: [] },
      ],
      { title: 't', xLabel: 'x', yLabel: 'y' },
    );
    expect(svg).to.contain('>logged<');
    expect(svg).not.to.contain('never-logged');
    expect(svg).not.to.contain('>empty<');
  });

  it('ticks: round steps covering the range, hand-computed', () => {
    // (0.3936 … 0.4864)/5 = 0.01856 → step 0.02, from ⌈0.3936/0.02⌉·0.02 = 0.40
    expect(ticks(0.3936, 0.4864)).to.deep.equal([0.4, 0.42, 0.44, 0.46, 0.48]);
    // 0 … 150 in 6: 25 → step 25 (one of 1, 2, 2.5, 5, 10 × 10)
    expect(ticks(0, 150, 6)).to.deep.equal([0, 25, 50, 75, 100, 125, 150]);
    expect(ticks(3, 3)).to.deep.equal([3]);
    // training steps 1 … 4: (4 − 1)/6 = 0.5 would give 1, 1.5 …; at least 1 apart gives whole steps
    expect(ticks(1, 4, 6)).to.deep.equal([1, 1.5, 2, 2.5, 3, 3.5, 4]);
    expect(ticks(1, 4, 6, 1)).to.deep.equal([1, 2, 3, 4]);
  });

  it('tickLabels: as many decimals as tell the ticks apart, no more', () => {
    // 0.4536 … 0.4552 in 5: step 0.0005 (0.00032 → 0.0005); three digits would print 0.454 twice
    expect(tickLabels(ticks(0.4536, 0.4552))).to.deep.equal(['0.454', '0.4545', '0.455']);
    expect(tickLabels([0.4, 0.42, 0.44])).to.deep.equal(['0.4', '0.42', '0.44']);
    expect(tickLabels([0, 25, 50])).to.deep.equal(['0', '25', '50']);
    expect(tickLabels([0, 0.0002, 0.0004])).to.deep.equal(['0', '2e-4', '4e-4']);
    expect(tickLabels([0, 100000, 200000])).to.deep.equal(['0', '1e+5', '2e+5']);
  });

  it('a chart of training steps has whole-step ticks on its x axis', () => {
    const svg = lineChart([{ name: 'a', points: line([0.5, 0.4, 0.6, 0.55], 1, 1) }], {
      title: 't',
      xLabel: 'step',
      yLabel: 'y',
    });
    const xTicks = [...svg.matchAll(/font-size="10" text-anchor="middle" fill="#444">([^<]*)<\/text>/g)].map(
      (m) => m[1],
    );
    expect(xTicks).to.deep.equal(['1', '2', '3', '4']);
  });

  it('minSpan: values a tenth of a point apart are drawn on at least five points, not across the whole plot', () => {
    const points = [line([0.455, 0.4545, 0.4541]), line([0.455, 0.4548, 0.4546])];
    const o = { title: 't', xLabel: 'step', yLabel: 'accuracy', yBounds: [0, 1] as [number, number] };
    const ends = (svg: string): number[] =>
      [...svg.matchAll(/<path class="series"[^>]* d="[^"]*L[\d.]+,([\d.]+)"/g)].map((m) => Number(m[1]));
    const loose = lineChart(
      points.map((p, i) => ({ name: `s${i}`, points: p })),
      o,
    );
    const tight = lineChart(
      points.map((p, i) => ({ name: `s${i}`, points: p })),
      { ...o, minSpan: 0.05 },
    );
    // without: 0.4541 … 0.455 padded by 8% of 0.0009 either side (0.001044 in all) fills the 200 px: the
    // 0.0005 gap at the last step is 0.0005/0.001044 · 200 = 95.8 px
    expect(ends(loose)[0]! - ends(loose)[1]!).to.be.closeTo(95.8, 0.2);
    // with: 0.05 about the middle 0.45455 → 0.42955 … 0.47955; the gap is 0.0005/0.05 · 200 = 2 px
    expect(ends(tight)[0]! - ends(tight)[1]!).to.be.closeTo(2, 0.15);
    expect(yTickLabels(tight)).to.deep.equal(['0.43', '0.44', '0.45', '0.46', '0.47']);
    // near a bound the span is moved inside it: 0.99 … 1 becomes 0.95 … 1
    const top = lineChart([{ name: 'a', points: line([0.99, 1]) }], { ...o, minSpan: 0.05 });
    expect(yTickLabels(top)).to.deep.equal(['0.95', '0.96', '0.97', '0.98', '0.99', '1']);
  });

  it('the y axis spans the data and the base line, not 0–1: a difference of 3 points fills a third of the plot', () => {
    const svg = lineChart(
      [
        { name: 'co-rl', points: line([0.42, 0.46, 0.48]) },
        { name: 'ttrl', points: line([0.42, 0.44, 0.45]) },
      ],
      {
        title: 't',
        xLabel: 'step',
        yLabel: 'accuracy',
        yBounds: [0, 1],
        references: [{ y: 0.4, label: 'base (step 0): 40.0%' }],
      },
    );
    // data and reference 0.40 … 0.48, 8% of that (0.0064) either side: 0.3936 … 0.4864
    expect(yTickLabels(svg)).to.deep.equal(['0.4', '0.42', '0.44', '0.46', '0.48']);
    // one title line: the plot starts at y = 8 + 16 + 8 = 32 and is 200 high
    const top = attr(svg, 'rect', 'plot', 'y');
    expect([top, attr(svg, 'rect', 'plot', 'height')]).to.deep.equal([32, 200]);
    // the base line at 32 + 200 − (0.40 − 0.3936)/0.0928 · 200 = 218.2, inside the plot, across its width
    const ref = attr(svg, 'line', 'ref-line', 'y1');
    expect(ref).to.equal(218.2);
    expect(ref).to.be.within(top, top + 200);
    expect(attr(svg, 'line', 'ref-line', 'x2') - attr(svg, 'line', 'ref-line', 'x1')).to.equal(
      attr(svg, 'rect', 'plot', 'width'),
    );
    // 0.48 − 0.45 at the last step: 0.03/0.0928 · 200 = 64.7 px apart (6 px on a 0–1 axis)
    const ends = [...svg.matchAll(/<path class="series"[^>]* d="[^"]*L[\d.]+,([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(ends[1]! - ends[0]!).to.be.closeTo(64.7, 0.1);
    expect(svg).to.contain('>base (step 0): 40.0%</text>'); // the reference line has its legend entry
  });

  it('a data-scaled axis stops at the bounds: accuracies near 1 end at 1, not above', () => {
    const svg = lineChart([{ name: 'a', points: line([0.97, 0.99, 1]) }], {
      title: 't',
      xLabel: 'step',
      yLabel: 'accuracy',
      yBounds: [0, 1],
    });
    // 0.97 − 0.0024 = 0.9676 … min(1.0024, 1) = 1; step 0.0324/5 = 0.00648 → 0.01
    expect(yTickLabels(svg)).to.deep.equal(['0.97', '0.98', '0.99', '1']);
    // a fixed range is kept as given
    const fixed = lineChart([{ name: 'a', points: line([0.97, 0.99, 1]) }], {
      title: 't',
      xLabel: 'step',
      yLabel: 'accuracy',
      yRange: [0, 1],
    });
    expect(yTickLabels(fixed)).to.deep.equal(['0', '0.2', '0.4', '0.6', '0.8', '1']);
  });

  it('coinciding series stay visible: the one underneath is drawn wider, with larger markers, at other points', () => {
    const same = line(Array.from({ length: 20 }, (_, k) => 0.5 + 0.01 * k));
    const svg = lineChart(
      [
        { name: 'under', points: same },
        { name: 'over', points: same },
        { name: 'apart', points: line(Array.from({ length: 20 }, () => 0.3)) },
      ],
      { title: 't', xLabel: 'step', yLabel: 'y' },
    );
    // "over" lies on every point of "under": under is 1.8 + 2.4 = 4.2 wide, over and apart 1.8, drawn after it
    const widths = [...svg.matchAll(/<path class="series" data-series="(\d)"[^>]* stroke-width="([\d.]+)"/g)].map(
      (m) => [Number(m[1]), Number(m[2])],
    );
    expect(widths).to.deep.equal([
      [0, 4.2],
      [1, 1.8],
      [2, 1.8],
    ]);
    // 20 points: a marker every ⌈20/8⌉ = 3rd, series i starting at ⌊3i/3⌋ mod 3 = i: points 0, 3 … 18 and 1, 4 … 19
    // the plot's markers are drawn before the legend's
    const plot = svg.slice(0, svg.indexOf('<g class="legend-entry"'));
    const centres = (re: RegExp): number[] => [...plot.matchAll(re)].map((m) => Number(m[1]));
    // seven each; the lower series' larger (r = 3 + 1.2) than those on top of it
    const under = centres(new RegExp(`<circle cx="([\\d.]+)" cy="[\\d.]+" r="4.2" fill="${PALETTE[0]}"`, 'g'));
    const over = centres(
      new RegExp(`<rect x="([\\d.]+)" y="[\\d.]+" width="5.1" height="5.1" fill="${PALETTE[1]}"`, 'g'),
    );
    expect(under).to.have.length(7);
    expect(over).to.have.length(7);
    // and never at the same x (a square's centre is its x + 1.7·3/2)
    const overCentres = over.map((x) => x + 2.55);
    expect(under.filter((x) => overCentres.some((o) => Math.abs(o - x) < 0.2))).to.deep.equal([]);
  });

  it("a series far off the others' scale is named in the legend with its range, not drawn over them", () => {
    const series = [
      { name: 'ttrl', points: line([0.4, 0.5]) },
      { name: 'co-rl', points: line([0.45, 0.55]) },
      { name: 'intuitor', points: line([20.6, 20.7]) },
    ];
    const o = { title: 'Mean reward', xLabel: 'step', yLabel: 'reward' };
    const svg = lineChart(series, { ...o, offScale: true });
    // 0.4 … 0.55 (0.15) is under a tenth of 0.4 … 20.7: intuitor is left out of the plot, and named
    expect([...svg.matchAll(/<path class="series" data-series="(\d)"/g)].map((m) => m[1])).to.deep.equal(['0', '1']);
    expect(svg).to.contain('>intuitor: off the scale, 20.6 … 20.7</text>');
    expect(svg).to.contain('<g class="legend-entry" data-series="2">');
    // the axis is the two others': 0.388 … 0.562 → ticks every 0.05
    expect(yTickLabels(svg)).to.deep.equal(['0.4', '0.45', '0.5', '0.55']);
    // without the option all three are drawn, on a 0 … 20 axis
    const all = lineChart(series, o);
    expect(all.match(/<path class="series"/g)).to.have.length(3);
    expect(yTickLabels(all)[0]).to.equal('0');
    // a low series within ten times the others' span stays (rent's reward std, 0.05 against 0.45 … 0.65)
    const near = [line([0.45, 0.65]), line([0.5, 0.6]), line([0.04, 0.06])].map((points, index) => ({ points, index }));
    expect([...offScale(near)]).to.deep.equal([]);
    // never with two series: which of two is "off" cannot be told
    expect([...offScale(series.slice(1).map((s, index) => ({ ...s, index })))]).to.deep.equal([]);
  });

  it('titles wrap instead of being clipped: every line within the chart, the plot below them', () => {
    const title =
      "Agreement with the supervisor's label: how often each agent's own majority answer equals the label it is rewarded with";
    const subtitle = 'each point the mean of the last 10 steps, computed per seed before averaging the seeds';
    const W = 540;
    const svg = lineChart([{ name: 'a', points: line([0.1, 0.2]) }], {
      title,
      subtitle,
      xLabel: 'training step',
      yLabel: 'fraction',
      width: W,
    });
    expect(svg).to.contain(`viewBox="0 0 ${W} `);
    const heads = [
      ...svg.matchAll(/<text class="(title|subtitle)" x="(\d+)" y="(\d+)" font-size="(\d+)"[^>]*>([^<]*)<\/text>/g),
    ];
    const titles = heads.filter((h) => h[1] === 'title').map((h) => h[5]!.replace(/&#39;|&apos;/g, "'"));
    expect(titles.length).to.be.greaterThan(1);
    expect(titles.join(' ')).to.equal(title); // every word kept, none cut
    for (const h of heads) {
      const width = textWidth(h[5]!, Number(h[4]), h[1] === 'title');
      expect(Number(h[2]) + width, h[5]).to.be.at.most(W - 8);
    }
    // the last heading's baseline (plus its descent) lies above the plot
    expect(Math.max(...heads.map((h) => Number(h[3]))) + 4).to.be.below(attr(svg, 'rect', 'plot', 'y'));
    // a single word wider than the chart is cut with "…", to the width
    const [cut] = wrapText('x'.repeat(200), 100, 13);
    expect(cut!.endsWith('…') && textWidth(cut!, 13) <= 100).to.equal(true);
  });

  it('a legend name too long for its column is cut to it, the full name in a tooltip', () => {
    const long = 'co-rl-'.repeat(30);
    const svg = lineChart(
      [
        { name: long, points: line([0.1, 0.2]) },
        { name: 'b', points: line([0.2, 0.3]) },
      ],
      { title: 't', xLabel: 'x', yLabel: 'y', width: 540 },
    );
    expect(svg).to.contain(`<title>${long}</title>`);
    const shown =
      /<g class="legend-entry" data-series="0"><title>[^<]*<\/title>.*?<text x="([\d.]+)"[^>]*>([^<]*)<\/text>/.exec(
        svg,
      )!;
    expect(shown[2]!.endsWith('…')).to.equal(true);
    expect(Number(shown[1]) + textWidth(shown[2]!, 10)).to.be.at.most(540 - 8);
  });
});

describe('core/report: no machine paths in the HTML', () => {
  it('portablePath and portableText write paths as a reader elsewhere can read them', () => {
    expect(portablePath('/work/corl/runs/cmp', '/work/corl')).to.equal('runs/cmp');
    expect(portablePath('/work/corl', '/work/corl')).to.equal('.');
    expect(portablePath('/tmp/corl-x/deep/runs/cmp', '/work/corl')).to.equal('…/runs/cmp');
    expect(portablePath('configs/co-rl.json', '/work/corl')).to.equal('configs/co-rl.json');
    const msg = `ENOENT: ${path.join(os.tmpdir(), 'x', 'm.onnx')} and ${path.join(os.homedir(), 'y')} and /w/c/z`;
    expect(portableText(msg, '/w/c')).to.equal('ENOENT: <tmp>/x/m.onnx and ~/y and ./z');
  });

  it('machinePaths finds what a page must not show, and nothing in ordinary text', () => {
    expect(machinePaths('<p>Rendered by corl report /tmp/corl-ab12/slips from 3 runs</p>')).to.deep.equal([
      '/tmp/corl-ab12/slips',
    ]);
    expect(machinePaths('<td>/home/ann/corl/runs</td> "/Users/bo/x"')).to.deep.equal([
      '/home/ann/corl/runs',
      '/Users/bo/x',
    ]);
    expect(machinePaths('see https://example.org/tmp/x, runs/compare-1 and a/work/b, 3/4')).to.deep.equal([]);
  });

  it('a comparison rendered under a temporary folder names none of it, nor the checkout', async function () {
    this.timeout(60000);
    const tmp = tempDir('corl-portable-');
    try {
      const dir = path.join(tmp.dir, 'slips-selection');
      fs.cpSync(path.join(RESULTS, 'slips-selection'), dir, { recursive: true });
      const r = await reportCompare(dir);
      const html = fs.readFileSync(r.report, 'utf8');
      expect(html).to.contain('Rendered by corl report …/'); // the folder, by its last parts only
      expect(machinePaths(html)).to.deep.equal([]);
      expect(html).not.to.contain(tmp.dir);
      expect(html).not.to.contain(path.resolve(RESULTS, '..', '..'));
    } finally {
      tmp.cleanup();
    }
  });

  it('the committed reports (docs/results/*/report.html) show no machine paths', () => {
    const pages = fs
      .readdirSync(RESULTS)
      .map((d) => path.join(RESULTS, d, 'report.html'))
      .filter((f) => fs.existsSync(f));
    expect(pages.length).to.be.at.least(3);
    for (const f of pages) expect(machinePaths(fs.readFileSync(f, 'utf8')), f).to.deep.equal([]);
  });
});
