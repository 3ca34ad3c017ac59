import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfigValue } from '../../core/config/load';
import { reportCompare } from '../../core/report/compare';
import { runCompare } from '../../core/compare/run';
import { seriesStyle } from '../../core/report/palette';
import { writeRunReport } from '../../core/report/write';
import { RunDirectory } from '../../core/trainer/run-dir';
import { train } from '../../core/trainer/trainer';
import {
  CHROMIUM_PATHS,
  confusablePairs,
  findChromium,
  inspectReport,
  launchChromium,
  machinePaths,
  type ReportInspection,
} from '../../scripts/report-browser';
import { defaultJob } from '../../scripts/screenshots';
import { coRlConfig, tempDir } from '../fixtures/configs';
import { describeWithChromium } from '../support/chromium';

const ROOT = path.resolve(__dirname, '../../..');
const RESULTS = path.join(ROOT, 'docs', 'results');

/** Train the fixture cohort for `steps` of `planned` steps (stopping early when fewer) into `dir`. */
async function fixtureRun(dir: string, planned: number, steps: number): Promise<void> {
  const loaded = await loadConfigValue(coRlConfig({ trainer: { ...coRlTrainer(), steps: planned } }), {
    baseDir: path.dirname(dir),
  });
  const run = await RunDirectory.create(dir, loaded.config, loaded.source, {
    baseDir: path.dirname(dir),
    supervised: loaded.readsGroundTruth,
  });
  let done = 0;
  await train(loaded, { run, shouldStop: () => ++done >= steps });
}

function coRlTrainer(): Record<string, unknown> {
  return (coRlConfig().trainer as Record<string, unknown>) ?? {};
}

/** A comparison folder copied from the committed results, to render without touching them. */
function copyResults(name: string, to: string): string {
  const dir = path.join(to, name);
  fs.cpSync(path.join(RESULTS, name), dir, { recursive: true });
  return dir;
}

/** What every report must pass in the browser, whatever it shows. */
function expectClean(seen: ReportInspection, html: string): void {
  expect(seen.errors, 'console and page errors').to.deep.equal([]);
  expect(seen.overflow, 'text leaving its box').to.deep.equal([]);
  expect(seen.legend, 'legend entries not drawn').to.deep.equal([]);
  expect(seen.blendingBands, 'translucent ± sd bands').to.deep.equal([]);
  expect(machinePaths(html), 'machine paths in the HTML').to.deep.equal([]);
  const plotted = seen.charts.filter((c) => c.lines > 0);
  expect(plotted.length, 'charts with lines').to.be.greaterThan(0);
  for (const c of plotted) expect(c.legend.length, `legend of "${c.title}"`).to.be.at.least(c.lines);
  const held = seen.referenceLines.filter((r) => r.chart === 'Held-out accuracy (pass@1)');
  expect(held, 'the base reference line of the held-out chart').to.have.length(1);
  expect(held[0]!.inside && held[0]!.width > 100, 'the base line spans the plot').to.equal(true);
  expect(
    seen.charts.find((c) => c.title === 'Held-out accuracy (pass@1)')!.legend.some((n) => n.startsWith('base (step 0')),
  ).to.be.true;
}

describe('integrations: finding the browser', () => {
  it("$CORL_CHROMIUM first, then Debian's /usr/bin/chromium, then the usual Chrome paths", () => {
    const on =
      (...files: string[]) =>
      (f: string) =>
        files.includes(f);
    expect(CHROMIUM_PATHS[0]).to.equal('/usr/bin/chromium');
    expect(findChromium({}, on('/usr/bin/chromium', '/usr/bin/google-chrome'))).to.equal('/usr/bin/chromium');
    expect(findChromium({}, on('/usr/bin/google-chrome'))).to.equal('/usr/bin/google-chrome');
    expect(findChromium({ CORL_CHROMIUM: '/opt/c/chrome' }, on('/opt/c/chrome', '/usr/bin/chromium'))).to.equal(
      '/opt/c/chrome',
    );
    // a $CORL_CHROMIUM that is not there is not silently replaced by another browser
    expect(findChromium({ CORL_CHROMIUM: '/opt/c/chrome' }, on('/usr/bin/chromium'))).to.equal(null);
    expect(findChromium({}, on())).to.equal(null);
    // on this machine: where Debian's chromium is installed, it is the one the browser test uses
    if (fs.existsSync('/usr/bin/chromium') && !process.env.CORL_CHROMIUM)
      expect(findChromium()).to.equal('/usr/bin/chromium');
  });
});

