import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');

function corl(args: string[], env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

interface Rollout {
  step: number;
  agent: number;
  index: number;
  id: string;
  label: string | null;
  completions: { key: string | null; reward: number; advantage: number }[];
}

function rollouts(dir: string): Rollout[] {
  return fs
    .readFileSync(path.join(dir, 'rollouts.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Plurality with ties to the first seen (plain string keys: the fixture's answers are distinct integers). */
function plurality(keys: (string | null)[]): string | null {
  const counts = new Map<string, number>();
  for (const k of keys) if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
  let best: string | null = null;
  let n = 0;
  for (const [k, c] of counts)
    if (c > n) {
      best = k;
      n = c;
    }
  return best;
}

describe('e2e: corl train with the categorical test policy', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-e2e-');
  });
  afterEach(() => tmp.cleanup());

  it("ring: each agent is rewarded exactly by agreement with the other agent's plurality", () => {
    const file = writeConfig(tmp.dir, 'ring.json', coRlConfig());
    const out = path.join(tmp.dir, 'run');
    const r = corl(['train', '-c', file, '--out', out]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('label-free run: 6 step(s)').and.contain('base pass@1').and.contain(out);
    const rows = rollouts(out);
    expect(rows.length).to.equal(6 * 2 * 4);
    let disagreements = 0;
    for (const row of rows) {
      const peer = rows.find((o) => o.step === row.step && o.index === row.index && o.agent === 1 - row.agent)!;
      expect(peer.id).to.equal(row.id);
      const label = plurality(peer.completions.map((c) => c.key));
      expect(row.label).to.equal(label);
      expect(row.completions.map((c) => c.reward)).to.deep.equal(
        row.completions.map((c) => (c.key !== null && c.key === label ? 1 : 0)),
      );
      if (plurality(row.completions.map((c) => c.key)) !== label) disagreements++;
    }
    expect(disagreements, 'the fixture makes agents disagree sometimes, so ring ≠ self').to.be.greaterThan(0);
    const metrics = fs
      .readFileSync(path.join(out, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const train = metrics.filter((m) => m.phase === 'train');
    expect(train.map((m) => `${m.step}/${m.agent}`)).to.deep.equal([
      '1/0',
      '1/1',
      '2/0',
      '2/1',
      '3/0',
      '3/1',
      '4/0',
      '4/1',
      '5/0',
      '5/1',
      '6/0',
      '6/1',
    ]);
    for (const m of train) {
      const mine = rows
        .filter((x) => x.step === m.step && x.agent === m.agent)
        .flatMap((x) => x.completions.map((c) => c.reward));
      expect(m.metrics['reward/mean']).to.be.closeTo(mine.reduce((a, b) => a + b, 0) / mine.length, 1e-12);
      expect(m.metrics['label/labeled_fraction']).to.equal(1);
      expect(m.metrics).to.have.property('label/accuracy');
      expect(m.metrics).to.have.property('label/peer_agreement');
    }
    const evalSteps = [...new Set(metrics.filter((m) => m.phase === 'eval').map((m) => m.step))];
    expect(evalSteps).to.deep.equal([0, 3, 6]);
    expect(metrics.some((m) => m.agent === null && m.metrics['pair/0-1/kappa'] !== undefined)).to.equal(true);
    expect(fs.existsSync(path.join(out, 'checkpoints/step-000006/agent-1/categorical.json'))).to.equal(true);
    expect(fs.existsSync(path.join(out, 'checkpoints/step-000002'))).to.equal(false); // only the last 2 are kept
    expect(JSON.parse(fs.readFileSync(path.join(out, 'state.json'), 'utf8'))).to.include({
      nextStep: 6,
      finished: true,
    });
  });

  it('records pseudo-label accuracy per problem category, matching the rollouts', () => {
    const task = {
      use: 'corl:arith',
      options: { seed: 7, train: 24, heldOut: 4, operands: { min: 2, max: 2 }, digits: { min: 1, max: 2 } },
    };
    const answers = Array.from({ length: 40 }, (_, i) => String(i));
    const file = writeConfig(
      tmp.dir,
      'arith.json',
      coRlConfig({
        task,
        agents: [
          { name: 'a', policy: { use: 'test:categorical', options: { family: 'fam-a', answers } } },
          { name: 'b', policy: { use: 'test:categorical', options: { family: 'fam-b', answers } } },
        ],
      }),
    );
    const out = path.join(tmp.dir, 'run');
    const r = corl(['train', '-c', file, '--out', out, '--steps', '3', '-q']);
    expect(r.code, r.stderr).to.equal(0);
    const { generateArith, arithCategory } =
      require('../../plugins/tasks/arith') as typeof import('../../plugins/tasks/arith');
    const resolved = JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8'));
    const problems = new Map(generateArith(resolved.task.options).train.map((p) => [`train-${p.expression}`, p]));
    const train = fs
      .readFileSync(path.join(out, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((m) => m.phase === 'train');
    const rows = rollouts(out);
    let categorised = 0;
    for (const m of train) {
      const mine = rows.filter((x) => x.step === m.step && x.agent === m.agent && x.label !== null);
      const byCat = new Map<string, number[]>();
      for (const x of mine) {
        const p = problems.get(x.id);
        expect(p, x.id).to.not.equal(undefined);
        const c = arithCategory(p!.features);
        byCat.set(c, [...(byCat.get(c) ?? []), x.label === String(p!.answer) ? 1 : 0]);
      }
      for (const [c, v] of byCat) {
        expect(m.metrics[`label/count/${c}`], `${m.step}/${m.agent} ${c}`).to.equal(v.length);
        expect(m.metrics[`label/accuracy/${c}`]).to.be.closeTo(v.reduce((a, b) => a + b, 0) / v.length, 1e-12);
        categorised += v.length;
      }
      const keys = Object.keys(m.metrics).filter((k) => k.startsWith('label/count/'));
      expect(keys.length).to.equal(byCat.size);
    }
    expect(categorised).to.be.greaterThan(0);
  });

  it('self (TTRL): each agent is rewarded by agreement with its own plurality', () => {
    const file = writeConfig(tmp.dir, 'self.json', coRlConfig({ topology: 'corl:self' }));
    const out = path.join(tmp.dir, 'run');
    const r = corl(['train', '-c', file, '--out', out, '--steps', '3', '-q']);
    expect(r.code, r.stderr).to.equal(0);
    for (const row of rollouts(out)) {
      const label = plurality(row.completions.map((c) => c.key));
      expect(row.label).to.equal(label);
      expect(row.completions.map((c) => c.reward)).to.deep.equal(row.completions.map((c) => (c.key === label ? 1 : 0)));
    }
  });

  it('a crashed run resumed from its last checkpoint ends with exactly the metrics of an uninterrupted run', () => {
    const file = writeConfig(tmp.dir, 'ring.json', coRlConfig());
    const whole = path.join(tmp.dir, 'whole');
    expect(corl(['train', '-c', file, '--out', whole, '-q']).code).to.equal(0);

    const crashed = path.join(tmp.dir, 'crashed');
    // The 4th update (step 4) throws: checkpoint 2 is on disk, step 3's metrics were written after it.
    const r = corl(['train', '-c', file, '--out', crashed, '-q'], { CORL_TEST_CRASH_AT_UPDATE: '3' });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('CORL_ERR_RUN_AGENT_FAILED').and.contain('simulated crash');
    const state = JSON.parse(fs.readFileSync(path.join(crashed, 'state.json'), 'utf8'));
    expect(state).to.include({ nextStep: 2, checkpoint: 'checkpoints/step-000002', finished: false });
    const partial = fs
      .readFileSync(path.join(crashed, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(partial.filter((m) => m.phase === 'train').map((m) => m.step)).to.deep.equal([1, 1, 2, 2, 3, 3]);

    const resumed = corl(['train', '--resume', crashed, '-q']);
    expect(resumed.code, resumed.stderr).to.equal(0);
    expect(fs.readFileSync(path.join(crashed, 'metrics.jsonl'), 'utf8')).to.equal(
      fs.readFileSync(path.join(whole, 'metrics.jsonl'), 'utf8'),
    );
    expect(fs.readFileSync(path.join(crashed, 'rollouts.jsonl'), 'utf8')).to.equal(
      fs.readFileSync(path.join(whole, 'rollouts.jsonl'), 'utf8'),
    );
    // The lines cut at resume were kept aside, not lost.
    expect(fs.readFileSync(path.join(crashed, 'metrics.jsonl.after-checkpoint'), 'utf8')).to.contain('"step":3');
  });

  it('stopping early and resuming with more steps equals one run of all the steps', () => {
    const file = writeConfig(tmp.dir, 'ring.json', coRlConfig());
    const whole = path.join(tmp.dir, 'whole');
    expect(corl(['train', '-c', file, '--out', whole, '-q']).code).to.equal(0);
    const part = path.join(tmp.dir, 'part');
    // 4 steps with the same evalEvery/checkpointEvery, then continue to 6: an eval at step 4 is extra
    // (it is the last step of the first invocation), so compare the train records.
    expect(corl(['train', '-c', file, '--out', part, '--steps', '4', '-q']).code).to.equal(0);
    const r = corl(['train', '--resume', part, '--steps', '6', '-c', file, '-q']);
    expect(r.code, r.stderr).to.equal(0);
    const trainLines = (dir: string) =>
      fs
        .readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"phase":"train"'));
    expect(trainLines(part)).to.deep.equal(trainLines(whole));
  });

  it('bad input: coded errors, non-zero exit, and nothing written or overwritten', () => {
    const bad = writeConfig(tmp.dir, 'bad.json', coRlConfig({ reward: 'corl:votes' }));
    const out = path.join(tmp.dir, 'never');
    const r = corl(['train', '-c', bad, '--out', out]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('CORL_ERR_CONFIG_INVALID').and.contain('did you mean "corl:vote"?');
    expect(fs.existsSync(out)).to.equal(false);

    const good = writeConfig(tmp.dir, 'good.json', coRlConfig());
    const run = path.join(tmp.dir, 'run');
    expect(corl(['train', '-c', good, '--out', run, '--steps', '2', '-q']).code).to.equal(0);
    const before = fs.readFileSync(path.join(run, 'metrics.jsonl'));
    const again = corl(['train', '-c', good, '--out', run, '-q']);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain('CORL_ERR_RUN_EXISTS');
    expect(fs.readFileSync(path.join(run, 'metrics.jsonl')).equals(before)).to.equal(true);

    const missing = corl(['train', '-c', path.join(tmp.dir, 'nope.json')]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain('CORL_ERR_CONFIG_NOT_FOUND');
    expect(corl(['train', '--resume', tmp.dir]).stderr).to.contain('CORL_ERR_RUN_NOT_FOUND');
    const usage = corl(['train', '--steps', 'many', '-c', good]);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.contain('CORL_ERR_CLI_USAGE');
    const mismatch = corl([
      'train',
      '--resume',
      run,
      '-c',
      writeConfig(tmp.dir, 'other.json', coRlConfig({ seed: 5 })),
    ]);
    expect(mismatch.stderr).to.contain('CORL_ERR_RUN_MISMATCH');
  });

  it('a reward that returns a bare array stops with CORL_ERR_REWARD_OUTPUT saying the shape it wants', () => {
    const cfg = coRlConfig({ reward: 'test:bare-array' });
    (cfg.plugins as string[]).push(path.resolve(__dirname, '../fixtures/faulty-rewards.js'));
    const file = writeConfig(tmp.dir, 'bare.json', cfg);
    const r = corl(['train', '-c', file, '--out', path.join(tmp.dir, 'run'), '-q']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('CORL_ERR_REWARD_OUTPUT').and.contain('got a bare array');
    expect(r.stderr).to.contain('returns { rewards: [...] }');
  });

  it('a policy that throws mid-run stops with a coded error naming the agent; earlier records stay intact', () => {
    const cfg = coRlConfig();
    (cfg.agents as any[])[1].policy.options.throwAt = { phase: 'sample', step: 1 };
    const file = writeConfig(tmp.dir, 'throws.json', cfg);
    const out = path.join(tmp.dir, 'run');
    const r = corl(['train', '-c', file, '--out', out, '-q']);
    expect(r.code).to.equal(1);
    expect(r.stderr)
      .to.contain('CORL_ERR_RUN_AGENT_FAILED')
      .and.contain('agent 1 (b)')
      .and.contain('planned failure while sampling');
    const lines = fs.readFileSync(path.join(out, 'metrics.jsonl'), 'utf8').split('\n').filter(Boolean);
    for (const l of lines) JSON.parse(l);
    expect(lines.filter((l) => l.includes('"phase":"train"')).length).to.equal(2);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'state.json'), 'utf8')).nextStep).to.equal(0);
  });

  it('a policy that cannot train is refused before any step, but can be evaluated', () => {
    const cfg = coRlConfig();
    (cfg.agents as any[])[0].policy.options.sampleOnly = true;
    const file = writeConfig(tmp.dir, 'sample-only.json', cfg);
    const r = corl(['train', '-c', file, '--out', path.join(tmp.dir, 'run'), '-q']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('CORL_ERR_POLICY_CANNOT_TRAIN').and.contain('agents[0].policy');
    const ok = corl(['train', '-c', file, '--out', path.join(tmp.dir, 'eval-only'), '--steps', '0', '-q']);
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).to.contain('0 step(s)');
  });

  it('validate and list work on the command line', () => {
    const file = writeConfig(tmp.dir, 'ring.json', coRlConfig());
    const v = corl(['validate', file]);
    expect(v.code, v.stderr).to.equal(0);
    expect(v.stdout).to.contain('ok:').and.contain('2 agent(s)').and.contain('label-free');
    const l = corl(['list', 'topology']);
    expect(l.stdout).to.contain('corl:ring').and.contain('corl:self').and.not.contain('corl:vote');
    expect(corl(['list', 'bogus']).stderr).to.contain('CORL_ERR_CLI_USAGE');
    expect(corl(['--help']).stdout)
      .to.contain('train')
      .and.contain('validate')
      .and.contain('list');
  });

  it('validate recognises the shipped serve configs and checks them with the serve schema', () => {
    const root = path.resolve(__dirname, '../../..');
    for (const [name, agents, topology] of [
      ['co-rl', 2, 'corl:ring'],
      ['ttrl', 1, 'corl:self'],
    ] as const) {
      const v = corl(['validate', path.join(root, 'configs/serve', `${name}.json`)]);
      expect(v.code, v.stderr).to.equal(0);
      expect(v.stdout)
        .to.contain('serve config')
        .and.contain(`${agents} agent(s)`)
        .and.contain(topology)
        .and.contain('label-free');
    }
    // a serve config with a bad field still fails, coded, naming the field
    const bad = path.join(tmp.dir, 'bad-serve.json');
    fs.writeFileSync(
      bad,
      JSON.stringify({
        name: 'x',
        agents: [{ name: 'a' }],
        topology: 'corl:self',
        reward: 'corl:vote',
        serve: { port: 'eighty' },
      }),
    );
    const b = corl(['validate', bad]);
    expect(b.code).to.not.equal(0);
    expect(b.stderr).to.contain('CORL_ERR_').and.contain('port');
  });
});
