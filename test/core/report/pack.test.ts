import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { categoriesOfRun } from '../../../core/report/pack';
import { tempDir } from '../../fixtures/configs';

describe('core/report/pack: categoriesOfRun (categories of old eval rows, from the run config)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-pack-cat-');
  });
  afterEach(() => tmp.cleanup());

  const runWith = (config: unknown): string => {
    const dir = path.join(tmp.dir, 'run');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
    return dir;
  };

  it("rebuilds the task of a run's config.json: every held-out and validation problem's category", async () => {
    const task = { use: 'corl:arith', options: { train: 4, heldOut: 3, validation: 2 } };
    const cats = await categoriesOfRun(runWith({ seed: 1, task }));
    expect(cats).to.not.equal(undefined);
    expect(cats!.size).to.equal(5);
    for (const c of cats!.values()) expect(c).to.be.a('string').and.not.equal('');
  });

  it('is undefined when the task cannot be rebuilt: no config, no task, bad options, unknown plugin', async () => {
    expect(await categoriesOfRun(path.join(tmp.dir, 'missing'))).to.equal(undefined);
    expect(await categoriesOfRun(runWith({ seed: 1 }))).to.equal(undefined);
    expect(await categoriesOfRun(runWith({ task: { use: 'corl:arith', options: { heldOut: -1 } } }))).to.equal(
      undefined,
    );
    expect(await categoriesOfRun(runWith({ task: { use: 'corl:gone' } }))).to.equal(undefined);
  });

  it('a task without categories gives an empty map', async () => {
    const task = {
      use: 'corl:inline',
      options: { train: [{ id: 't', prompt: 'p', answer: '1' }], heldOut: [{ id: 'h', prompt: 'q', answer: '2' }] },
    };
    const cats = await categoriesOfRun(runWith({ task }));
    expect(cats && [...cats]).to.deep.equal([]);
  });
});
