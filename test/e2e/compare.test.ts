import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');
const corl = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

describe('e2e: corl compare and the report', function () {
  this.timeout(180000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-cmp-');
  });
  afterEach(() => tmp.cleanup());

  it('runs configs × seeds, marks supervised rows, writes a self-contained report, and resumes', () => {
    const ring = writeConfig(tmp.dir, 'co-rl.json', coRlConfig());
    const gt = writeConfig(
      tmp.dir,
      'gt.json',
      coRlConfig({ name: 'fixture-gt', labelFree: false, reward: 'corl:ground-truth' }),
    );
    const base = writeConfig(
      tmp.dir,
      'base.json',
      coRlConfig({ name: 'fixture-base', trainer: { steps: 0 }, eval: { samples: 4, ensemble: 2 } }),
    );
    const out = path.join(tmp.dir, 'cmp');
    const r = corl(['compare', base, ring, gt, '--seeds', '2', '--steps', '2', '--out', out, '--progress', 'none']);
    expect(r.status, r.stderr).to.equal(0);
    const lines = r.stdout.split('\n');
    expect(lines.find((l) => l.startsWith('fixture-gt'))).to.match(/fixture-gt\s+yes\s+2\s+2\s/);
    expect(lines.find((l) => l.startsWith('fixture-co-rl'))).to.match(/fixture-co-rl\s+no\s+2\s+2\s/);
    expect(lines.find((l) => l.startsWith('fixture-base')))
      .to.contain('maj@4')
      .and.contain('maj@4'); // ensemble of 2 agents × 2 samples
    for (const s of [0, 1])
      expect(fs.existsSync(path.join(out, 'fixture-co-rl', `seed-${s}`, 'metrics.jsonl'))).to.equal(true);
    const seeds = [0, 1].map(
      (s) => JSON.parse(fs.readFileSync(path.join(out, 'fixture-co-rl', `seed-${s}`, 'config.json'), 'utf8')).seed,
    );
    expect(seeds).to.deep.equal([11, 1011]);
    const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    expect(html)
      .to.contain('<svg')
      .and.contain('Held-out accuracy')
      .and.contain('Pseudo-label accuracy')
      .and.contain('Reward std')
      .and.contain('Completion length')
      .and.contain('Cohen')
      .and.contain('yes (supervised)');
    expect(html).to.not.match(/<script|https?:\/\/(?!www\.w3\.org)/); // self-contained
    const results = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    expect(results.map((x: { name: string }) => x.name)).to.deep.equal(['fixture-base', 'fixture-co-rl', 'fixture-gt']);

    // Again with more steps: finished runs are extended (resumed), not restarted.
    const before = fs
      .readFileSync(path.join(out, 'fixture-co-rl', 'seed-0', 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"phase":"train"'));
    const again = corl(['compare', base, ring, gt, '--seeds', '2', '--steps', '3', '--out', out, '--progress', 'none']);
    expect(again.status, again.stderr).to.equal(0);
    expect(again.stderr)
      .to.contain('fixture-base seed 11: done earlier, skipped')
      .and.contain('fixture-co-rl seed 11: resuming at step 2');
    const after = fs
      .readFileSync(path.join(out, 'fixture-co-rl', 'seed-0', 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"phase":"train"'));
    expect(after.slice(0, before.length)).to.deep.equal(before);
    expect(after.length).to.equal(before.length + 2);
  });

  it('--first-seed starts at a later seed index, and runs go seed by seed across configs', () => {
    const ring = writeConfig(tmp.dir, 'co-rl.json', coRlConfig());
    const base = writeConfig(tmp.dir, 'base.json', coRlConfig({ name: 'fixture-base', trainer: { steps: 0 } }));
    const out = path.join(tmp.dir, 'cmp');
    const args = ['compare', base, ring, '--seeds', '2', '--first-seed', '3', '--steps', '1', '--out', out];
    const r = corl([...args, '--progress', 'none']);
    expect(r.status, r.stderr).to.equal(0);
    // seed = config seed (11) + 1000·i for i = 3, 4; folders named by the index
    const order = r.stderr.split('\n').filter((l) => l.includes(': starting'));
    expect(order).to.deep.equal([
      '[1/4] fixture-base seed 3011: starting',
      '[2/4] fixture-co-rl seed 3011: starting',
      '[3/4] fixture-base seed 4011: starting',
      '[4/4] fixture-co-rl seed 4011: starting',
    ]);
    for (const s of [3, 4])
      expect(
        JSON.parse(fs.readFileSync(path.join(out, 'fixture-co-rl', `seed-${s}`, 'config.json'), 'utf8')).seed,
      ).to.equal(11 + 1000 * s);
    expect(fs.existsSync(path.join(out, 'fixture-co-rl', 'seed-0'))).to.equal(false);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'compare.json'), 'utf8')).firstSeed).to.equal(3);
    expect(corl(['compare', base, ring, '--seeds', '1', '--first-seed', '-1', '--out', out]).stderr).to.contain(
      'CORL_ERR_CLI_USAGE',
    );
  });

  it('--verdict ends with one line: the last config against the others, in points, with the problem count and seeds', () => {
    const ring = writeConfig(tmp.dir, 'co-rl.json', coRlConfig());
    const base = writeConfig(tmp.dir, 'base.json', coRlConfig({ name: 'fixture-base', trainer: { steps: 0 } }));
    const out = path.join(tmp.dir, 'cmp');
    const r = corl([
      'compare',
      base,
      ring,
      '--seeds',
      '1',
      '--steps',
      '2',
      '--out',
      out,
      '--progress',
      'none',
      '--verdict',
    ]);
    expect(r.status, r.stderr).to.equal(0);
    const last = r.stdout.trim().split('\n').pop()!;
    const results = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    const signed = (x: number): string => {
      const points = Math.abs(100 * x).toFixed(1);
      return `${points === '0.0' ? '±' : x > 0 ? '+' : '−'}${points}`; // no "−0.0"
    };
    type Agent = { name: string; mean: number };
    const agents = (results[1].perAgent as Agent[])
      .map((a, i) => `${a.name} ${signed(a.mean - (results[0].perAgent as Agent[])[i]!.mean)}`)
      .join(', ');
    expect(last).to.equal(
      `fixture-co-rl: ${signed(results[1].average.mean - results[0].average.mean)} points over fixture-base (${agents}) on 3 held-out problems; 1 seed cannot decide (an interval needs at least 2 seeds); see docs/results.md for many-seed comparisons`,
    );
    // With a committed comparison of the same configs (names aside), the line points to it and says what it decided.
    const committed = path.join(tmp.dir, 'committed');
    const two = corl([
      'compare',
      base,
      ring,
      '--seeds',
      '2',
      '--steps',
      '2',
      '--out',
      path.join(committed, 'two'),
      '--progress',
      'none',
    ]);
    expect(two.status, two.stderr).to.equal(0);
    const again = corl([
      'compare',
      base,
      ring,
      '--seeds',
      '1',
      '--steps',
      '2',
      '--out',
      out,
      '--progress',
      'none',
      '--verdict',
      '--committed',
      committed,
    ]);
    expect(again.status, again.stderr).to.equal(0);
    const pair = JSON.parse(fs.readFileSync(path.join(committed, 'two', 'verdicts.json'), 'utf8')).pairs[0];
    const quoted = again.stdout.trim().split('\n').pop()!;
    expect(quoted).to.match(
      new RegExp(
        `1 seed cannot decide \\(an interval needs at least 2 seeds\\)\\. 2 seeds of the same configs committed in .*two: fixture-co-rl − fixture-base [+−±]\\d+\\.\\d points \\(average pass@1 over agents at the last evaluation\\), 95% CI \\[.*\\], ${pair.outcome}$`,
      ),
    );
    // the page says what the terminal says: one seed decides nothing, and the committed result with its interval
    const page = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    expect(page).to.contain('One seed per config: each difference above is one draw');
    expect(page).to.contain(`<b>Committed many-seed result</b>: ${esc(quoted.slice(quoted.indexOf('2 seeds of')))}.`);
    expect(page).to.not.contain('± 0.0');

    // Re-run into a folder that holds a config not named: the table, page and verdict are about what was named.
    const gt = writeConfig(
      tmp.dir,
      'gt.json',
      coRlConfig({ name: 'fixture-gt', labelFree: false, reward: 'corl:ground-truth' }),
    );
    const three = corl(['compare', base, gt, ring, '--seeds', '1', '--steps', '2', '--out', out, '--progress', 'none']);
    expect(three.status, three.stderr).to.equal(0);
    const named = corl([
      'compare',
      ring,
      base,
      '--seeds',
      '1',
      '--steps',
      '2',
      '--out',
      out,
      '--progress',
      'none',
      '--verdict',
    ]);
    expect(named.status, named.stderr).to.equal(0);
    expect(named.stdout.trim().split('\n').pop()).to.match(/^fixture-base: [+−±]\d+\.\d points over fixture-co-rl /);
    expect(named.stdout).to.not.match(/^fixture-gt /m);
    expect(named.stdout).to.contain('also holds runs of fixture-gt, not named on this command line');
    const shown = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8')).map(
      (x: { name: string }) => x.name,
    );
    expect(shown).to.deep.equal(['fixture-co-rl', 'fixture-base']);
    const again2 = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    expect(again2).to.contain('<h1>corl compare: fixture-co-rl, fixture-base</h1>');
    expect(again2).to.contain('also holds runs of fixture-gt, not named on this command line');
  });

  it('corl report rewrites a comparison from its finished runs without running anything, in the order compare was given', () => {
    const ring = writeConfig(tmp.dir, 'co-rl.json', coRlConfig());
    const base = writeConfig(
      tmp.dir,
      'base.json',
      coRlConfig({ name: 'fixture-base', trainer: { steps: 0 }, eval: { samples: 4, ensemble: 2 } }),
    );
    const out = path.join(tmp.dir, 'cmp');
    const r = corl(['compare', ring, base, '--seeds', '2', '--steps', '2', '--out', out, '--progress', 'none']);
    expect(r.status, r.stderr).to.equal(0);
    const table = fs.readFileSync(path.join(out, 'results.txt'), 'utf8');
    fs.rmSync(path.join(out, 'report.html'));
    fs.rmSync(path.join(out, 'results.txt'));
    const again = corl(['report', out]);
    expect(again.status, again.stderr).to.equal(0);
    expect(fs.readFileSync(path.join(out, 'results.txt'), 'utf8')).to.equal(table); // same rows, same order (co-rl first)
    expect(again.stdout)
      .to.contain(table.trimEnd())
      .and.contain(`report: ${path.join(out, 'report.html')}`);
    expect(fs.readFileSync(path.join(out, 'report.html'), 'utf8'))
      .to.contain('<svg')
      .and.contain('Rendered by corl report');
    // Nothing ran: no run folder changed.
    const metrics = fs.readFileSync(path.join(out, 'fixture-co-rl', 'seed-1', 'metrics.jsonl'), 'utf8');
    // An unfinished run is left out and named.
    const stateFile = path.join(out, 'fixture-co-rl', 'seed-1', 'state.json');
    fs.writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(stateFile, 'utf8')), finished: false }));
    const partial = corl(['report', out]);
    expect(partial.status, partial.stderr).to.equal(0);
    expect(partial.stdout).to.contain('left out, unfinished: fixture-co-rl/seed-1');
    expect(partial.stdout.split('\n').find((l) => l.startsWith('fixture-co-rl'))).to.match(
      /fixture-co-rl\s+no\s+1\s+2\s/,
    );
    expect(fs.readFileSync(path.join(out, 'fixture-co-rl', 'seed-1', 'metrics.jsonl'), 'utf8')).to.equal(metrics);
    // A single run directory gets its own report.
    const run = corl(['report', path.join(out, 'fixture-base', 'seed-0')]);
    expect(run.status, run.stderr).to.equal(0);
    expect(fs.existsSync(path.join(out, 'fixture-base', 'seed-0', 'report.html'))).to.equal(true);
    // Neither kind of folder: a coded error naming it.
    const none = corl(['report', tmp.dir]);
    expect(none.status).to.equal(1);
    expect(none.stderr).to.contain('CORL_ERR_RUN_NOT_FOUND').and.contain(tmp.dir);
  });

  it('corl train writes a report for the run', () => {
    const file = writeConfig(tmp.dir, 'co-rl.json', coRlConfig());
    const out = path.join(tmp.dir, 'run');
    const r = corl(['train', '-c', file, '--out', out, '--steps', '2', '-q']);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.contain(`report: ${path.join(out, 'report.html')}`);
    expect(fs.readFileSync(path.join(out, 'report.html'), 'utf8')).to.contain('<svg');
  });

  it('bad input to compare: duplicate names and bad flags are coded errors', () => {
    const a = writeConfig(tmp.dir, 'a.json', coRlConfig());
    const b = writeConfig(tmp.dir, 'b.json', coRlConfig());
    expect(corl(['compare', a, b, '--out', path.join(tmp.dir, 'x')]).stderr)
      .to.contain('CORL_ERR_CLI_USAGE')
      .and.contain('distinct names');
    expect(corl(['compare', a, '--seeds', '0']).stderr).to.contain('CORL_ERR_CLI_USAGE');
    expect(corl(['compare', a, '--progress', 'loud']).stderr).to.contain('--progress');
  });
});
