import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileSha256, loadPlan, plannedConfigFiles } from '../../../core/compare/plan';
import { designFromPlan } from '../../../core/report/design';
import { isCorlError } from '../../../core/errors';
import { ROOT } from '../../../scripts/generate';
import { tempDir } from '../../fixtures/configs';

/** The coded error `fn` throws. */
function codeOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (isCorlError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a coded error, got none');
}

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
    const e = codeOf(() =>
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
    const missing = codeOf(() => loadPlan(write({ ...valid(), stop: undefined })));
    expect(missing.message).to.contain('expected field "stop", got nothing');
    const sem = codeOf(() =>
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
    expect(codeOf(() => loadPlan(write(dup))).message).to.contain('expected distinct config names, got "a" twice');
    expect(codeOf(() => loadPlan(write(undefined, '{"plan": 1,')))).to.deep.include({ code: 'CORL_ERR_PLAN_INVALID' });
    expect(codeOf(() => loadPlan(write(undefined, '{"plan": 1,'))).message).to.match(
      /expected JSON, got a syntax error at line 1/,
    );
    expect(codeOf(() => loadPlan(path.join(tmp.dir, 'none.json'))).message).to.contain('no file');
    expect(codeOf(() => loadPlan(tmp.dir)).message).to.contain('a folder');
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
      const e = codeOf(() => loadPlan(file!));
      expect(e.code, file).to.equal('CORL_ERR_PLAN_INVALID');
      expect(e.message, file)
        .to.contain(says!)
        .and.not.match(/\n\s+at /);
    }
  });

  it('a config changed after the plan: CORL_ERR_PLAN_CONFIG_CHANGED with both hashes', () => {
    const p = loadPlan(write(valid()));
    fs.writeFileSync(path.join(tmp.dir, 'b.json'), '{"name": "b", "seed": 1}\n');
    const e = codeOf(() => plannedConfigFiles(p));
    expect(e.code).to.equal('CORL_ERR_PLAN_CONFIG_CHANGED');
    expect(e.message)
      .to.contain('b.json')
      .and.contain(fileSha256(path.join(tmp.dir, 'b.json')));
    fs.rmSync(path.join(tmp.dir, 'b.json'));
    expect(codeOf(() => plannedConfigFiles(p)).message).to.contain('got no file');
  });
});
