import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');

function corl(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Run corl with `stream` read through a real pipe that is closed after its first line (as
 * `corl ... | head -1` does), optionally feeding `input`. Resolves to the exit status and what the
 * other stream received.
 */
function cutAfterFirstLine(
  args: string[],
  stream: 'stdout' | 'stderr',
  input?: string,
): Promise<{ code: number | null; signal: string | null; other: string; first: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let first = '';
    let other = '';
    const cut = child[stream];
    const kept = stream === 'stdout' ? child.stderr : child.stdout;
    cut.setEncoding('utf8');
    kept.setEncoding('utf8');
    kept.on('data', (d: string) => {
      other += d;
    });
    cut.on('data', (d: string) => {
      first += d;
      if (first.includes('\n')) cut.destroy();
    });
    child.stdin.on('error', () => undefined);
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, other, first: first.split('\n')[0]! }));
  });
}

describe('e2e: interrupted runs and broken pipes', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-cut-');
  });
  afterEach(() => tmp.cleanup());

  const longer = (steps = 12) =>
    coRlConfig({
      trainer: { steps, batchSize: 4, groupSize: 5, evalEvery: 3, checkpointEvery: 2, sampling: { maxTokens: 4 } },
    });

  it('corl train | head -1 ends with status 141 (or 0 when nothing was cut) and no EPIPE stack, and the run resumes', async () => {
    const file = writeConfig(tmp.dir, 'ring.json', longer());
    const out = path.join(tmp.dir, 'run');
    const r = await cutAfterFirstLine(['train', '-c', file, '--out', out], 'stdout');
    // train writes its summary to stdout at the end in one burst: when the burst fits the pipe before
    // the reader closes it, nothing is cut and the status is 0 (as for `seq 3 | head -1`); else 141
    expect([0, 141], r.other).to.include(r.code);
    expect(r.other).not.to.match(/EPIPE|\n\s+at /);
    const resumed = corl(['train', '--resume', out, '-q']);
    expect(resumed.code, resumed.stderr).to.equal(0);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'state.json'), 'utf8'))).to.include({
      nextStep: 12,
      finished: true,
    });
  });

  it('a train cut mid-run by a closed stderr pipe ends with 141 and --resume finishes it like an uncut run', async () => {
    // Enough steps that the run is still going when the pipe closes, however loaded the machine.
    const file = writeConfig(tmp.dir, 'ring.json', longer(60));
    const whole = path.join(tmp.dir, 'whole');
    expect(corl(['train', '-c', file, '--out', whole, '-q']).code).to.equal(0);
    const out = path.join(tmp.dir, 'run');
    const r = await cutAfterFirstLine(['train', '-c', file, '--out', out], 'stderr');
    expect(r.code).to.equal(141);
    expect(r.first).to.contain('run directory');
    expect(r.other).not.to.match(/EPIPE|\n\s+at /);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'state.json'), 'utf8')).finished).to.equal(false);
    const resumed = corl(['train', '--resume', out, '-q']);
    expect(resumed.code, resumed.stderr).to.equal(0);
    const trainLines = (dir: string) =>
      fs
        .readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"phase":"train"'));
    expect(trainLines(out)).to.deep.equal(trainLines(whole));
  });

  it('corl answers extract | head -1 ends with status 141 and no EPIPE stack', async () => {
    const input =
      Array.from({ length: 20000 }, (_, i) => JSON.stringify({ text: `so the answer is ${i}` })).join('\n') + '\n';
    const r = await cutAfterFirstLine(['answers', 'extract'], 'stdout', input);
    expect(r.code, r.other).to.equal(141);
    expect(JSON.parse(r.first)).to.deep.equal({ answer: '0', key: '0' });
    expect(r.other).not.to.match(/EPIPE|\n\s+at /);
  });

  /** A run directory as a start killed just after run.json leaves it: config files, no state.json. */
  function killedAfterRunJson(file: string, out: string): void {
    expect(corl(['train', '-c', file, '--out', out, '--steps', '0', '-q']).code).to.equal(0);
    for (const f of fs.readdirSync(out))
      if (!['config.json', 'config.source.json', 'run.json'].includes(f))
        fs.rmSync(path.join(out, f), { recursive: true });
  }

  it('a run killed just after run.json is written resumes from step 0, saying so', () => {
    const file = writeConfig(tmp.dir, 'ring.json', coRlConfig());
    const whole = path.join(tmp.dir, 'whole');
    expect(corl(['train', '-c', file, '--out', whole, '-q']).code).to.equal(0);
    const out = path.join(tmp.dir, 'run');
    killedAfterRunJson(file, out);
    const r = corl(['train', '--resume', out, '--steps', '6', '-q']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('stopped before its first step').and.contain('starts at step 0');
    expect(fs.readFileSync(path.join(out, 'metrics.jsonl'), 'utf8')).to.equal(
      fs.readFileSync(path.join(whole, 'metrics.jsonl'), 'utf8'),
    );
  });

  it('a run killed just after run.json is written can be started again over the same --out', () => {
    const file = writeConfig(tmp.dir, 'ring.json', coRlConfig());
    const out = path.join(tmp.dir, 'run');
    killedAfterRunJson(file, out);
    const r = corl(['train', '-c', file, '--out', out, '-q']);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'state.json'), 'utf8'))).to.include({
      nextStep: 6,
      finished: true,
    });
    // A run that has a state is still never overwritten.
    expect(corl(['train', '-c', file, '--out', out, '-q']).stderr).to.contain('CORL_ERR_RUN_EXISTS');
  });

  it('resume removes the *.tmp-* files that atomic writes of a killed process left', () => {
    const file = writeConfig(tmp.dir, 'ring.json', coRlConfig());
    const out = path.join(tmp.dir, 'run');
    expect(corl(['train', '-c', file, '--out', out, '--steps', '4', '-q']).code).to.equal(0);
    const stale = [
      path.join(out, 'state.json.tmp-99999-0'),
      path.join(out, 'eval', 'step-000003.jsonl.tmp-99999-1'),
      path.join(out, 'checkpoints', 'step-000004', 'x.tmp-99999-2'),
    ];
    for (const f of stale) {
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, 'half');
    }
    const keep = path.join(out, 'notes.tmp-old');
    fs.writeFileSync(keep, 'mine');
    const r = corl(['train', '--resume', out, '--steps', '6', '-q']);
    expect(r.code, r.stderr).to.equal(0);
    for (const f of stale) expect(fs.existsSync(f), f).to.equal(false);
    expect(fs.readFileSync(keep, 'utf8')).to.equal('mine');
  });
  it('corl train whose folder lock another host took over stops with 75 and a coded line, writing nothing after', async () => {
    // long enough that the run still goes when its heartbeat (every 10 s) finds the lock taken
    const file = writeConfig(tmp.dir, 'ring.json', longer(100_000));
    const out = path.join(tmp.dir, 'run');
    const child = spawn(process.execPath, [BIN, 'train', '-c', file, '--out', out, '-q'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const lock = path.join(out, 'corl.lock');
      const metrics = path.join(out, 'metrics.jsonl');
      while (!fs.existsSync(metrics) || fs.statSync(metrics).size === 0) await new Promise((r) => setTimeout(r, 50));
      // a requeued task on another node broke the lock as stale and took the folder (renamed into place)
      const aside = path.join(tmp.dir, 'new.lock');
      const taker = {
        pid: 4242,
        host: 'node-2.example',
        startedAt: new Date().toISOString(),
        command: 'corl compare --shard 2/2',
        heartbeatMs: 10_000,
      };
      fs.writeFileSync(aside, JSON.stringify(taker));
      fs.renameSync(aside, lock);
      const code = await closed;
      expect(code, stderr).to.equal(75);
      expect(stderr)
        .to.contain('CORL_ERR_RUN_LOCKED')
        .and.contain('taken over by corl compare --shard 2/2 (pid 4242 on node-2.example)');
      expect(stderr).to.not.match(/\n\s+at /);
      expect(JSON.parse(fs.readFileSync(lock, 'utf8')), "the new holder's lock is left in place").to.include({
        pid: 4242,
      });
      const size = fs.statSync(metrics).size;
      await new Promise((r) => setTimeout(r, 200));
      expect(fs.statSync(metrics).size, 'nothing is written once stopped').to.equal(size);
    } finally {
      child.kill('SIGKILL');
      await closed;
    }
  });
});
