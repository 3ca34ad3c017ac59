import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import { createPlugin } from '../../../core/testing';
import { jsonlSink } from '../../../plugins/metrics/jsonl';
import { tempDir } from '../../fixtures/configs';

describe('plugins/metrics/jsonl (corl:jsonl)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('corl-jsonl-sink-')));
  afterEach(() => tmp.cleanup());

  const record = (step: number) => ({ step, agent: 0, phase: 'train' as const, metrics: { 'reward/mean': step / 10 } });

  it('appends one JSON line per record, creating its folder; a new run that shares the file goes after it', async () => {
    const file = path.join(tmp.dir, 'logs', 'm.jsonl');
    const a = await createPlugin(jsonlSink, { path: 'logs/m.jsonl' }, { baseDir: tmp.dir });
    expect(fs.existsSync(path.dirname(file)), 'nothing is created before the first record').to.equal(false);
    await a.write(record(1));
    await a.close?.();
    const b = await createPlugin(jsonlSink, { path: 'logs/m.jsonl' }, { baseDir: tmp.dir });
    await b.start?.({ dir: path.join(tmp.dir, 'run'), config: {}, agents: ['a'], resumeAt: null });
    await b.write(record(1));
    await b.close?.();
    expect(fs.readFileSync(file, 'utf8')).to.equal(`${JSON.stringify(record(1))}\n`.repeat(2));
    const marks = fs.readdirSync(path.join(tmp.dir, 'run', 'sinks'));
    expect(marks).to.have.length(1);
    expect(JSON.parse(fs.readFileSync(path.join(tmp.dir, 'run', 'sinks', marks[0]!), 'utf8'))).to.deep.equal({
      file,
      start: JSON.stringify(record(1)).length + 1,
    });
  });

  it('refuses, when created, a path that is a folder, a device or a kernel file, naming options.path', async () => {
    for (const p of [tmp.dir, '/dev/null', '/proc/self/stat']) {
      const e = await createPlugin(jsonlSink, { path: p }, { baseDir: tmp.dir }).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(isCorlError(e, 'CORL_ERR_PLUGIN_OPTIONS'), String(e)).to.equal(true);
      expect((e as { where?: string }).where).to.equal('options.path');
    }
  });
});
