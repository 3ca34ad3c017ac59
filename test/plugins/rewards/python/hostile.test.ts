// corl:python against Python reward modules that attack the host: daemons that leave the session,
// children forked behind Python's back that write the pipe, and forged messages of every kind.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RewardSource } from '../../../../core/contracts/reward-source';
import { isCorlError, type CorlError } from '../../../../core/errors';
import { createPlugin, rewardContext } from '../../../../core/testing';
import { pythonReward } from '../../../../plugins/rewards/python';
import { tempDir } from '../../../fixtures/configs';

let tmp: ReturnType<typeof tempDir>;
const open: RewardSource[] = [];

function py(name: string, source: string): string {
  const file = path.join(tmp.dir, name);
  fs.writeFileSync(file, source.replace(/^\n/, ''));
  return file;
}

async function make(options: Record<string, unknown>): Promise<RewardSource> {
  const r = await createPlugin(pythonReward, { stderr: 'discard', ...options }, { baseDir: tmp.dir, seed: 0 });
  open.push(r);
  return r;
}

async function failure(p: Promise<unknown>): Promise<CorlError> {
  try {
    await p;
  } catch (e) {
    expect(isCorlError(e), String((e as Error)?.stack ?? e)).to.equal(true);
    const err = e as CorlError;
    expect(err.message, 'no JavaScript stack in the message').to.not.match(/\n\s+at /);
    return err;
  }
  expect.fail('expected a coded error');
}

/** Whether a process runs (a zombie does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** A module whose function, at its first call, leaves a double-forked daemon in a session of its own. */
function daemonModule(name: string): { module: string; pidFile: string } {
  const pidFile = path.join(tmp.dir, `${name}.pid`);
  const module = py(
    `${name}.py`,
    `
import os, signal, time

def reward_func(prompts, completions, **kwargs):
    if not os.path.exists(${JSON.stringify(pidFile)}):
        first = os.fork()
        if first == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                with open(${JSON.stringify(pidFile)} + ".tmp", "w") as f:
                    f.write(str(os.getpid()))
                os.rename(${JSON.stringify(pidFile)} + ".tmp", ${JSON.stringify(pidFile)})
                time.sleep(3600)
            os._exit(0)
        os.waitpid(first, 0)
        while not os.path.exists(${JSON.stringify(pidFile)}):
            time.sleep(0.01)
    return [1.0] * len(completions)
`,
  );
  return { module, pidFile };
}

const daemonPid = (pidFile: string): number => Number(fs.readFileSync(pidFile, 'utf8'));

