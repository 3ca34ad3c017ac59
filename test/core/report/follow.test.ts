import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { reportCompare } from '../../../core/report/compare';
import type { Plan, PlanRecord } from '../../../core/report/design';
import { configDigest, PLAN_OMIT } from '../../../core/report/identity';
import { plannedDigest } from '../../../core/report/pools';
import { readLedger } from '../../../core/report/reads';
import { writeComparison, writeFixtureRun, type ComparisonFixture } from '../../fixtures/comparison';
import { tempDir } from '../../fixtures/configs';

const plan: Plan = {
  plan: 1,
  name: 'fixture-plan',
  configs: [
    { file: 'b.json', name: 'b', sha256: '0'.repeat(64) },
    { file: 'a.json', name: 'a', sha256: '1'.repeat(64) },
  ],
  split: 'held-out',
  primary: 'change',
  pairs: [{ a: 'a', b: 'b', role: 'primary' }],
  margin: 2,
  alpha: 0.05,
  seeds: { first: 0, looks: [2, 3] },
  boundary: 'lan-demets-pocock',
  stop: 'all-resolved',
};

const record: PlanRecord = {
  file: 'plan.json',
  sha256: 'f'.repeat(64),
  plan,
  configs: ['b', 'a'].map((name) => ({ name, digest: configDigest({ lr: 1, name }, PLAN_OMIT), seed: 0 })),
};

