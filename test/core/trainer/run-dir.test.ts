import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { labelUse, RunDirectory } from '../../../core/trainer/run-dir';
import { tempDir } from '../../fixtures/configs';

describe('core/trainer/run-dir', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('run.json records a reward trained on labels as supervised, and says so', () => {
    expect(labelUse({ readsGroundTruth: false, trainedOnLabels: false })).to.deep.equal({ supervised: false });
    expect(labelUse({ readsGroundTruth: true, trainedOnLabels: false })).to.deep.equal({ supervised: true });
    expect(labelUse({ readsGroundTruth: false, trainedOnLabels: true })).to.deep.equal({
      supervised: true,
      trainedOnLabels: true,
    });
  });

  it('creates the layout and refuses to create over an existing run', async () => {
    const dir = path.join(tmp.dir, 'run');
    const run = await RunDirectory.create(dir, { a: 1 }, { a: 1 }, { baseDir: tmp.dir, supervised: false });
    for (const f of ['config.json', 'config.source.json', 'run.json', 'state.json', 'metrics.jsonl'])
      expect(fs.existsSync(path.join(dir, f)), f).to.equal(true);
    expect(run.state()).to.deep.equal({
      version: 1,
      nextStep: 0,
      metricsBytes: 0,
      rolloutsBytes: 0,
      checkpoint: null,
      finished: false,
    });
    try {
      await RunDirectory.create(dir, {}, {}, { baseDir: tmp.dir, supervised: false });
      expect.fail();
    } catch (e) {
      expect((e as Error).message).to.contain('CORL_ERR_RUN_EXISTS');
    }
  });

  it('truncates to the state on resume, keeping the cut lines aside', async () => {
    const run = await RunDirectory.create(path.join(tmp.dir, 'r'), {}, {}, { baseDir: tmp.dir, supervised: false });
    run.appendMetrics({ step: 1, agent: 0, phase: 'train', metrics: { x: 1 } });
    const sizes = run.syncedSizes();
    await run.writeState({ ...run.state(), ...sizes, nextStep: 1 });
    run.appendMetrics({ step: 2, agent: 0, phase: 'train', metrics: { x: 2 } });
    run.truncateTo(run.state());
    expect(run.readMetrics().map((m) => m.step)).to.deep.equal([1]);
    expect(fs.readFileSync(`${run.metricsFile}.after-checkpoint`, 'utf8')).to.contain('"step":2');
  });

  it('a state that claims more bytes than the file holds, or an unreadable state, is CORL_ERR_RUN_CORRUPT', async () => {
    const run = await RunDirectory.create(path.join(tmp.dir, 'r'), {}, {}, { baseDir: tmp.dir, supervised: false });
    await run.writeState({ ...run.state(), metricsBytes: 999 });
    expect(() => run.truncateTo(run.state())).to.throw(/CORL_ERR_RUN_CORRUPT/);
    fs.writeFileSync(path.join(run.dir, 'state.json'), '{nope');
    expect(() => RunDirectory.open(run.dir).state()).to.throw(/CORL_ERR_RUN_CORRUPT/);
    expect(() => RunDirectory.open(tmp.dir)).to.throw(/CORL_ERR_RUN_NOT_FOUND/);
  });
});
