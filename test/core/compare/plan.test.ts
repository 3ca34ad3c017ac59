import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  checkPlannedConfigs,
  fileSha256,
  loadPlan,
  plannedCheckpoints,
  plannedConfigFiles,
} from '../../../core/compare/plan';
import { designFromPlan } from '../../../core/report/design';
import { ROOT } from '../../../scripts/generate';
import { tempDir } from '../../fixtures/configs';
import { thrown } from '../../fixtures/errors';

describe('compare/plan: plans written before their runs', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-plan-');
  });
  afterEach(() => tmp.cleanup());

  for (const name of ['headline-slips', 'headline-systematic'])
    it(`reads the committed plan docs/results/${name}/plan.json exactly as it is, with its configs unchanged`, () => {
      const file = path.join(ROOT, 'docs', 'results', name, 'plan.json');
      const p = loadPlan(file);
      expect(p.sha256).to.equal(fileSha256(file));
      expect(p.root).to.equal(ROOT);
      const files = plannedConfigFiles(p);
      expect(files.map((f) => path.relative(ROOT, f))).to.deep.equal(p.plan.configs.map((c) => c.file));
      const d = designFromPlan(p.plan);
      expect(d.metric).to.equal('change');
      expect(d.margin).to.equal(2);
      expect(d.sequential).to.deep.equal({
        boundary: 'lan-demets-pocock',
        looks: p.plan.seeds.looks,
        first: 3,
        stop: 'all-resolved',
      });
      expect(d.pairs!.filter((x) => x.role === 'primary')).to.deep.equal([
        { a: 'co-rl-diff', b: 'ttrl', role: 'primary' },
      ]);
    });

  const valid = (): Record<string, unknown> => {
    fs.writeFileSync(path.join(tmp.dir, 'a.json'), '{"name": "a"}\n');
    fs.writeFileSync(path.join(tmp.dir, 'b.json'), '{"name": "b"}\n');
    return {
      plan: 1,
      name: 't',
      configs: [
        { file: 'a.json', name: 'a', sha256: fileSha256(path.join(tmp.dir, 'a.json')) },
        { file: 'b.json', name: 'b', sha256: fileSha256(path.join(tmp.dir, 'b.json')) },
      ],
      split: 'held-out',
      primary: 'final',
      pairs: [{ a: 'b', b: 'a', role: 'primary' }],
      alpha: 0.05,
      seeds: { first: 0, looks: [4, 8] },
      boundary: 'lan-demets-obrien-fleming',
      stop: 'all-resolved',
    };
  };
  const write = (v: unknown, text?: string): string => {
    const f = path.join(tmp.dir, 'sub', 'plan.json');
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, text ?? JSON.stringify(v, null, 2));
    return f;
  };

  it('finds the config paths relative to the nearest folder above the plan that holds them all', () => {
    const p = loadPlan(write(valid()));
    expect(p.root).to.equal(tmp.dir);
    expect(plannedConfigFiles(p)).to.deep.equal([path.join(tmp.dir, 'a.json'), path.join(tmp.dir, 'b.json')]);
  });

  it('bad plans: every problem at once, with its line, in CORL_ERR_PLAN_INVALID', () => {
    const e = thrown(() =>
      loadPlan(write({ ...valid(), primary: 'best', alpha: 0.7, seeds: { first: 0, looks: [1] }, extra: 1 })),
    );
    expect(e.code).to.equal('CORL_ERR_PLAN_INVALID');
    expect(e.message)
      .to.contain('4 problems')
      .and.contain('primary: expected one of "final", "change", got string "best"')
      .and.contain('alpha: expected a number < 0.5, got number 0.7')
      .and.contain('seeds.looks[0]')
      .and.contain('unknown field "extra"');
    expect(e.message).to.match(/plan\.json:\d+:\d+ {2}primary/);
    const missing = thrown(() => loadPlan(write({ ...valid(), stop: undefined })));
    expect(missing.message).to.contain('expected field "stop", got nothing');
    const sem = thrown(() =>
      loadPlan(
        write({
          ...valid(),
          pairs: [
            { a: 'b', b: 'z', role: 'primary' },
            { a: 'a', b: 'a', role: 'primary' },
          ],
          seeds: { first: 0, looks: [8, 8] },
          boundary: 'fixed',
        }),
      ),
    );
    expect(sem.code).to.equal('CORL_ERR_PLAN_INVALID');
    expect(sem.message)
      .to.contain('pairs[0].b: expected the name of a config of the plan, got "z"')
      .and.contain('pairs[1].b: expected two different configs')
      .and.contain('expected at most one pair with role "primary", got 2')
      .and.contain('seeds.looks[1]: expected more seeds than the look before (8), got 8')
      .and.contain('boundary: expected an α-spending boundary for 2 looks, got "fixed"');
    const dup = valid();
    (dup.configs as { name: string }[])[1]!.name = 'a';
    expect(thrown(() => loadPlan(write(dup))).message).to.contain('expected distinct config names, got "a" twice');
    expect(thrown(() => loadPlan(write(undefined, '{"plan": 1,')))).to.deep.include({ code: 'CORL_ERR_PLAN_INVALID' });
    expect(thrown(() => loadPlan(write(undefined, '{"plan": 1,'))).message).to.match(
      /expected JSON, got a syntax error at line 1/,
    );
    expect(thrown(() => loadPlan(path.join(tmp.dir, 'none.json'))).message).to.contain('no file');
    expect(thrown(() => loadPlan(tmp.dir)).message).to.contain('a folder');
  });

  it('a plan nested thousands deep, a FIFO, a device or a kernel file: CORL_ERR_PLAN_INVALID, no stack overflow, no hang', () => {
    const deep = path.join(tmp.dir, 'deep.json');
    fs.writeFileSync(deep, '{"configs":' + '['.repeat(5000) + ']'.repeat(5000) + '}');
    const fifo = path.join(tmp.dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    for (const [file, says] of [
      [deep, 'nested at most 100 levels deep'],
      [fifo, 'a FIFO'],
      ['/dev/zero', 'a character device'],
      ['/proc/self/status', "the kernel's proc file system"],
      [tmp.dir, 'a folder'],
    ]) {
      const e = thrown(() => loadPlan(file!));
      expect(e.code, file).to.equal('CORL_ERR_PLAN_INVALID');
      expect(e.message, file)
        .to.contain(says!)
        .and.not.match(/\n\s+at /);
    }
  });

  it('a config changed after the plan: CORL_ERR_PLAN_CONFIG_CHANGED with both hashes', () => {
    const p = loadPlan(write(valid()));
    fs.writeFileSync(path.join(tmp.dir, 'b.json'), '{"name": "b", "seed": 1}\n');
    const e = thrown(() => plannedConfigFiles(p));
    expect(e.code).to.equal('CORL_ERR_PLAN_CONFIG_CHANGED');
    expect(e.message)
      .to.contain('b.json')
      .and.contain(fileSha256(path.join(tmp.dir, 'b.json')));
    fs.rmSync(path.join(tmp.dir, 'b.json'));
    expect(thrown(() => plannedConfigFiles(p)).message).to.contain('got no file');
  });

  /** Four checkpoint folders of family `family` under tmp/models/, distinct bytes each; their pool entries. */
  const pool = (family: string, n = 4): { path: string; sha256: Record<string, string> }[] =>
    Array.from({ length: n }, (_, i) => {
      const dir = path.join(tmp.dir, 'models', `${family}-s${i}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'model.onnx'), `weights of ${family} seed ${i}`);
      fs.writeFileSync(path.join(dir, 'corl.json'), JSON.stringify({ family }));
      return {
        path: `models/${family}-s${i}`,
        sha256: {
          'model.onnx': fileSha256(path.join(dir, 'model.onnx')),
          'corl.json': fileSha256(path.join(dir, 'corl.json')),
        },
      };
    });
  const loaded = (
    file: string,
    task: Record<string, unknown>,
    families: (string | undefined)[],
    checkpoint = true,
  ) => ({
    file,
    config: {
      name: file,
      task: { options: task },
      agents: families.map((family) => ({
        policy: { options: { family, ...(checkpoint ? { checkpoint: '../models/x' } : {}) } },
      })),
    },
  });

  it('checkpoint pools and a fresh held-out set: at least 4 distinct checkpoints per family, relative paths, split held-out', () => {
    const alpha = pool('alpha');
    const ok = loadPlan(write({ ...valid(), heldOut: { seed: 1, size: 500 }, checkpoints: { pools: { alpha } } }));
    expect(ok.plan.checkpoints!.pools.alpha).to.have.length(4);
    const e = thrown(() =>
      loadPlan(
        write({
          ...valid(),
          split: 'validation',
          heldOut: { seed: 0, size: 500 },
          checkpoints: {
            pools: { alpha: alpha.slice(0, 3), beta: [alpha[0], alpha[0], { ...alpha[1], path: '/abs' }, alpha[2]] },
            assignment: 'random',
          },
        }),
      ),
    );
    expect(e.code).to.equal('CORL_ERR_PLAN_INVALID');
    expect(e.message)
      .to.contain('checkpoints.pools.alpha: expected at least 4 item(s), got 3')
      .and.contain('heldOut.seed: expected a number >= 1')
      .and.contain('checkpoints.assignment');
    const sem = thrown(() =>
      loadPlan(
        write({
          ...valid(),
          split: 'validation',
          heldOut: { seed: 2, size: 9 },
          checkpoints: {
            pools: { beta: [alpha[0], alpha[0], { ...alpha[1], path: '/abs' }, { ...alpha[1], path: 'models/other' }] },
          },
        }),
      ),
    );
    expect(sem.message)
      .to.contain('checkpoints.pools.beta[1].path: expected distinct checkpoints, got "models/alpha-s0" twice')
      .and.contain('checkpoints.pools.beta[2].path: expected a path relative to the project root, got "/abs"')
      .and.contain('checkpoints.pools.beta[3].sha256: expected distinct checkpoints, got the same files as member 2')
      .and.contain('heldOut: expected split "held-out" with a fresh held-out set, got "validation"');
    const outside = thrown(() =>
      loadPlan(
        write({
          ...valid(),
          checkpoints: { pools: { alpha: [...alpha.slice(0, 3), { ...alpha[3], path: 'models/../../x' }] } },
        }),
      ),
    );
    expect(outside.message).to.contain(
      'checkpoints.pools.alpha[3].path: expected a path inside the project root, got "models/../../x"',
    );
  });

  it("a pool's checkpoint changed, missing or of another family: coded errors naming the member", () => {
    const alpha = pool('alpha');
    const p = loadPlan(write({ ...valid(), checkpoints: { pools: { alpha } } }));
    expect(plannedCheckpoints(p).alpha).to.deep.equal(alpha.map((m) => path.join(tmp.dir, m.path)));
    fs.writeFileSync(path.join(tmp.dir, 'models', 'alpha-s2', 'model.onnx'), 'retrained');
    const changed = thrown(() => plannedCheckpoints(p));
    expect(changed.code).to.equal('CORL_ERR_PLAN_CONFIG_CHANGED');
    expect(changed.message).to.contain('models/alpha-s2/model.onnx with sha256').and.contain('changed after the plan');
    fs.rmSync(path.join(tmp.dir, 'models', 'alpha-s2'), { recursive: true });
    expect(thrown(() => plannedCheckpoints(p)).message).to.contain('expected the checkpoint folder models/alpha-s2');
    const beta = pool('beta');
    const wrong = loadPlan(write({ ...valid(), checkpoints: { pools: { alpha: beta } } }));
    const fam = thrown(() => plannedCheckpoints(wrong));
    expect(fam.code).to.equal('CORL_ERR_PLAN_MISMATCH');
    expect(fam.message).to.contain(
      'expected a checkpoint of family "alpha" in its pool, got models/beta-s0 of family "beta"',
    );
  });

  it("every planned config evaluates on the plan's fresh set and loads checkpoints of pooled families", () => {
    const p = loadPlan(
      write({
        ...valid(),
        heldOut: { seed: 1, size: 500 },
        checkpoints: { pools: { alpha: pool('alpha'), beta: pool('beta') } },
      }),
    );
    const task = { heldOutSeed: 1, heldOut: 500 };
    checkPlannedConfigs(p, [
      loaded('a.json', task, ['alpha', 'beta']),
      loaded('b.json', task, ['alpha', 'alpha', 'beta']),
    ]);
    const seed = thrown(() => checkPlannedConfigs(p, [loaded('a.json', { heldOutSeed: 0, heldOut: 500 }, ['alpha'])]));
    expect(seed.code).to.equal('CORL_ERR_PLAN_MISMATCH');
    expect(seed.message).to.contain('expected task.options.heldOutSeed 1 in a.json');
    expect(thrown(() => checkPlannedConfigs(p, [loaded('a.json', { heldOutSeed: 1 }, ['alpha'])])).message).to.contain(
      "expected task.options.heldOut 500 in a.json as the plan's heldOut names it, got none",
    );
    expect(thrown(() => checkPlannedConfigs(p, [loaded('a.json', task, ['alpha', 'gamma'])])).message).to.contain(
      'agents[1] of a.json to be of a family the plan pools, got "gamma"',
    );
    expect(thrown(() => checkPlannedConfigs(p, [loaded('a.json', task, ['alpha'], false)])).message).to.contain(
      'expected agents[0] of a.json to load a checkpoint',
    );
  });
});
