import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { rateFromFolder, slowdown } from '../../core/compare/wall-time';
import { durationText, spansSeconds, type PredictionRecord, type RunSpan } from '../../core/report/wall-time';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';
import { writeFixturePlan } from '../fixtures/plans';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');
const corl = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
const records = (out: string): (PredictionRecord | RunSpan)[] =>
  fs
    .readFileSync(path.join(out, 'wall-time.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as PredictionRecord | RunSpan);
const predictions = (out: string) => records(out).filter((r): r is PredictionRecord => r.kind === 'prediction');
const spans = (out: string) => records(out).filter((r): r is RunSpan => r.kind === 'run');

describe('e2e: corl compare --plan predicts the wall time of each look; corl report states predicted and actual', function () {
  this.timeout(300000);
  let tmp: ReturnType<typeof tempDir>;
  let plan: (stop: string) => string;
  beforeEach(() => {
    tmp = tempDir('corl-wall-e2e-');
    writeConfig(tmp.dir, 'co-rl.json', coRlConfig({ trainer: { ...(coRlConfig().trainer as object), steps: 2 } }));
    writeConfig(tmp.dir, 'base.json', coRlConfig({ name: 'fixture-base', trainer: { steps: 0 } }));
    plan = (stop) => writeFixturePlan(path.join(tmp.dir, `plan-${stop}.json`), { name: 'fixture', extra: { stop } });
  });
  afterEach(() => tmp.cleanup());

  it('times each config briefly, prints each look before running, records it; the report quotes it beside the runs spans', () => {
    const out = path.join(tmp.dir, 'cmp');
    const r = corl(['compare', '--plan', plan('all-resolved'), '--out', out, '--progress', 'none']);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('timing this machine: 0 step(s) of fixture-base in a temporary folder');
    expect(r.stderr).to.contain('timing this machine: 2 step(s) of fixture-co-rl in a temporary folder');
    expect(r.stderr).to.match(
      /wall time, predicted: a run alone on this machine idle takes fixture-base \d+ s \(timed now\), fixture-co-rl \d+ s \(timed now\); load \d+\.\d\d on \d+ cores, a run keeps \d+\.\d\d cores busy, --jobs 1: each run x\d+\.\d\d alone/,
    );
    const [p, ...more] = predictions(out);
    expect(more).to.have.length(0);
    expect(p!.looks.map((l) => [l.look, l.runs, l.left])).to.deep.equal([
      [1, 4, 4],
      [2, 2, 2],
    ]);
    // the record is the model's arithmetic: look 1 is two runs of each config, one at a time, each slowed by s
    const s = slowdown({ load: p!.load, cores: p!.cores }, 1, p!.demand);
    const alone = p!.alone['fixture-base']!.seconds + p!.alone['fixture-co-rl']!.seconds;
    // (the record rounds each figure to the millisecond: each alone time by up to 0.0005 s, times s)
    expect(p!.looks[0]!.seconds).to.be.closeTo(s * 2 * alone, 0.002 * s + 0.001);
    expect(p!.looks[1]!.seconds).to.be.closeTo(s * alone, 0.001 * s + 0.001);
    // printed before the first look starts, with what the record holds
    const printed = `  look 1: 4 of 4 runs left, about ${durationText(p!.looks[0]!.seconds)} (`;
    expect(r.stderr).to.contain(printed).and.contain('  look 2: 2 of 2 runs left, about ');
    expect(r.stderr.indexOf(printed)).to.be.below(r.stderr.indexOf('look 1 of 2: seeds 1..2'));
    // every run's span, from its start to its end
    const timed = spans(out);
    expect(timed.map((x) => [x.config, x.seed, x.from, x.to, x.steps, x.concurrent])).to.deep.equal([
      ['fixture-base', 1, 0, 0, 0, 1],
      ['fixture-co-rl', 1, 0, 2, 2, 1],
      ['fixture-base', 2, 0, 0, 0, 1],
      ['fixture-co-rl', 2, 0, 2, 2, 1],
    ]);
    const rep = corl(['report', out]);
    expect(rep.status, rep.stderr).to.equal(0);
    const row = `Wall time of look 1 (4 runs): predicted ${durationText(p!.looks[0]!.seconds)} (${p!.at.slice(0, 10)} ${p!.at.slice(11, 16)} UTC, load ${p!.load.toFixed(2)} on ${p!.cores} cores, --jobs 1); actual ${durationText(spansSeconds(timed))} (`;
    expect(rep.stdout).to.contain(row).and.contain('x the prediction.');
    expect(rep.stdout).to.contain('Wall time of look 2 (2 runs): predicted ').and.contain('actual: not run yet.');
    expect(fs.readFileSync(path.join(out, 'report.html'), 'utf8')).to.contain(
      'Wall time of look 1 (4 runs): predicted',
    );
    // results.md, the committed table, holds results only
    expect(fs.readFileSync(path.join(out, 'results.md'), 'utf8')).to.not.contain('Wall time');
    // the comparison stopped at look 1: run again, nothing is predicted, nothing runs
    const again = corl(['compare', '--plan', plan('all-resolved'), '--out', out, '--progress', 'none']);
    expect(again.status, again.stderr).to.equal(0);
    expect(again.stderr).to.not.contain('wall time, predicted').and.not.contain('timing this machine');
    expect(predictions(out)).to.have.length(1);
  });

  it('on resume the rates are those of the runs already timed in the folder: nothing is calibrated', () => {
    const out = path.join(tmp.dir, 'cmp');
    const file = plan('last-look');
    for (const s of ['1/2', '2/2']) {
      const x = corl(['compare', '--plan', file, '--out', out, '--progress', 'none', '--shard', s]);
      expect(x.status, x.stderr).to.equal(0);
      // a shard predicts nothing; it records its runs' spans
      expect(x.stderr).to.not.contain('wall time, predicted');
    }
    const before = spans(out);
    expect(before).to.have.length(4);
    const r = corl(['compare', '--plan', file, '--out', out, '--progress', 'none']);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.not.contain('timing this machine');
    expect(r.stderr).to.match(/fixture-base \d+ s \(its runs here\), fixture-co-rl \d+ s \(its runs here\)/);
    expect(r.stderr).to.contain('  look 1: 0 of 4 runs left, about 0 s').and.contain('  look 2: 2 of 2 runs left');
    const [p] = predictions(out);
    for (const c of ['fixture-base', 'fixture-co-rl']) {
      const known = rateFromFolder(before, c)!.rate;
      expect(known.kind).to.equal('whole');
      expect(p!.alone[c]!.seconds).to.be.closeTo(known.kind === 'whole' ? known.run : NaN, 0.001);
    }
    const rep = corl(['report', out]);
    expect(rep.status, rep.stderr).to.equal(0);
    // look 1 ran before any prediction; look 2 was predicted whole, then ran
    expect(rep.stdout).to.match(/Wall time of look 1 \(4 runs\): no prediction recorded; actual \d+ s \(/);
    expect(rep.stdout).to.match(
      /Wall time of look 2 \(2 runs\): predicted \d+ s \(.*\); actual \d+ s \(.*\), \d+\.\d\dx the prediction\./,
    );
  });

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)
    it(`${signal} while it times the machine exits ${code}, saying how to resume, and leaves no temporary folder`, async () => {
      const tmpRoot = path.join(tmp.dir, 'tmp');
      fs.mkdirSync(tmpRoot);
      const child = spawn(
        process.execPath,
        [BIN, 'compare', '--plan', plan('all-resolved'), '--out', path.join(tmp.dir, 'cmp'), '--progress', 'none'],
        {
          env: { ...process.env, TMPDIR: tmpRoot },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const ended = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      const calibrating = (): string[] => fs.readdirSync(tmpRoot).filter((f) => f.startsWith('corl-calibrate-'));
      // catch it inside a calibration: freeze it once its folder is seen, and signal it only if the folder is still there
      let caught = false;
      while (!caught && child.exitCode === null) {
        if (calibrating().length) {
          child.kill('SIGSTOP');
          if (calibrating().length) caught = true;
          else child.kill('SIGCONT');
        }
        if (!caught) await new Promise((r) => setTimeout(r, 2));
      }
      expect(caught, `never caught inside a calibration: ${stderr}`).to.equal(true);
      child.kill(signal);
      child.kill('SIGCONT');
      expect(await ended).to.equal(code);
      expect(stderr).to.contain(`corl compare: stopped by ${signal}; run the same command again to resume`);
      expect(stderr, 'no stack from the removal at exit').to.not.match(/\n\s+at \S|ENOTEMPTY/);
      expect(calibrating()).to.deep.equal([]);
    });
});
