// corl:tensorboard's event files read back by an independent reader: test/integrations/py/tfevents.py,
// Python's standard library only, with its own CRC32C, TFRecord framing check and protobuf decoding.
// A real run's events must hold every metric of its metrics.jsonl (as float32, TensorBoard's
// simple_value), at its step, in the agent's folder, and nothing else; a run killed after its
// checkpoint and resumed must hold each exactly once.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfigValue } from '../../core/config/load';
import type { MetricsRecord } from '../../core/contracts/metrics-sink';
import { RunDirectory } from '../../core/trainer/run-dir';
import { train } from '../../core/trainer/trainer';
import { ROOT } from '../../scripts/generate';
import { coRlConfig, tempDir } from '../fixtures/configs';

const READER = path.join(ROOT, 'test', 'integrations', 'py', 'tfevents.py');

interface PyValue {
  tag: string;
  simple_value?: number;
  tensor?: { dtype: number; dims: number[]; string_val: string[] };
  metadata?: { plugin_name?: string; content?: string };
}
interface PyEvent {
  step: number;
  wall_time?: number;
  file_version?: string;
  writer?: string;
  values?: PyValue[];
}

/** What the Python reader makes of a log folder; fails the test on any CRC or format error. */
function readEvents(logdir: string): { path: string; events: PyEvent[] }[] {
  const r = spawnSync('python3', [READER, logdir], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  expect(r.status, `python3 tfevents.py: ${r.stderr}`).to.equal(0);
  return (JSON.parse(r.stdout) as { files: { path: string; events: PyEvent[] }[] }).files;
}

/** Every scalar of a log folder as "folder|tag|step|value" (value as float32), sorted. */
function scalars(files: { path: string; events: PyEvent[] }[]): string[] {
  const out: string[] = [];
  for (const f of files)
    for (const e of f.events)
      for (const v of e.values ?? [])
        if (v.simple_value !== undefined) out.push(`${f.path.split('/')[0]}|${v.tag}|${e.step}|${v.simple_value}`);
  return out.sort();
}

/** The same for metrics.jsonl: what the events must hold. */
function expected(records: readonly MetricsRecord[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (const r of records)
    for (const [tag, value] of Object.entries(r.metrics))
      out.push(`${r.agent === null ? 'cohort' : names[r.agent]}|${tag}|${r.step}|${Math.fround(value)}`);
  return out.sort();
}

describe('corl:tensorboard event files, read by an independent Python reader', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-tensorboard-');
  });
  afterEach(() => tmp.cleanup());

  it('the reader itself: CRC32C of "123456789" is the check value 0xe3069283', () => {
    const r = spawnSync(
      'python3',
      [
        '-c',
        `import sys; sys.path.insert(0, ${JSON.stringify(path.dirname(READER))}); import tfevents; print(hex(tfevents.crc32c(b"123456789")))`,
      ],
      { encoding: 'utf8' },
    );
    expect(r.stdout.trim(), r.stderr).to.equal('0xe3069283');
  });

  it('a run writes every metric of metrics.jsonl as a scalar at its step, per agent folder, and the config as text', async () => {
    const config = coRlConfig({ metrics: ['corl:tensorboard'] });
    const loaded = await loadConfigValue(config, { baseDir: tmp.dir });
    const run = await RunDirectory.create(path.join(tmp.dir, 'run'), loaded.config, loaded.source, {
      baseDir: tmp.dir,
      supervised: false,
    });
    await train(loaded, { run });
    const files = readEvents(path.join(run.dir, 'tensorboard'));
    expect(files.map((f) => path.dirname(f.path)).sort()).to.deep.equal(['a', 'b', 'cohort']);
    for (const f of files) {
      expect(path.basename(f.path)).to.match(/^events\.out\.tfevents\.\d{10}\.[\w.-]+\.\d+\.\d+$/);
      expect(f.events[0]).to.include({ file_version: 'brain.Event:2', writer: 'corl' });
      expect(f.events.every((e) => typeof e.wall_time === 'number' && e.wall_time > 1.7e9)).to.equal(true);
      expect(f.events.filter((e) => e.file_version !== undefined)).to.have.length(1);
    }
    const records = run.readMetrics();
    expect(records.length).to.be.greaterThan(20);
    expect(scalars(files)).to.deep.equal(expected(records, ['a', 'b']));
    // the config: a text summary TensorBoard's Text tab shows (plugin "text", a scalar string tensor)
    const text = files
      .find((f) => f.path.startsWith('cohort/'))!
      .events.flatMap((e) => (e.values ?? []).map((v) => ({ v, step: e.step })))
      .filter(({ v }) => v.tag === 'config');
    expect(text).to.have.length(1);
    expect(text[0]!.step).to.equal(0);
    expect(text[0]!.v.metadata).to.deep.equal({ plugin_name: 'text', content: '' });
    expect(text[0]!.v.tensor!.dtype).to.equal(7);
    expect(text[0]!.v.tensor!.dims).to.deep.equal([]);
    const shown = text[0]!.v.tensor!.string_val[0]!;
    expect(
      JSON.parse(
        shown
          .split('\n')
          .map((l) => l.slice(4))
          .join('\n'),
      ),
    ).to.deep.equal(JSON.parse(JSON.stringify(loaded.config)));
  });

  it('a run that dies after its checkpoint and is resumed holds each record once, a torn last record dropped', async () => {
    const config = coRlConfig({ metrics: [{ use: 'corl:tensorboard', options: { dir: 'tb' } }] });
    const loaded = await loadConfigValue(config, { baseDir: tmp.dir });
    const run = await RunDirectory.create(path.join(tmp.dir, 'run'), loaded.config, loaded.source, {
      baseDir: tmp.dir,
      supervised: false,
    });
    // Dies after step 5's records (evaluation at 3, checkpoints at 2 and 4): 5's come again on resume.
    let steps = 0;
    const died = await train(loaded, {
      run,
      shouldStop: () => {
        if (++steps === 5) throw new Error('killed');
        return false;
      },
    }).catch((e: Error) => e.message);
    expect(died).to.equal('killed');
    expect(run.state().nextStep).to.equal(4);
    const logdir = path.join(tmp.dir, 'tb', 'fixture-co-rl', 'run');
    const before = scalars(readEvents(logdir));
    expect(
      before.some((s) => s.endsWith('|5|') || /\|5\|[^|]+$/.test(s)),
      'step 5 was logged before the stop',
    ).to.equal(true);
    // the stop tore an append in half
    const aFile = path.join(logdir, 'a', fs.readdirSync(path.join(logdir, 'a'))[0]!);
    fs.appendFileSync(aFile, Buffer.from([9, 0, 0, 0, 0, 0, 0, 0, 1, 2]));
    const { run: again } = RunDirectory.resume(run.dir);
    const resumed = await loadConfigValue(again.source(), { baseDir: tmp.dir });
    await train(resumed, { run: again, resume: true });
    const files = readEvents(logdir);
    expect(files.map((f) => f.path.split('/')[0]).sort(), 'one file per folder, appended to').to.deep.equal([
      'a',
      'b',
      'cohort',
    ]);
    expect(scalars(files)).to.deep.equal(expected(again.readMetrics(), ['a', 'b']));
    const configs = files.flatMap((f) => f.events.flatMap((e) => e.values ?? [])).filter((v) => v.tag === 'config');
    expect(configs, 'the config once').to.have.length(1);
  });

  it('a new run refuses a log folder that already holds event files (they would mix)', async () => {
    const config = coRlConfig({
      metrics: [{ use: 'corl:tensorboard', options: { dir: 'tb' } }],
      trainer: { steps: 1, batchSize: 2, groupSize: 2 },
    });
    const loaded = await loadConfigValue(config, { baseDir: tmp.dir });
    const first = await RunDirectory.create(path.join(tmp.dir, 'x', 'run'), loaded.config, loaded.source, {
      baseDir: tmp.dir,
      supervised: false,
    });
    await train(loaded, { run: first });
    const again = await loadConfigValue(config, { baseDir: tmp.dir });
    const second = await RunDirectory.create(path.join(tmp.dir, 'y', 'run'), again.config, again.source, {
      baseDir: tmp.dir,
      supervised: false,
    });
    const err = await train(again, { run: second }).catch((e: { code?: string; message: string }) => e);
    expect(err).to.include({ code: 'CORL_ERR_RUN_EXISTS' });
    expect((err as Error).message).to.contain(path.join(tmp.dir, 'tb', 'fixture-co-rl', 'run'));
  });
});
