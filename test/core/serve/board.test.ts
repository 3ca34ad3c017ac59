// corl serve's own TensorBoard event files (core/serve/board.ts through corl:tensorboard): the real
// service scores groups sent with references, and the files are read back by an independent reader
// (test/fixtures/event-files.ts: TFRecord framing, masked CRC32C, the protobufs by hand). Every
// accuracy below is worked out by hand from the posted answers.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RewardServer } from '../../../core/serve/server';
import { ROOT } from '../../../scripts/generate';
import { tempDir } from '../../fixtures/configs';
import { byStep, readEventsFile, readRun } from '../../fixtures/event-files';
import { boxed, get, post, ringServeConfig, startServer } from '../../fixtures/serve';

/** A group of boxed answers with its reference (or none). */
function group(id: string, answers: string[], reference?: string): Record<string, unknown> {
  return { ...boxed(id, answers), ...(reference !== undefined ? { reference } : {}) };
}

/** The value of one series on GET /metrics (undefined when absent). */
async function metric(url: string, series: string): Promise<number | undefined> {
  const text = (await get(url, '/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Poll GET /metrics until a series reaches a value (the points are written after the replies). */
async function until(url: string, series: string, value: number): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (((await metric(url, series)) ?? 0) >= value) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${series} never reached ${value}`);
}

/** Post both agents' groups of a step at once (the ring: each waits for the other's keys). */
async function step(url: string, s: number, a: unknown[], b: unknown[]): Promise<void> {
  const [ra, rb] = await Promise.all([
    post(url, '/v1/groups', { agent: 'a', step: s, groups: a }),
    post(url, '/v1/groups', { agent: 'b', step: s, groups: b }),
  ]);
  expect(ra.status, JSON.stringify(ra.body)).to.equal(200);
  expect(rb.status, JSON.stringify(rb.body)).to.equal(200);
}

// Step 0. g1 (reference 2): a answers 2 2 3, b answers 2 3 3. a is rewarded against b's vote "3"
// (wrong): rewards 0 0 1 where ground truth gives 1 1 0, so none of a's three rewards is right; b
// against a's vote "2" (right): rewards 1 0 0, all three right. g2 (reference 5): a 5 5 5 and b
// 5 1 5; both labels "5" (right), every reward right. So a: label accuracy 1/2, reward accuracy
// 3/6; b: 2/2 and 6/6.
const STEP0 = {
  a: [group('g1', ['2', '2', '3'], '2'), group('g2', ['5', '5', '5'], '5')],
  b: [group('g1', ['2', '3', '3'], '2'), group('g2', ['5', '1', '5'], '5')],
};
// Step 1. g3 (reference 7): a 7 1 1 against b's vote "1": rewards 0 1 1, ground truth 1 0 0: none
// right; b 1 1 7 against a's vote "1": rewards 1 1 0, ground truth 0 0 1: none right. Both labels
// wrong: accuracy 0 and 0.
const STEP1 = {
  a: [group('g3', ['7', '1', '1'], '7')],
  b: [group('g3', ['1', '1', '7'], '7')],
};

describe('serve: per-agent TensorBoard event files of the label-free diagnostics', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-board-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  const config = (tb: string, serve: Record<string, unknown> = {}): Record<string, unknown> => ({
    ...ringServeConfig(serve),
    metrics: [{ use: 'corl:tensorboard', options: { dir: tb, runFolders: false } }],
  });

  it('writes one point per agent and step: accuracies against the references, fallbacks and unseen peers', async () => {
    const tb = path.join(tmp.dir, 'tb');
    server = await startServer(config(tb), tmp.dir);
    await step(server.url, 0, STEP0.a, STEP0.b);
    await step(server.url, 1, STEP1.a, STEP1.b);
    // Step 2: each agent posts a group the other never samples, with no wait: the self fallback
    // (TTRL), one unseen peer each. a's g4 (reference 4) 4 4 9: its own vote "4" is right, rewards
    // 1 1 0 all right. b's g5 carries no reference: no accuracy at all.
    const [fa, fb] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 2, wait: 0, groups: [group('g4', ['4', '4', '9'], '4')] }),
      post(server.url, '/v1/groups', { agent: 'b', step: 2, wait: 0, groups: [group('g5', ['6', '6', '6'])] }),
    ]);
    expect([fa.body.groups[0].source, fb.body.groups[0].source]).to.deep.equal(['self', 'self']);
    // A retry of step 0 is answered from the stored answers: no point is counted again.
    await step(server.url, 0, STEP0.a, STEP0.b);
    await server.close();
    server = undefined;

    expect(fs.readdirSync(tb).sort()).to.deep.equal(['a', 'b', 'cohort']);
    for (const agent of ['a', 'b']) {
      const files = fs.readdirSync(path.join(tb, agent));
      expect(files, agent).to.have.length(1);
      expect(readEventsFile(path.join(tb, agent, files[0]!)).fileVersion).to.equal('brain.Event:2');
    }
    const a = byStep(readRun(path.join(tb, 'a')));
    const b = byStep(readRun(path.join(tb, 'b')));
    expect([...a.keys()]).to.deep.equal([0, 1, 2]);
    expect([...b.keys()]).to.deep.equal([0, 1, 2]);
    const near = (got: Record<string, number> | undefined, want: Record<string, number>, what: string): void => {
      expect(Object.keys(got ?? {}).sort(), what).to.deep.equal(Object.keys(want).sort());
      for (const [k, v] of Object.entries(want)) expect(got![k], `${what} ${k}`).to.be.closeTo(v, 1e-6);
    };
    const counts = { 'exchange/fallbacks': 0, 'exchange/partial': 0, 'exchange/peer_unseen': 0, 'label/labeled': 1 };
    // groups scored against the peer, every one graded, with the label and the reward as often right
    const graded = (groups: number, accuracy: number): Record<string, number> => ({
      ...counts,
      'serve/groups': groups,
      'label/graded': groups,
      'label/accuracy': accuracy,
      'reward/accuracy': accuracy,
    });
    near(a.get(0), graded(2, 0.5), 'a@0');
    near(b.get(0), graded(2, 1), 'b@0');
    near(a.get(1), graded(1, 0), 'a@1');
    near(b.get(1), graded(1, 0), 'b@1');
    const fell = { ...counts, 'serve/groups': 1, 'exchange/fallbacks': 1, 'exchange/peer_unseen': 1 };
    near(a.get(2), { ...fell, 'label/graded': 1, 'label/accuracy': 1, 'reward/accuracy': 1 }, 'a@2');
    near(b.get(2), fell, 'b@2');
    // a second independent reader (Python's standard library only, its own CRC32C and protobuf
    // decoding: test/integrations/py/tfevents.py) reads the same scalars from the same files
    const py = spawnSync('python3', [path.join(ROOT, 'test', 'integrations', 'py', 'tfevents.py'), tb], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(py.status, `python3 tfevents.py: ${py.stderr}`).to.equal(0);
    const files = (
      JSON.parse(py.stdout) as {
        files: { path: string; events: { step: number; values?: { tag: string; simple_value?: number }[] }[] }[];
      }
    ).files;
    for (const [agent, seen] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const fromPython = new Map<number, Record<string, number>>();
      for (const f of files.filter((x) => x.path.split('/')[0] === agent))
        for (const e of f.events)
          for (const v of e.values ?? [])
            if (v.simple_value !== undefined)
              (fromPython.get(e.step) ?? fromPython.set(e.step, {}).get(e.step)!)[v.tag] = v.simple_value;
      expect(fromPython, agent).to.deep.equal(seen);
    }
  });

  it('a full disk loses the point, logged once and counted; every reply still goes out', async () => {
    const tb = path.join(tmp.dir, 'tb');
    const notes: string[] = [];
    server = await startServer(config(tb), tmp.dir, { log: (l) => notes.push(l) });
    // a's events file is /dev/full: every append fails with ENOSPC, as on a full disk.
    fs.mkdirSync(path.join(tb, 'a'), { recursive: true });
    fs.symlinkSync('/dev/full', path.join(tb, 'a', 'events.out.tfevents.0000000001.host.1.0'));
    await step(server.url, 0, STEP0.a, STEP0.b);
    await step(server.url, 1, STEP1.a, STEP1.b);
    await step(server.url, 2, [group('g6', ['1', '1', '1'], '1')], [group('g6', ['1', '1', '1'], '1')]);
    await until(server.url, 'corl_serve_board_points_total{agent="b"}', 2);
    await until(server.url, 'corl_serve_metrics_sink_errors_total{sink="corl:tensorboard"}', 2);
    const failures = notes.filter((n) => n.includes('failed to take a metrics record'));
    expect(failures, notes.join('\n')).to.have.length(1);
    expect(failures[0]).to.contain('corl:tensorboard').and.contain('ENOSPC');
    await server.close();
    server = undefined;
    expect([...byStep(readRun(path.join(tb, 'b'))).keys()]).to.deep.equal([0, 1, 2]);
  });

  it('refuses, coded, a damaged points file, one whose journal is gone, and a memory-only restart onto old files', async () => {
    const tb = path.join(tmp.dir, 'tb');
    server = await startServer(config(tb), tmp.dir);
    await step(server.url, 0, STEP0.a, STEP0.b);
    await server.close();
    server = undefined;
    const journal = path.join(tmp.dir, 'journal.jsonl');
    const points = `${journal}.points.json`;
    const kept = fs.readFileSync(points, 'utf8');
    const refused = async (c: Record<string, unknown>, code: string, says: string, o = {}): Promise<void> => {
      const e = await startServer(c, tmp.dir, o).then(
        (s) => s.close().then(() => undefined),
        (err: unknown) => err as { code?: string; message?: string; stack?: string },
      );
      expect(e?.code, says).to.equal(code);
      expect(e?.message).to.contain(says);
    };
    for (const [text, says] of [
      ['{"version": 1, "agents": {"a": {"step": -1, "groups": 0}}}', 'agents["a"]'],
      ['{"version": 2, "agents": {}}', '{version: 1, agents}'],
      ['{"version": 1, "agents"', 'JSON'],
    ] as const) {
      fs.writeFileSync(points, text);
      await refused(config(tb), 'CORL_ERR_SERVE_POINTS', says);
    }
    fs.writeFileSync(points, kept);
    fs.renameSync(journal, `${journal}.moved`);
    await refused(config(tb), 'CORL_ERR_SERVE_POINTS', 'without its journal');
    // Memory only: a restart is a new service, and the folder holds the old one's points.
    await refused(config(tb, { journal: false }), 'CORL_ERR_RUN_EXISTS', 'event files already', { journal: undefined });
    // Nothing was changed by the refusals: the first service's points are all there.
    expect([...byStep(readRun(path.join(tb, 'a'))).keys()]).to.deep.equal([0]);
    expect(fs.readFileSync(points, 'utf8')).to.equal(kept);
  });

  it('a supervised reward writes no accuracy (it reads the references itself)', async () => {
    const tb = path.join(tmp.dir, 'tb');
    const c = { ...config(tb), reward: 'corl:ground-truth', topology: 'corl:self' };
    server = await startServer(c, tmp.dir);
    const r = await post(server.url, '/v1/groups', {
      agent: 'a',
      step: 3,
      groups: [group('g1', ['2', '3', '2'], '2')],
    });
    expect(r.body.groups[0].rewards).to.deep.equal([1, 0, 1]);
    await server.close();
    server = undefined;
    const a = byStep(readRun(path.join(tb, 'a')));
    expect([...a.keys()]).to.deep.equal([3]);
    expect(Object.keys(a.get(3)!).sort()).to.deep.equal([
      'exchange/fallbacks',
      'exchange/partial',
      'exchange/peer_unseen',
      'serve/groups',
    ]);
  });
});

/** `corl serve --tensorboard DIR` as a child process, resolved once it listens. */
function serveProcess(cfg: string, tb: string, journal: string): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'corl.js'), 'serve', '-c', cfg, '--port', '0', '--journal', journal, '--tensorboard', tb],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, proc });
    });
    proc.once('exit', (code) => reject(new Error(`corl serve exited (${code}) before listening:\n${out}\n${err}`)));
  });
}

function exited(proc: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill(signal);
  });
}

describe('corl serve --tensorboard: a kill and a restart write every point once', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  let proc: ChildProcess | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-board-cli-');
  });
  afterEach(async () => {
    if (proc && proc.exitCode === null && proc.signalCode === null) await exited(proc, 'SIGKILL');
    proc = undefined;
    tmp.cleanup();
  });

  it('a --tensorboard that is a file or under /proc is refused as the flag, coded, before the service starts', () => {
    const cfg = path.join(tmp.dir, 'serve.json');
    fs.writeFileSync(cfg, JSON.stringify(ringServeConfig()));
    const file = path.join(tmp.dir, 'a-file');
    fs.writeFileSync(file, 'x');
    for (const dir of [file, '/proc/self/tb']) {
      const r = spawnSync(
        process.execPath,
        [path.join(ROOT, 'bin', 'corl.js'), 'serve', '-c', cfg, '--port', '0', '--tensorboard', dir],
        {
          encoding: 'utf8',
        },
      );
      expect(r.status, r.stderr).to.equal(2);
      expect(r.stderr)
        .to.contain('CORL_ERR_CLI_USAGE')
        .and.contain('expected --tensorboard to name a folder for event files');
      expect(r.stderr)
        .to.not.contain('metrics[')
        .and.not.match(/\n\s+at /);
      expect(r.stdout).to.not.contain('listening');
    }
  });

  it('steps: a point cut by SIGKILL is rebuilt from the journal; replays after the restart add nothing', async () => {
    const cfg = path.join(tmp.dir, 'serve.json');
    fs.writeFileSync(cfg, JSON.stringify(ringServeConfig()));
    const tb = path.join(tmp.dir, 'tb');
    const journal = path.join(tmp.dir, 'journal.jsonl');
    let s = await serveProcess(cfg, tb, journal);
    proc = s.proc;
    await step(s.url, 0, STEP0.a, STEP0.b);
    // Step 1's first group of each agent closes step 0 (written); then the service is killed with
    // step 1 half posted: g3 scored, g7 not yet.
    await step(s.url, 1, STEP1.a, STEP1.b);
    await until(s.url, 'corl_serve_board_points_total{agent="a"}', 1);
    await until(s.url, 'corl_serve_board_points_total{agent="b"}', 1);
    await exited(s.proc, 'SIGKILL');
    s = await serveProcess(cfg, tb, journal);
    proc = s.proc;
    // The rest of step 1, g7 (reference 8): a 8 8 8 against b's vote "8", b 8 8 2 against a's "8":
    // both labels right; a's rewards all right, b's 1 1 0 where ground truth gives 1 1 0: right.
    // With g3 (rebuilt from the journal) step 1 is 1/2 label accuracy and 3/6 reward accuracy.
    await step(s.url, 1, [group('g7', ['8', '8', '8'], '8')], [group('g7', ['8', '8', '2'], '8')]);
    // Retries of what the killed service answered are replays: nothing new is counted.
    await step(s.url, 0, STEP0.a, STEP0.b);
    await step(s.url, 1, STEP1.a, STEP1.b);
    await step(s.url, 2, [group('g8', ['3', '3', '3'])], [group('g8', ['3', '3', '3'])]);
    await exited(s.proc, 'SIGTERM');
    proc = undefined;
    for (const agent of ['a', 'b']) {
      const points = byStep(readRun(path.join(tb, agent)));
      expect([...points.keys()], agent).to.deep.equal([0, 1, 2]);
      expect(points.get(1)!['serve/groups'], agent).to.equal(2);
      expect(points.get(1)!['label/accuracy'], agent).to.be.closeTo(0.5, 1e-6);
      expect(points.get(1)!['reward/accuracy'], agent).to.be.closeTo(0.5, 1e-6);
      expect(points.get(2)!, agent).to.not.have.property('label/accuracy');
    }
    expect(byStep(readRun(path.join(tb, 'a'))).get(0)!['label/accuracy']).to.be.closeTo(0.5, 1e-6);
    expect(byStep(readRun(path.join(tb, 'b'))).get(0)!['label/accuracy']).to.be.closeTo(1, 1e-6);
    const points = JSON.parse(fs.readFileSync(`${journal}.points.json`, 'utf8'));
    expect(points).to.deep.equal({ version: 1, agents: { a: { step: 2, groups: 0 }, b: { step: 2, groups: 0 } } });
  });

  it('without steps (POST /get_reward): one point per group at the agent’s count, continued after a restart', async () => {
    const cfg = path.join(tmp.dir, 'serve.json');
    fs.writeFileSync(
      cfg,
      JSON.stringify({
        name: 'solo',
        agents: [{ name: 'solo' }],
        topology: 'corl:self',
        reward: 'corl:vote',
        serve: { getReward: { groupSize: 3 } },
      }),
    );
    const tb = path.join(tmp.dir, 'tb');
    const journal = path.join(tmp.dir, 'journal.jsonl');
    // One prompt's three samples, its label column the reference: the vote of 4 4 1 is "4".
    const samples = (prompt: string, answers: string[], label: string): unknown => ({
      query: answers.map((x) => `${prompt} so the answer is \\boxed{${x}}`),
      prompts: answers.map(() => prompt),
      labels: answers.map(() => label),
    });
    let s = await serveProcess(cfg, tb, journal);
    proc = s.proc;
    // Vote "4" against reference 4: label right; rewards 1 1 0 all right.
    let r = await post(s.url, '/get_reward', samples('p1', ['4', '4', '1'], '4'));
    expect(r.body.rewards).to.deep.equal([1, 1, 0]);
    // Vote "2" against reference 3: label wrong; rewards 1 1 0 where ground truth gives 0 0 1.
    r = await post(s.url, '/get_reward', samples('p2', ['2', '2', '3'], '3'));
    expect(r.body.rewards).to.deep.equal([1, 1, 0]);
    await until(s.url, 'corl_serve_board_points_total{agent="solo"}', 2);
    await exited(s.proc, 'SIGKILL');
    s = await serveProcess(cfg, tb, journal);
    proc = s.proc;
    r = await post(s.url, '/get_reward', samples('p3', ['5', '5', '5'], '5'));
    expect(r.body.rewards).to.deep.equal([1, 1, 1]);
    await exited(s.proc, 'SIGTERM');
    proc = undefined;
    const points = byStep(readRun(path.join(tb, 'solo')));
    // Counts 1 and 2, then the restart goes on past the counts the first service reserved.
    expect([...points.keys()]).to.deep.equal([1, 2, 65]);
    expect(points.get(1)!['label/accuracy']).to.equal(1);
    expect(points.get(1)!['reward/accuracy']).to.equal(1);
    expect(points.get(2)!['label/accuracy']).to.equal(0);
    expect(points.get(2)!['reward/accuracy']).to.equal(0);
    expect(points.get(65)!['label/accuracy']).to.equal(1);
  });
});