describeWithChromium('integrations: the report in headless Chromium', function (chromium) {
  this.timeout(180000);
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let tmp: ReturnType<typeof tempDir>;
  before(async () => {
    browser = await launchChromium(chromium);
    tmp = tempDir('corl-browser-');
  });
  after(async () => {
    await browser?.close();
    tmp?.cleanup();
  });

  it("the default job's report (npm start's configs, 2 training steps): clean, three configs, the base line, no banner", async () => {
    const job = defaultJob();
    expect(job.configs.map((c) => path.basename(c))).to.deep.equal(['base.json', 'ttrl.json', 'co-rl.json']);
    const r = await runCompare({
      configs: job.configs.map((c) => path.join(ROOT, c)),
      seeds: job.seeds,
      steps: 2,
      out: path.join(tmp.dir, 'default'),
      progress: 'none',
      log: () => {},
      verdict: true,
    });
    const html = fs.readFileSync(r.report, 'utf8');
    const seen = await inspectReport(browser, r.report);
    expectClean(seen, html);
    expect(seen.banner).to.equal(null);
    expect(seen.charts.find((c) => c.title === 'Held-out accuracy (pass@1)')!.legend).to.have.length(4); // 3 configs + base
    expect(seen.series.filter((s) => s.chart === 'Held-out accuracy (pass@1)').map((s) => s.name)).to.deep.equal([
      'base',
      'ttrl',
      'co-rl',
    ]);
    expect(confusablePairs(seen.series)).to.deep.equal({ colour: [], greyscale: [] });
  });

  it('the committed comparison page docs/results/slips/report.html, as committed', async () => {
    const file = path.join(RESULTS, 'slips', 'report.html');
    const seen = await inspectReport(browser, file);
    expectClean(seen, fs.readFileSync(file, 'utf8'));
    expect(seen.banner).to.equal(null);
    expect(seen.charts.find((c) => c.title === 'Held-out accuracy (pass@1)')!.lines).to.equal(9);
    // rewards of different sources are never on one axis: a mean-reward chart per source
    const rewards = seen.charts.filter((c) => c.title.startsWith('Mean reward'));
    expect(rewards.map((c) => c.title).sort()).to.deep.equal([
      'Mean reward: corl:ground-truth',
      'Mean reward: corl:intrinsic (method intuitor)',
      'Mean reward: corl:intrinsic (method rent)',
      'Mean reward: corl:vote',
    ]);
    expect(rewards.find((c) => c.title === 'Mean reward: corl:vote')!.lines).to.equal(5); // ttrl, 3 co-rl, n3-ring
    expect(rewards.every((c) => c.legend.every((l) => !l.includes('off the scale')))).to.equal(true);
    // TTRL's agreement with its own label, 100% at every step, is named and not drawn
    const agreement = seen.charts.find((c) => c.title === "Agreement with the supervisor's label")!;
    expect(agreement.legend.some((l) => l.startsWith('ttrl'))).to.equal(false);
    expect(fs.readFileSync(file, 'utf8')).to.contain('not drawn, the same at every step: ttrl 100%');
    expect(confusablePairs(seen.series)).to.deep.equal({ colour: [], greyscale: [] });
  });

  it("a finished run's report: no errors, no overflowing text, every legend entry drawn, the base line, no banner, no machine paths", async () => {
    const dir = path.join(tmp.dir, 'run');
    await fixtureRun(dir, 12, 12);
    const file = await writeRunReport(dir);
    const html = fs.readFileSync(file, 'utf8');
    expect(html).to.contain('corl run: fixture-co-rl'); // the run folder lies under the temporary folder …
    const seen = await inspectReport(browser, file);
    expectClean(seen, html); // … and the page names none of it
    expect(seen.banner).to.equal(null);
    expect(seen.series.filter((s) => s.chart === 'Held-out accuracy (pass@1)').map((s) => s.name)).to.deep.equal([
      'fixture-co-rl a',
      'fixture-co-rl b',
    ]);
  });

  it('a partial run says so at the top, and a failed one too', async () => {
    const dir = path.join(tmp.dir, 'partial');
    await fixtureRun(dir, 12, 3);
    const file = await writeRunReport(dir);
    const seen = await inspectReport(browser, file);
    expectClean(seen, fs.readFileSync(file, 'utf8'));
    expect(seen.banner?.atTop).to.equal(true);
    expect(seen.banner?.text).to.match(/^Partial results: the run has not finished: 3 of 12 training step\(s\) done/);

    await writeRunReport(dir, 'the policy ran out of memory');
    const failed = await inspectReport(browser, file);
    expect(failed.banner?.atTop).to.equal(true);
    expect(failed.banner?.text)
      .to.match(/^Failed run: the run stopped with an error after 3 of 12 training step\(s\) done/)
      .and.contain('the policy ran out of memory');
  });

  it('the committed comparison (docs/results/slips), rendered afresh from a copy', async () => {
    const dir = copyResults('slips', tmp.dir);
    const r = await reportCompare(dir);
    const html = fs.readFileSync(r.report, 'utf8');
    const seen = await inspectReport(browser, r.report);
    expectClean(seen, html);
    expect(seen.banner).to.equal(null);
    expect(seen.charts.find((c) => c.title === 'Held-out accuracy (pass@1)')!.lines).to.equal(9);
    // the "base" config (0 steps) lies under every other line at step 0, and is still drawn
    expect(seen.series.some((s) => s.chart === 'Held-out accuracy (pass@1)' && s.name === 'base')).to.equal(true);
    expect(confusablePairs(seen.series)).to.deep.equal({ colour: [], greyscale: [] });
  });

  it('every config of docs/results/slips-budget (30): the first twelve differ in colour, marker and greyscale; all in colour with marker', async () => {
    const dir = copyResults('slips-budget', tmp.dir);
    const configs = fs.readdirSync(dir).filter((d) => fs.statSync(path.join(dir, d)).isDirectory()).length;
    expect(configs, 'more configs than the palette has styles').to.be.greaterThan(12);
    const r = await reportCompare(dir);
    const seen = await inspectReport(browser, r.report);
    expectClean(seen, fs.readFileSync(r.report, 'utf8'));
    const held = seen.series.filter((s) => s.chart === 'Held-out accuracy (pass@1)');
    expect(held).to.have.length(configs);
    const first12 = held.slice(0, 12);
    expect(new Set(first12.map((s) => s.color)).size).to.equal(12);
    expect(new Set(first12.map((s) => s.marker)).size).to.equal(12);
    // what the browser drew is the palette's style, series by series
    expect(first12.map((s) => s.color)).to.deep.equal(first12.map((_, i) => seriesStyle(i).color.toLowerCase()));
    expect(new Set(held.map((s) => `${s.color} ${s.marker}`)).size).to.equal(configs);
    expect(confusablePairs(seen.series, 12)).to.deep.equal({ colour: [], greyscale: [] });
    expect(confusablePairs(seen.series, configs).colour).to.deep.equal([]);
  });

  it('a comparison with an unfinished run says so at the top', async () => {
    const dir = copyResults('slips-selection', tmp.dir);
    const [config] = fs.readdirSync(dir).filter((d) => fs.statSync(path.join(dir, d)).isDirectory());
    const stateFile = path.join(dir, config!, 'seed-0', 'state.json');
    fs.writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(stateFile, 'utf8')), finished: false }));
    const r = await reportCompare(dir);
    const seen = await inspectReport(browser, r.report);
    expectClean(seen, fs.readFileSync(r.report, 'utf8'));
    expect(seen.banner?.atTop).to.equal(true);
    expect(seen.banner?.text)
      .to.match(/^Partial results: this comparison is incomplete/)
      .and.contain(`left out, unfinished: ${config}/seed-0`);
  });
});
