// The event-file format of corl:tensorboard against hand-checked numbers: the CRC32C check value,
// a TFRecord's framing byte by byte, and the reading back that a resume relies on (both CRCs
// checked, a torn last record told apart from corruption). test/integrations/tensorboard.test.ts
// reads whole runs with an independent reader.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricsSink } from '../../../core/contracts/metrics-sink';
import { isCorlError, type CorlError } from '../../../core/errors';
import { createPlugin } from '../../../core/testing';
import { agentFolders, tensorboardSink } from '../../../plugins/metrics/tensorboard';
import { tempDir } from '../../fixtures/configs';
import {
  crc32c,
  eventStep,
  fileVersionEvent,
  frame,
  maskedCrc32c,
  scalarsEvent,
  unframe,
} from '../../../plugins/metrics/tensorboard/records';

describe('corl:tensorboard records', () => {
  it('CRC32C: the check value of "123456789" and of the empty string', () => {
    expect(crc32c(Buffer.from('123456789'))).to.equal(0xe3069283);
    expect(crc32c(new Uint8Array(0))).to.equal(0);
    // 32 zero bytes: the iSCSI test vector of RFC 3720, B.4
    expect(crc32c(new Uint8Array(32))).to.equal(0x8a9136aa);
  });

  it('masks a CRC as rotate right by 15 plus 0xa282ead8', () => {
    const c = crc32c(Buffer.from('123456789')); // 0xe3069283
    const rotated = ((c >>> 15) | (c << 17)) >>> 0;
    expect(maskedCrc32c(Buffer.from('123456789'))).to.equal((rotated + 0xa282ead8) % 2 ** 32);
  });

  it('frames data as length, masked CRC of the length, data, masked CRC of the data', () => {
    const data = Buffer.from('abc');
    const f = frame(data);
    expect(f.length).to.equal(8 + 4 + 3 + 4);
    expect(f.readBigUInt64LE(0)).to.equal(3n);
    expect(f.readUInt32LE(8)).to.equal(maskedCrc32c(f.subarray(0, 8)));
    expect(f.subarray(12, 15).toString()).to.equal('abc');
    expect(f.readUInt32LE(15)).to.equal(maskedCrc32c(data));
  });

  it('reads back whole records; a torn tail is "torn", a flipped bit is a CRC problem', () => {
    const a = scalarsEvent(1.5, 3, [['reward/mean', 0.25]]);
    const b = fileVersionEvent(1.5);
    const file = Buffer.concat([frame(b), frame(a)]);
    const whole = unframe(file);
    expect(whole.records.map((r) => Buffer.from(r).toString('hex'))).to.deep.equal(
      [b, a].map((r) => Buffer.from(r).toString('hex')),
    );
    expect(whole.problem).to.equal(undefined);
    const torn = unframe(file.subarray(0, file.length - 2));
    expect(torn).to.include({ torn: true, end: frame(b).length });
    expect(torn.records).to.have.length(1);
    const flipped = Buffer.from(file);
    flipped[frame(b).length + 13]! ^= 1;
    const bad = unframe(flipped);
    expect(bad.torn).to.equal(undefined);
    expect(bad.problem).to.match(/data CRC/);
  });

  it('an event knows its step; the file-version event has none', () => {
    expect(eventStep(scalarsEvent(2, 7, [['x', 1]]))).to.equal(7);
    expect(eventStep(scalarsEvent(2, 0, [['x', 1]]))).to.equal(0);
    expect(eventStep(fileVersionEvent(2))).to.equal(null);
  });

  it("agents' folders: their names made safe, unique, never the cohort's", () => {
    expect(agentFolders(['alpha', 'beta'])).to.deep.equal(['alpha', 'beta']);
    expect(agentFolders(['a b/c', '..', 'cohort', 'alpha', 'alpha'])).to.deep.equal([
      'a_b_c',
      'agent-1',
      'agent-2',
      'alpha',
      'agent-4',
    ]);
  });
});

describe('corl:tensorboard bad paths (issue 30, item 6): coded refusals, no stack lines, no hang', function () {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-tensorboard-');
  });
  afterEach(() => tmp.cleanup());

  const refusal = async (p: Promise<unknown> | (() => unknown)): Promise<CorlError> => {
    try {
      await (typeof p === 'function' ? p() : p);
    } catch (e) {
      expect(isCorlError(e), String(e)).to.equal(true);
      expect((e as Error).message, 'no stack lines').to.not.match(/\n\s+at /);
      return e as CorlError;
    }
    expect.fail('expected a coded refusal');
  };

  it('a "dir" that is a file, a FIFO, a device, under a file or under /proc is refused when the sink is created', async () => {
    const file = path.join(tmp.dir, 'a-file');
    fs.writeFileSync(file, 'x');
    const fifo = path.join(tmp.dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    for (const [dir, says] of [
      [file, 'got a file'],
      [fifo, 'got a FIFO'],
      ['/dev/null', 'got a character device'],
      [path.join(file, 'x', 'y'), `a path under ${file}, which is a file`],
      ['/proc/self', "kernel's proc file system"],
      ['/sys/kernel', "kernel's sysfs file system"],
    ]) {
      const e = await refusal(createPlugin(tensorboardSink, { dir }, { baseDir: tmp.dir }));
      expect(e.code, dir).to.equal('CORL_ERR_PLUGIN_OPTIONS');
      expect(e.message, dir).to.contain('options.dir').and.contain(says!);
    }
  });

  it('a resume refuses an events file that is a FIFO, a device or a folder, instead of hanging on it', async () => {
    const run = path.join(tmp.dir, 'run');
    const start = async (resumeAt: number | null): Promise<MetricsSink> => {
      const sink = (await createPlugin(tensorboardSink, {}, { baseDir: tmp.dir })) as MetricsSink;
      await sink.start!({ dir: run, config: { name: 't' }, agents: ['a'], resumeAt });
      return sink;
    };
    const sink = await start(null);
    sink.write({ step: 1, agent: 0, phase: 'train', metrics: { 'reward/mean': 0.5 } });
    const folder = path.join(run, 'tensorboard', 'a');
    const planted = path.join(folder, 'events.out.tfevents.9999999999.host.1.0');
    for (const [make, says] of [
      [() => execFileSync('mkfifo', [planted]), 'a FIFO'],
      [() => fs.symlinkSync('/dev/zero', planted), 'a character device'],
      [() => fs.mkdirSync(planted), 'a folder'],
    ] as const) {
      make();
      const e = await refusal(start(1));
      expect(e.code).to.equal('CORL_ERR_RUN_CORRUPT');
      expect(e.message).to.contain(says);
      fs.rmSync(planted, { recursive: true });
    }
    await start(1);
  });
});