describe('report/follow: a planned comparison is read at its looks only, and checked against its plan', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-follow-');
  });
  afterEach(() => tmp.cleanup());

  const fixture = (seeds: number[]): ComparisonFixture => ({
    configs: [{ name: 'b' }, { name: 'a' }],
    seeds,
    problems: 4,
    source: { lr: 1 },
    meta: { plan: record },
    // a gains 1 of 8 samples per seed index over b: the difference grows with the seed
    answers: (config, seed, step, agent, problem) =>
      Array.from({ length: 8 }, (_, k) => (k + problem + agent) % 3 === 0 || (config === 'a' && step > 0 && k <= seed)),
  });

  it('before the first look: progress only, no table, no verdict, no read', async () => {
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), fixture([0]));
    const r = await reportCompare(dir);
    expect(r.rows).to.deep.equal([]);
    expect(readLedger(dir)).to.deep.equal([]);
    const md = fs.readFileSync(path.join(dir, 'results.md'), 'utf8');
    expect(md).to.contain('No look yet: the design calls for look 1: 2 seeds per config (1 finished)');
    expect(md).to.not.match(/pass@1/);
    expect(fs.readFileSync(path.join(dir, 'report.html'), 'utf8')).to.not.contain('<svg');
  });

  it('at a look: the look’s runs only, the verdict at its nominal level, one read, every check passes', async () => {
    const f = fixture([0, 1]);
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), f);
    writeFixtureRun(dir, f, f.configs[1]!, 2); // a's seed 2 finished, b's not: look 2 is incomplete
    const r = await reportCompare(dir);
    expect(r.rows.map((x) => x.seeds)).to.deep.equal([2, 2]); // seed 2 is hidden until look 2
    expect(r.verdicts.looks!.map((l) => l.seeds)).to.deep.equal([2]);
    expect(r.verdicts.next).to.match(/calls for look 2: 3 seeds per config/);
    expect(readLedger(dir).map((x) => x.runs)).to.deep.equal([{ a: '0-1', b: '0-1' }]);
    expect(r.follow!.followed, JSON.stringify(r.follow)).to.equal(true);
    expect(r.follow!.checks.map((c) => c.text.split(':')[0])).to.deep.equal(['configs', 'split', 'seeds', 'reads']);
    const html = fs.readFileSync(path.join(dir, 'report.html'), 'utf8');
    expect(html)
      .to.contain('class="verdict"')
      .and.contain('a − b')
      .and.contain('1 finished run(s) after look 1 are not shown');
    expect(fs.readFileSync(path.join(dir, 'results.md'), 'utf8')).to.contain(
      "Plan: fixture-plan (plan.json, sha256 ffffffffffff…), written before its runs (each of the 4 run(s) recorded the plan's sha256 at its start); followed: yes.",
    );
  });

  it('a run that recorded no sha256 of the plan at its start: the plan is not shown to be written before it', async () => {
    const f = fixture([0, 1]);
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), f);
    const meta = path.join(dir, 'b', 'seed-1', 'run.json');
    const { plan: _dropped, ...rest } = JSON.parse(fs.readFileSync(meta, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(meta, JSON.stringify(rest));
    const r = await reportCompare(dir);
    expect(r.follow!.before).to.deep.equal({
      ok: false,
      text: 'not shown to be written before its runs: 1 of 4 run(s) recorded no sha256 of this plan at their start: b/seed-1',
    });
    expect(fs.readFileSync(path.join(dir, 'results.md'), 'utf8')).to.not.contain('written before its runs (');
  });

  it('a run of another config, or a read between looks, is reported as not following the plan', async () => {
    const f = fixture([0, 1]);
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), f);
    const src = path.join(dir, 'a', 'seed-1', 'config.source.json');
    fs.writeFileSync(src, JSON.stringify({ ...JSON.parse(fs.readFileSync(src, 'utf8')), lr: 2 }));
    fs.writeFileSync(
      path.join(dir, 'reads.jsonl'),
      JSON.stringify({ read: 1, by: 'corl report', runs: { a: '0', b: '0' }, plan: record.sha256 }) + '\n',
    );
    const r = await reportCompare(dir);
    expect(r.follow!.followed).to.equal(false);
    const bad = r.follow!.checks.filter((c) => !c.ok).map((c) => c.text);
    expect(bad).to.have.length(2);
    expect(bad[0]).to.equal('configs: runs whose config or seed is not the planned one: a/seed-1');
    expect(bad[1]).to.match(/^reads: 2, of which read 1 showed runs that are not a planned look/);
  });

  it('a plan with checkpoint pools and a fresh held-out set: each run is checked for the member its seed index draws and for the set', async () => {
    const member = (p: string, d: string) => ({ path: p, sha256: { 'model.onnx': d.repeat(64) } });
    const pooled: Plan = {
      ...plan,
      heldOut: { seed: 7, size: 4 },
      checkpoints: {
        pools: { fam: ['m/f0', 'm/f1', 'm/f2', 'm/f3'].map((p, i) => member(p, String(i))) },
      },
    };
    const agents = (ckpt: string[]) =>
      ckpt.map((c) => ({ policy: { use: 'corl:test', options: { family: 'fam', checkpoint: c } } }));
    // seed index i: agent 0 gets member i mod 4, agent 1 member (i + 1) mod 4, written from another folder
    const drawn = (i: number) => agents([`../m/f${i % 4}`, `../m/f${(i + 1) % 4}`]);
    const rec: PlanRecord = {
      ...record,
      plan: pooled,
      configs: ['b', 'a'].map((name) => ({
        name,
        digest: plannedDigest({ lr: 1, name, agents: agents(['x', 'y']) }, pooled),
        seed: 0,
      })),
    };
    const f: ComparisonFixture = {
      ...fixture([0, 1]),
      meta: { plan: rec },
      source: (_c, i) => ({ lr: 1, agents: drawn(i) }),
      resolved: () => ({ task: { options: { heldOutSeed: 7, heldOut: 4 } } }),
    };
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), f);
    const r = await reportCompare(dir);
    expect(r.follow!.followed, JSON.stringify(r.follow)).to.equal(true);
    expect(r.follow!.checks[0]!.text).to.contain("base checkpoints drawn from the plan's pools (fam 4) by seed index");
    expect(r.follow!.checks[1]!.text).to.equal('split: held-out, the fresh set of heldOutSeed 7 (4 problems)');

    // seed 1 of a loaded seed 0's checkpoints, and b's seed 0 evaluated on the standing set
    const f2: ComparisonFixture = {
      ...f,
      source: (c, i) => ({ lr: 1, agents: drawn(c === 'a' && i === 1 ? 0 : i) }),
      resolved: (c, i) => ({ task: { options: { heldOutSeed: c === 'b' && i === 0 ? 0 : 7, heldOut: 4 } } }),
    };
    const dir2 = writeComparison(path.join(tmp.dir, 'cmp2'), f2);
    const bad = (await reportCompare(dir2)).follow!.checks.filter((c) => !c.ok).map((c) => c.text);
    expect(bad).to.deep.equal([
      'configs: runs whose config or seed is not the planned one: a/seed-1',
      'split: held-out; runs not on the planned fresh held-out set (heldOutSeed 7, 4 problems): b/seed-0',
    ]);
  });
});