describe('corl:python against a hostile function (process tree, pipe, forged messages)', function () {
  before(() => {
    tmp = tempDir('corl-python-hostile-');
  });
  afterEach(async () => {
    for (const r of open.splice(0)) await r.close?.();
  });
  after(() => tmp.cleanup());

  it('a double-forked daemon in a session of its own, ignoring SIGTERM, ends when the plugin closes', async () => {
    const { module, pidFile } = daemonModule('daemon');
    const r = await make({ module });
    expect((await r.score(rewardContext({ keys: ['1', '2'] }))).rewards).to.deep.equal([1, 1]);
    const pid = daemonPid(pidFile);
    expect(alive(pid), 'the daemon before close').to.equal(true);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [, , pgid, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect(Number(session), 'the daemon left the host’s session').to.equal(Number(pgid));
    await r.close!();
    open.splice(open.indexOf(r), 1);
    await until(() => !alive(pid));
    expect(alive(pid), 'the daemon after close').to.equal(false);
  });

  it('a daemon ends when the function times out, and when corl exits without closing or is killed outright', async () => {
    const { module, pidFile } = daemonModule('daemon-timeout');
    fs.appendFileSync(
      module,
      `
def hangs(prompts, completions, **kwargs):
    reward_func(prompts, completions)
    time.sleep(3600)
`,
    );
    const r = await make({ module, function: 'hangs', timeoutSeconds: 2 });
    const err = await failure(r.score(rewardContext({ keys: ['1'] })));
    expect(err.code).to.equal('CORL_ERR_PYTHON_TIMEOUT');
    const pid = daemonPid(pidFile);
    await until(() => !alive(pid));
    expect(alive(pid), 'the daemon after the timeout').to.equal(false);

    // corl itself gone: a node process that made the plugin, scored once, then exits or is SIGKILLed.
    const plugin = path.resolve(__dirname, '../../../../plugins/rewards/python');
    const testing = path.resolve(__dirname, '../../../../core/testing');
    for (const end of ['process.exit(0)', 'process.kill(process.pid, "SIGKILL")']) {
      const { module: m, pidFile: f } = daemonModule(`daemon-${end.length}`);
      const script = `
        const { pythonReward } = require(${JSON.stringify(plugin)});
        const { createPlugin, rewardContext } = require(${JSON.stringify(testing)});
        (async () => {
          const r = await createPlugin(pythonReward, { module: ${JSON.stringify(m)}, stderr: 'discard' }, { baseDir: ${JSON.stringify(tmp.dir)} });
          await r.score(rewardContext({ keys: ['1'] }));
          ${end};
        })();`;
      const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      expect(fs.existsSync(f), `${end}: the daemon started (exit ${code})`).to.equal(true);
      const d = daemonPid(f);
      await until(() => !alive(d));
      expect(alive(d), `the daemon after ${end}`).to.equal(false);
    }
  });

  it('a child forked behind Python’s back (libc fork, no at-fork hooks) cannot get a line to corl', async () => {
    const module = py(
      'forged_by_child.py',
      `
import ctypes, json, os

libc = ctypes.CDLL(None)

def reward_func(prompts, completions, corl, **kwargs):
    pid = libc.fork()
    if pid == 0:
        forged = b"".join(json.dumps({"id": i, "results": [{"rewards": [9.0] * len(completions), "metrics": {}, "extra": {}}]}).encode() + b"\\n" for i in range(1, 50))
        for fd in os.listdir("/proc/self/fd"):
            try:
                os.write(int(fd), forged)
            except OSError:
                pass
        os._exit(0)
    os.waitpid(pid, 0)
    return [1.0] * len(completions)
`,
    );
    const r = await make({ module });
    for (const step of [0, 1, 2])
      expect((await r.score(rewardContext({ keys: ['1', '2'], step }))).rewards, `step ${step}`).to.deep.equal([1, 1]);
  });

  it('every forged message from the function itself is a coded protocol error, never a crash of corl', async () => {
    const error = (kind: string) => ({ kind, type: 'E', message: 'm', where: '', last: 'E: m' });
    const ok = { rewards: [1, 1], metrics: {}, extra: {} };
    // {id} stands for the pending request's id.
    const forged: [unknown, string][] = [
      [{ id: '{id}', call: 0, error: error('constructor') }, 'kind'],
      [{ id: '{id}', call: 0, error: error('__proto__') }, 'kind'],
      [{ id: '{id}', call: 0, error: error('toString') }, 'kind'],
      [{ id: '{id}', call: 0, error: { kind: 'raised' } }, 'required'],
      [{ id: '{id}', call: 0, error: 'boom' }, 'object'],
      [{ id: '{id}', call: 7, error: error('raised') }, 'call 7'],
      [{ id: '{id}', call: -1, error: error('raised') }, '/call'],
      [{ id: '{id}', results: 'all ones' }, 'array'],
      [{ id: '{id}', results: [] }, '0 results for 1 calls'],
      [{ id: '{id}', results: [{ ...ok, rewards: [1] }] }, '1 rewards for 2'],
      [{ id: '{id}', results: [{ ...ok, rewards: ['1', 1] }] }, 'rewards/0'],
      [{ id: '{id}', results: [{ ...ok, metrics: { m: 3 } }] }, 'metrics/m'],
      [{ id: '{id}', results: [{ ...ok, metrics: { constructor: [1] }, extra: 5 }] }, 'extra'],
      [{ id: '{id}', results: [null] }, 'result 0'],
      [{ id: '{id}', results: [{ scores: [1, 1], extra: [{}, {}] }] }, 'result 0'],
      [{ id: 999, results: [ok] }, 'no request'],
      [{ id: '{id}', results: [ok], more: 1 }, 'more'],
      [{ hello: { python: '3' } }, 'second "hello"'],
      [{ ready: { function: 'f', async: false, python: '3' } }, 'after "ready"'],
      [{ fatal: error('import') }, 'after "ready"'],
      [{ ready: 1 }, '/ready'],
      [{ nothing: 'of the protocol' }, 'no message'],
      [[1, 2], 'not a JSON object'],
      [null, 'not a JSON object'],
      ['a string', 'not a JSON object'],
      [{ id: '{id}', error: error('raised') }, 'required'],
    ];
    const lines = forged.map(([m]) => JSON.stringify(m));
    const module = py(
      'forges.py',
      `
import __main__, json, sys, time

LINES = json.loads(${JSON.stringify(JSON.stringify(lines))})

def forge(line):
    f = sys._getframe(0)
    while "request" not in f.f_locals:  # the host's frame that holds the request being answered
        f = f.f_back
    __main__.PIPE_OUT.write(line.replace('"{id}"', str(f.f_locals["request"]["id"])).encode() + b"\\n")
    __main__.PIPE_OUT.flush()
    time.sleep(3600)  # corl reads the forged line at once and kills this process

def reward_func(prompts, completions, corl, **kwargs):
    forge(LINES[corl.step])

def forge_kind(prompts, completions, corl, **kwargs):
    forge(json.dumps({"id": "{id}", "call": 0, "error": {"kind": ["output", "interpreter", "withheld"][corl.step],
                      "type": "", "message": "forged", "where": "", "last": "forged"}}))
`,
    );
    const r = await make({ module, timeoutSeconds: 60 });
    for (const [step, [, says]] of forged.entries()) {
      const err = await failure(r.score(rewardContext({ keys: ['1', '2'], step })));
      expect(err.code, `${lines[step]}: ${err.message}`).to.equal('CORL_ERR_PYTHON_EXITED');
      expect(err.message, lines[step]).to.contain("expected corl's protocol").and.contain(says);
      expect(err.where).to.equal('corl:python options.function');
    }
    // A forged error of a kind the protocol has is the function's own word, coded as its kind says
    // (a fresh plugin for each: the host that forged it still sleeps).
    const codes = [];
    for (const step of [0, 1, 2]) {
      const k = await make({ module, function: 'forge_kind', timeoutSeconds: 60 });
      codes.push((await failure(k.score(rewardContext({ keys: ['1'], step })))).code);
    }
    expect(codes).to.deep.equal(['CORL_ERR_PYTHON_OUTPUT', 'CORL_ERR_PYTHON_INTERPRETER', 'CORL_ERR_PYTHON_FUNCTION']);
  });
});
