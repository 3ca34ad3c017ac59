// The hostile battery end to end through `corl serve`: one agent posts, via POST /v1/groups, a
// completion whose code reads a host file, opens a socket to a host listener and forks an orphan
// that tries to outlive the run; the service scores it with corl:exec-vote in the bubblewrap
// sandbox. Checked from the host's side (no connection, no file written, no process left, no
// secret in any answer), and the other agents' answers equal those of a service that never saw it.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { post, get, startServer } from '../../fixtures/serve';
import { describeWithBwrap } from '../../support/bwrap';

const MARKER = 'corl-serve-orphan-marker';

/** Live (not zombie) host processes whose command line contains `marker`. */
function hostProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (/\) Z /.test(fs.readFileSync(`/proc/${d}/stat`, 'utf8'))) continue;
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) found.push(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

function fenced(program: string): string {
  return `Here is my solution.\n\n\`\`\`python\n${program}\n\`\`\`\n`;
}

/** Well-behaved completions: doubling (right), adding one (wrong), and no code at all. */
const BENIGN = [
  fenced('print(int(input()) * 2)'),
  fenced('n = int(input())\nprint(n + n)'),
  fenced('print(int(input()) + 1)'),
  'I could not write this program.',
];
const INPUTS = [['1'], ['5']];

describeWithBwrap('serve: hostile generated code through POST /v1/groups (corl:exec-vote)', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  let listener: net.Server | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-exec-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete process.env.CORL_SERVE_ENV_SECRET;
    await new Promise((r) => (listener ? listener.close(r) : r(undefined)));
    listener = undefined;
    for (const pid of hostProcesses(MARKER)) process.kill(pid, 'SIGKILL'); // only if a containment failed
    tmp.cleanup();
  });

  const config = {
    name: 'serve-exec',
    agents: [{ name: 'hostile' }, { name: 'b' }, { name: 'c' }],
    // corl:self: each agent is rewarded against its own vote, so no agent's answer rests on another's
    topology: 'corl:self',
    reward: { use: 'corl:exec-vote', options: { timeoutMs: 1000, memoryMb: 256, concurrency: 2 } },
    serve: { port: 0, exchange: { wait: 5 } },
  };
  const group = (completions: string[]) => ({
    id: 'double',
    prompt: 'Read n, print 2n.',
    completions,
    testInputs: INPUTS,
  });

  async function benign(s: RewardServer): Promise<unknown[]> {
    const answers = await Promise.all(
      ['b', 'c'].map((agent, i) =>
        post(s.url, '/v1/groups', { agent, step: 0, groups: [group(i === 0 ? BENIGN : [...BENIGN].reverse())] }),
      ),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
    return answers.map((a) => a.body);
  }

  it('a program printing its own outcome lines of megabytes gets a bounded key, answer and journal (issue 30)', async () => {
    // Before: the program's own line set the key whatever maxOutput said; a 10 kB request gave a
    // 257 MB answer and a 507 MB journal, 31.8 kB killed the service.
    const forge = (n: number) =>
      fenced(`import sys, json
for i in range(8):
    sys.__stdout__.write(json.dumps({"i": i, "out": "x" * 400000}) + "\\n")
sys.__stdout__.flush()
# ${n}`);
    server = await startServer({ ...config, reward: { ...config.reward, options: { timeoutMs: 5000 } } }, tmp.dir);
    const inputs = Array.from({ length: 8 }, (_, i) => [String(i)]);
    const body = {
      agent: 'hostile',
      step: 0,
      groups: [{ id: 'flood', prompt: 'p', completions: [0, 1, 2, 3].map(forge), testInputs: inputs }],
    };
    const r = await post(server.url, '/v1/groups', body);
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(200);
    const keys = r.body.groups[0].keys as string[];
    // The program writes an outcome line for every input index (the one running is taken, 400 kB).
    // Outputs cut to maxOutput (1000 characters) by the sandbox, then the key (the tuple of 8
    // outputs, over serve.maxKeyChars) replaced by its digest.
    for (const k of keys) expect(k).to.match(/^sha256:[A-Za-z0-9_-]{43}$/);
    expect(new Set(keys).size).to.equal(1); // the same outputs: the same key
    expect(JSON.stringify(r.body).length).to.be.below(2000);
    expect(fs.statSync(path.join(tmp.dir, 'journal.jsonl')).size).to.be.below(4000);
    expect((await get(server.url, '/health')).status).to.equal(200);
    // And a restart replays it.
    await server.close();
    server = await startServer({ ...config, reward: { ...config.reward, options: { timeoutMs: 5000 } } }, tmp.dir);
    expect((await post(server.url, '/v1/groups', body)).body).to.deep.equal(r.body);
  });

  /** A post the client abandons after `ms` (it closes the connection). */
  async function abandon(url: string, body: unknown, ms: number): Promise<void> {
    const ctrl = new AbortController();
    const t = setTimeout(() => ctrl.abort(), ms);
    await fetch(`${url}/v1/groups`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: ctrl.signal,
    }).catch(() => undefined);
    clearTimeout(t);
  }
  const loops = (n: number) => Array.from({ length: n }, (_, i) => fenced(`while True:\n    pass  # ${i}`));
  const fortyTwo = { id: 'v', prompt: 'p', completions: [fenced('print(42)')], testInputs: [['1']] };

  it("16 `while True` programs of one client: another client's program runs next, not after them (issue 30)", async () => {
    // Before: a 1,110-byte request of 16 loops delayed another client's print(42) by 62.9 s (FIFO).
    server = await startServer(config, tmp.dir);
    let attackDone = false;
    const attack = post(server.url, '/v1/groups', {
      agent: 'hostile',
      step: 0,
      groups: [{ id: 'loop', prompt: 'p', completions: loops(16), testInputs: [['1']] }],
    }).then((r) => {
      attackDone = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    const victim = await post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [fortyTwo] });
    expect(victim.status).to.equal(200);
    expect(victim.body.groups[0].keys).to.deep.equal([JSON.stringify(['42\n'])]);
    // The victim's program ran after at most the loops already running, while 14 still waited.
    expect(attackDone).to.equal(false);
    const a = await attack;
    expect(a.status).to.equal(200);
    expect(a.body.groups[0].keys).to.deep.equal(Array(16).fill(null)); // every input timed out: no answer
  });

  it('a client that goes away takes its queued and running programs with it; work over serve.timeouts.work stops with a coded 503 (issue 30)', async () => {
    // Programs that run a minute each, two at a time: without cancellation the victim would wait
    // for all of them, after the attacker had left.
    const slow = { ...config, reward: { ...config.reward, options: { timeoutMs: 60_000, concurrency: 2 } } };
    server = await startServer({ ...slow, serve: { ...slow.serve, timeouts: { work: 3 } } }, tmp.dir);
    const body = (n: number) => ({
      agent: 'hostile',
      step: 0,
      groups: [{ id: `loop${n}`, prompt: 'p', completions: loops(n), testInputs: [['1']] }],
    });
    await abandon(server.url, body(16), 500);
    const victim = await post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [fortyTwo] });
    expect(victim.status).to.equal(200);
    expect(victim.body.groups[0].keys).to.deep.equal([JSON.stringify(['42\n'])]);
    // A client that stays: its work is stopped after serve.timeouts.work (3 s), nothing stored.
    const timedOut = await post(server.url, '/v1/groups', body(4));
    expect(timedOut.status).to.equal(503);
    expect(timedOut.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_WORK_TIMEOUT', where: 'work' });
    expect(timedOut.body.error.message).to.contain('serve.timeouts.work (3 s)');
    const health = (await get(server.url, '/health')).body;
    expect(health.exchange.slots).to.equal(1); // the victim's group alone
    const again = await post(server.url, '/v1/groups', { agent: 'b', step: 1, groups: [{ ...fortyTwo, id: 'w' }] });
    expect(again.status).to.equal(200);
    const metrics = (await get(server.url, '/metrics')).body as string;
    expect(metrics).to.contain('corl_serve_requests_total{route="/v1/groups",status="499"} 1');
  });

  it('file, socket and fork are contained; the other agents get what they get without it', async () => {
    // What b and c get from a service that never sees the hostile agent.
    const quietDir = path.join(tmp.dir, 'quiet');
    fs.mkdirSync(quietDir);
    server = await startServer(config, quietDir);
    const baseline = await benign(server);
    expect((baseline[0] as any).groups[0].rewards).to.deep.equal([1, 1, 0, 0]);
    await server.close();

    // The host's bait: a secret file, a listener on loopback, a file the orphan would write.
    const secret = path.join(tmp.dir, 'secret.json');
    fs.writeFileSync(secret, '{"token": "corl-serve-secret-42"}');
    const written = path.join(tmp.dir, 'escaped.txt');
    let connections = 0;
    listener = net.createServer((sock) => {
      connections++;
      sock.destroy();
    });
    await new Promise<void>((r) => listener!.listen(0, '127.0.0.1', () => r()));
    const port = (listener.address() as net.AddressInfo).port;
    // The first line switches the sandbox's Python audit hook off, so that the OS layer is what holds.
    const hostile = fenced(`import __main__; __main__.hook.__code__ = (lambda e, a: None).__code__
import json, os, socket, sys
res = {}
for name, p in (("secret", ${JSON.stringify(secret)}), ("passwd", "/etc/passwd"), ("parent", "/proc/%d/environ" % os.getppid())):
    try:
        res[name] = open(p).read()[:100]
    except Exception as e:
        res[name] = type(e).__name__
try:
    socket.create_connection(("127.0.0.1", ${port}), timeout=0.5).sendall(b"escaped")
    res["socket"] = "connected"
except Exception as e:
    res["socket"] = type(e).__name__
try:
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            open(${JSON.stringify(written)}, "w").write("escaped")
        except Exception:
            pass
        os.execv(sys.executable, [sys.executable + "-${MARKER}", "-c", "import time; time.sleep(1000)"])
    res["fork"] = "forked"
except Exception as e:
    res["fork"] = type(e).__name__
print(json.dumps(res, sort_keys=True))
print(int(input()) * 2)`);

    process.env.CORL_SERVE_ENV_SECRET = 'corl-serve-env-secret';
    server = await startServer(config, path.join(tmp.dir));
    const [attack, ...others] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'hostile', step: 0, groups: [group([hostile, ...BENIGN.slice(0, 3)])] }),
      benign(server),
    ]);
    expect(attack.status, JSON.stringify(attack.body)).to.equal(200);
    expect(others[0]).to.deep.equal(baseline);

    // What the hostile program saw, from its answer key (the tuple of its outputs on the inputs).
    const key = attack.body.groups[0].keys[0] as string;
    const outputs = JSON.parse(key) as string[];
    expect(outputs).to.have.length(INPUTS.length);
    for (const o of outputs) {
      const [seen, doubled] = o.trim().split('\n');
      const res = JSON.parse(seen!) as Record<string, string>;
      for (const f of ['secret', 'passwd']) expect(res[f], f).to.be.oneOf(['FileNotFoundError', 'PermissionError']);
      expect(res.parent).to.not.contain('corl-serve-env-secret'); // its parent is inside the sandbox, environment empty
      expect(res.fork).to.equal('forked'); // the hook is off: the fork happens, inside the sandbox
      expect(res.socket).to.not.equal('connected');
      expect(doubled).to.match(/^\d+$/);
    }
    expect(JSON.stringify(attack.body)).to.not.contain('corl-serve-secret-42');
    expect(JSON.stringify(attack.body)).to.not.contain('corl-serve-env-secret');

    // The host's side: no connection, nothing written, no process left behind.
    expect(connections).to.equal(0);
    expect(fs.existsSync(written)).to.equal(false);
    let left = hostProcesses(MARKER);
    for (let k = 0; k < 20 && left.length; k++) {
      await new Promise((r) => setTimeout(r, 100));
      left = hostProcesses(MARKER);
    }
    expect(left, 'orphans outside the sandbox').to.deep.equal([]);

    // The service goes on: health, and a later step of every agent, the hostile one included.
    expect((await get(server.url, '/health')).status).to.equal(200);
    const next = await post(server.url, '/v1/groups', {
      agent: 'hostile',
      step: 1,
      groups: [{ ...group(BENIGN), id: 'double-again' }],
    });
    expect(next.status).to.equal(200);
    expect(next.body.groups[0].rewards).to.deep.equal([1, 1, 0, 0]);
  });
});
