import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileSha256 } from '../../core/compare/plan';
import { evalStepFiles } from '../../core/report/markdown';
import { RunDirectory } from '../../core/trainer/run-dir';
import { readTextMaybeGz } from '../../core/util/gz';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';
import { writeFixturePlan } from '../fixtures/plans';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');
const corl = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
const json = (file: string): any => JSON.parse(fs.readFileSync(file, 'utf8'));
/** `corl …` in its own process, concurrently with others. */
const corlAsync = (args: string[]): Promise<{ status: number | null; stderr: string; stdout: string }> =>
  new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args]);
    let stderr = '';
    let stdout = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.on('close', (status) => resolve({ status, stderr, stdout }));
  });

describe('e2e: corl compare with a plan, sequential seeds and parallel runs', function () {
  this.timeout(300000);
  let tmp: ReturnType<typeof tempDir>;
  let base: string;
  let ring: string;
  beforeEach(() => {
    tmp = tempDir('corl-plan-e2e-');
    ring = writeConfig(
      tmp.dir,
      'co-rl.json',
      coRlConfig({ trainer: { ...(coRlConfig().trainer as object), steps: 2 } }),
    );
    base = writeConfig(tmp.dir, 'base.json', coRlConfig({ name: 'fixture-base', trainer: { steps: 0 } }));
  });
  afterEach(() => tmp.cleanup());

  const planFile = (extra: Record<string, unknown> = {}): string =>
    writeFixturePlan(path.join(tmp.dir, 'plan.json'), { name: 'fixture', extra, space: 2 });

  it('--plan runs the plan look by look, blind between looks, records it by hash and stops when every pair resolves', () => {
    const plan = planFile();
    const out = path.join(tmp.dir, 'cmp');
    const r = corl(['compare', '--plan', plan, '--out', out, '--progress', 'lines']);
    expect(r.status, r.stderr).to.equal(0);
    // ±90 points is wide: the pair is resolved (equivalent, or ahead or behind) at look 1, so look 2 never runs
    expect(r.stderr).to.contain('look 1 of 2: seeds 1..2 (2 per config)').and.not.contain('look 2 of 2');
    expect(fs.existsSync(path.join(out, 'fixture-co-rl', 'seed-3'))).to.equal(false);
    // the progress lines hide held-out accuracy under a plan
    expect(r.stderr).to.match(/eval @ step 0: done .*results hidden until the plan's look/);
    expect(r.stderr).to.not.match(/eval @ step \d+: a \d/);
    const meta = json(path.join(out, 'compare.json'));
    expect(meta.plan.sha256).to.equal(fileSha256(plan));
    expect(meta.plan.plan.name).to.equal('fixture');
    expect(meta.sha256['fixture-co-rl']).to.equal(fileSha256(ring));
    expect(r.stdout).to.match(
      /fixture-co-rl − fixture-base: .* over 2 seeds .*: (equivalent within ±90\.0|ahead|behind) \[primary\]/,
    );
    expect(r.stdout).to.contain('look 1 of 2 (2 seeds): stopped').and.contain('followed: yes');
    const reads = fs
      .readFileSync(path.join(out, 'reads.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(reads.map((x) => [x.read, x.by, x.runs, x.plan])).to.deep.equal([
      [1, 'corl compare, look 1', { 'fixture-base': '1-2', 'fixture-co-rl': '1-2' }, fileSha256(plan)],
    ]);
    const v = json(path.join(out, 'verdicts.json'));
    expect(v.followed).to.equal(true);
    expect(v.looks).to.have.length(1);
    // running it again resumes: nothing new runs, nothing new is read
    const again = corl(['compare', '--plan', plan, '--out', out, '--progress', 'none']);
    expect(again.status, again.stderr).to.equal(0);
    expect(again.stderr).to.contain('done earlier, skipped').and.not.contain('starting');
    expect(fs.readFileSync(path.join(out, 'reads.jsonl'), 'utf8').trim().split('\n')).to.have.length(1);
  });

  it('a plan fixes what it names: other flags, another plan, a changed config are coded errors', () => {
    const plan = planFile();
    const out = path.join(tmp.dir, 'cmp');
    for (const flags of [['--seeds', '4'], ['--margin', '1'], ['--until-resolved'], ['--steps', '3']]) {
      const r = corl(['compare', '--plan', plan, '--out', out, ...flags]);
      expect(r.status, flags.join(' ')).to.equal(1);
      expect(r.stderr).to.contain('CORL_ERR_PLAN_MISMATCH').and.contain(flags[0]!);
    }
    const other = corl(['compare', ring, '--plan', plan, '--out', out]);
    expect(other.stderr).to.contain('CORL_ERR_PLAN_MISMATCH').and.contain("expected the plan's configs");
    fs.writeFileSync(ring, fs.readFileSync(ring, 'utf8').replace('"seed": 11', '"seed": 12'));
    const changed = corl(['compare', '--plan', plan, '--out', out]);
    expect(changed.status).to.equal(1);
    expect(changed.stderr).to.contain('CORL_ERR_PLAN_CONFIG_CHANGED').and.contain('co-rl.json');
    expect(corl(['compare', '--plan', path.join(tmp.dir, 'nope.json')]).stderr).to.contain('CORL_ERR_PLAN_INVALID');
  });

  it('corl report --plan attaches a plan to runs made without it, checking each run; a folder of one plan refuses another', () => {
    const out = path.join(tmp.dir, 'cmp');
    const r = corl(['compare', base, ring, '--seeds', '2', '--first-seed', '1', '--out', out, '--progress', 'none']);
    expect(r.status, r.stderr).to.equal(0);
    const plan = planFile();
    const rep = corl(['report', out, '--plan', plan]);
    expect(rep.status, rep.stderr).to.equal(0);
    expect(json(path.join(out, 'compare.json')).plan.attached).to.match(/attached by corl report --plan/);
    // the compare's own rendering was read 1 (not at a look under the plan? it was: 2 seeds from index 1), then nothing new
    expect(rep.stdout).to.contain('Plan: fixture').and.contain('look 1 of 2 (2 seeds)');
    const other = planFile({ name: 'fixture-2' });
    expect(corl(['report', out, '--plan', other]).stderr).to.contain('CORL_ERR_PLAN_MISMATCH');
    expect(corl(['compare', base, ring, '--seeds', '2', '--out', out]).stderr).to.contain('CORL_ERR_PLAN_MISMATCH');
  });

  it('--until-resolved without a plan: looks from --looks, the design recorded; bad flags are usage errors', () => {
    const out = path.join(tmp.dir, 'seq');
    const r = corl([
      'compare',
      base,
      ring,
      '--until-resolved',
      '--looks',
      '2,3',
      '--margin',
      '90',
      '--pairs',
      'fixture-co-rl:fixture-base',
      '--out',
      out,
      '--progress',
      'none',
    ]);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('look 1 of 2');
    expect(json(path.join(out, 'compare.json')).design).to.deep.include({ metric: 'final', alpha: 0.05, margin: 90 });
    expect(json(path.join(out, 'verdicts.json')).stopped).to.equal(true);
    const usage = (args: string[], text: string): void => {
      const x = corl(['compare', base, ring, ...args]);
      expect(x.status, args.join(' ')).to.equal(2);
      expect(x.stderr).to.contain('CORL_ERR_CLI_USAGE').and.contain(text);
    };
    usage(['--until-resolved'], 'expected --looks with --until-resolved');
    usage(['--looks', '2,3'], 'only with --until-resolved');
    usage(['--until-resolved', '--looks', '3,2'], 'expected --looks to increase');
    usage(['--until-resolved', '--looks', '2,3', '--seeds', '4'], 'got --seeds too');
    usage(['--pairs', 'fixture-co-rl'], 'expected --pairs as a:b');
    usage(['--pairs', 'x:fixture-base', '--out', path.join(tmp.dir, 'p')], 'got "x"');
    usage(['--alpha', '0.7'], '--alpha');
    usage(['--metric', 'best'], '--metric');
  });

  it('--shard 1/2 and 2/2 run a look in two processes and read nothing; the comparison after them runs nothing and writes what one process writes', async function () {
    this.timeout(900000); // four comparisons of tiny runs: a guard against a hang, not a speed check
    const plan = planFile();
    const one = path.join(tmp.dir, 'one');
    const out = path.join(tmp.dir, 'sharded');
    expect(corl(['compare', '--plan', plan, '--out', one, '--progress', 'none']).status).to.equal(0);
    const shards = await Promise.all(
      ['1/2', '2/2'].map((s) =>
        corlAsync(['compare', '--plan', plan, '--out', out, '--progress', 'lines', '--shard', s]),
      ),
    );
    shards.forEach((r) => expect(r.status, r.stderr).to.equal(0));
    expect(shards[0]!.stdout).to.contain('shard 1/2: seeds 1 ran');
    expect(shards[1]!.stdout).to.contain('shard 2/2: seeds 2 ran');
    expect(shards[0]!.stderr).to.contain('shard 1/2 of look 1 of 2: seeds 1');
    // nothing rendered, nothing read, held-out accuracy hidden as in any planned run
    for (const f of ['results.json', 'results.md', 'verdicts.json', 'reads.jsonl', 'report.html'])
      expect(fs.existsSync(path.join(out, f)), f).to.equal(false);
    for (const r of shards) expect(r.stderr).to.not.match(/eval @ step \d+: a \d/);
    const r = corl(['compare', '--plan', plan, '--out', out, '--progress', 'none']);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('done earlier, skipped').and.not.contain('starting');
    expect(fs.readFileSync(path.join(out, 'reads.jsonl'), 'utf8').trim().split('\n')).to.have.length(1);
    // the runs' records and eval rows, opened (a planned run's evaluations are sealed, each folder with its own key)
    for (const run of ['fixture-base/seed-1', 'fixture-co-rl/seed-1', 'fixture-co-rl/seed-2']) {
      expect(RunDirectory.open(path.join(out, run)).readMetrics(), run).to.deep.equal(
        RunDirectory.open(path.join(one, run)).readMetrics(),
      );
      const rows = (dir: string) =>
        [...evalStepFiles(dir)].map(([step, f]) => [step, readTextMaybeGz(f, { openSealed: true })]);
      expect(rows(path.join(out, run)), run)
        .to.deep.equal(rows(path.join(one, run)))
        .and.to.have.length.above(0);
    }
    expect(fs.readFileSync(path.join(out, 'results.md'), 'utf8')).to.equal(
      fs.readFileSync(path.join(one, 'results.md'), 'utf8'),
    );
    // the look stopped the comparison: a shard now has nothing to run
    const after = corl(['compare', '--plan', plan, '--out', out, '--shard', '2/2']);
    expect(after.status, after.stderr).to.equal(0);
    expect(after.stderr).to.contain('the comparison stopped at look 1; nothing to run');
    for (const bad of [
      ['--shard', '3/2'],
      ['--shard', '1'],
      ['--shard', '1/1'],
      ['--shard', '1/2', '--verdict'],
    ]) {
      const x = corl(['compare', base, ring, '--out', path.join(tmp.dir, 'bad'), ...bad]);
      expect(x.status, bad.join(' ')).to.equal(2);
      expect(x.stderr).to.contain('CORL_ERR_CLI_USAGE').and.contain('--shard');
    }
  });

  it('--jobs 2 runs two at a time and writes exactly what one at a time writes', () => {
    const one = path.join(tmp.dir, 'one');
    const two = path.join(tmp.dir, 'two');
    expect(corl(['compare', base, ring, '--seeds', '2', '--out', one, '--progress', 'none']).status).to.equal(0);
    const r = corl(['compare', base, ring, '--seeds', '2', '--out', two, '--progress', 'none', '--jobs', '2']);
    expect(r.status, r.stderr).to.equal(0);
    for (const run of ['fixture-base/seed-0', 'fixture-co-rl/seed-0', 'fixture-co-rl/seed-1'])
      for (const f of ['metrics.jsonl', 'eval/step-000000.jsonl', 'eval/step-000002.jsonl'].filter((x) =>
        fs.existsSync(path.join(one, run, x)),
      ))
        expect(fs.readFileSync(path.join(two, run, f), 'utf8'), `${run}/${f}`).to.equal(
          fs.readFileSync(path.join(one, run, f), 'utf8'),
        );
    expect(fs.readFileSync(path.join(two, 'results.md'), 'utf8')).to.equal(
      fs.readFileSync(path.join(one, 'results.md'), 'utf8'),
    );
  });
});
