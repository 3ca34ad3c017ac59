// The metrics writer: every record to the run's metrics.jsonl, then to each sink; a sink's own
// (uncoded) failure becomes CORL_ERR_RUN_SINK naming the sink, its first line only, never a stack.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricsSink } from '../../../core/contracts/metrics-sink';
import { CorlError, isCorlError } from '../../../core/errors';
import { MetricsWriter } from '../../../core/trainer/metrics-writer';
import { RunDirectory } from '../../../core/trainer/run-dir';
import { tempDir } from '../../fixtures/configs';

describe('core/trainer/metrics-writer', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-metrics-writer-');
  });
  afterEach(() => tmp.cleanup());

  const runDir = () =>
    RunDirectory.create(
      path.join(tmp.dir, 'run'),
      { name: 'x' },
      { name: 'x' },
      {
        baseDir: tmp.dir,
        supervised: false,
      },
    );
  const record = { step: 3, agent: 0, phase: 'train' as const, metrics: { 'reward/mean': 0.5 } };

  it("a sink's uncoded failure, at start or on a record, is CORL_ERR_RUN_SINK naming it; metrics.jsonl already holds the record", async () => {
    const run = await runDir();
    const failing = (where: 'start' | 'write'): MetricsSink => ({
      start() {
        if (where === 'start') fs.mkdirSync('/dev/null/x');
      },
      write() {
        if (where === 'write') throw new Error('ENOSPC: no space left on device\n    at write (sink.js:1:1)');
      },
    });
    const quiet: string[] = [];
    const fine: MetricsSink = { write: (r) => void quiet.push(JSON.stringify(r)) };
    for (const [where, says] of [
      ['start', 'when the run started: ENOTDIR'],
      ['write', 'writing the record of step 3: ENOSPC: no space left on device'],
    ] as const) {
      const writer = new MetricsWriter(run, [fine, failing(where)], ['corl:jsonl', 'lab:dash']);
      let caught: unknown;
      try {
        await writer.start({ dir: run.dir, config: {}, agents: ['a'], resumeAt: null });
        await writer.write(record);
      } catch (e) {
        caught = e;
      }
      expect(isCorlError(caught, 'CORL_ERR_RUN_SINK'), String(caught)).to.equal(true);
      const e = caught as CorlError;
      expect(e.message)
        .to.contain('"lab:dash"')
        .and.contain(says)
        .and.not.match(/\n\s+at /);
      expect(e.where).to.equal('metrics[1]');
    }
    expect(fs.readFileSync(path.join(run.dir, 'metrics.jsonl'), 'utf8')).to.contain('"reward/mean":0.5');
    expect(quiet).to.have.length(1);
  });

  it("a sink's coded error passes as it is", async () => {
    const run = await runDir();
    const coded = new CorlError('CORL_ERR_RUN_CORRUPT', 'expected intact records, got a torn one');
    const writer = new MetricsWriter(run, [
      {
        write() {
          throw coded;
        },
      },
    ]);
    let caught: unknown;
    await writer.write(record).catch((e: unknown) => (caught = e));
    expect(caught).to.equal(coded);
  });
});
