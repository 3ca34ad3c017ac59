// Generated code is untrusted. The good paths (call and stdin modes, per-input limits) and then the
// hostile battery, against the real bubblewrap sandbox three ways: with the audit hook on, with the
// hook switched off by the program itself (the one line that disables it), and with the hook not
// installed at all, so that the OS layer is shown to hold on its own. Every containment is checked
// from the host's side: the listener got no connection, the file is unchanged, no process is left.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { isCorlError } from '../../../../core/errors';
import { Sandbox, type RunResult, type SandboxOptions } from '../../../../plugins/rewards/sandbox/sandbox';
import { describeWithBwrap } from '../../../support/bwrap';

const TIMEOUT_MS = 1000;
const base: SandboxOptions = {
  isolation: 'auto',
  timeoutMs: TIMEOUT_MS,
  memoryMb: 256,
  concurrency: 2,
  maxOutput: 4000,
  python: '',
};
const DISABLE_HOOK = 'import __main__; __main__.hook.__code__ = (lambda e, a: None).__code__\n';

const modes: { name: string; options: SandboxOptions; prefix: string }[] = [
  { name: 'bwrap with the audit hook', options: base, prefix: '' },
  { name: 'bwrap with the audit hook switched off by the program', options: base, prefix: DISABLE_HOOK },
  { name: 'bwrap without the audit hook', options: { ...base, auditHook: false }, prefix: '' },
];

const run = (sb: Sandbox, program: string, inputs: string[][] = [['']]) => sb.run(program, 'stdin', '', inputs);
const out = (r: RunResult, k = 0): string => {
  const o = r.outcomes[k]!;
  if (!('out' in o)) throw new Error(`expected an output, got ${JSON.stringify(r.outcomes)}`);
  return o.out;
};
/** Live (not zombie) host processes whose name or command line contains `marker`. */
function hostProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue;
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8') + fs.readFileSync(`/proc/${d}/comm`, 'utf8');
      if (cmd.includes(marker)) found.push(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}
/** Poll briefly: a process killed with its namespace may take a moment to leave /proc on a loaded machine. */
async function survivors(marker: string): Promise<number[]> {
  let left = hostProcesses(marker);
  for (let k = 0; k < 20 && left.length; k++) {
    await new Promise((r) => setTimeout(r, 100));
    left = hostProcesses(marker);
  }
  return left;
}
/** The sandbox's root holds the interpreter's folders, /dev, /proc and /tmp: no /home, /root, /var, /work or project. */
function expectMinimalRoot(listing: string[]): void {
  expect(listing).to.include.members(['dev', 'proc', 'tmp', 'usr']);
  for (const d of listing) expect(['dev', 'etc', 'lib', 'lib32', 'lib64', 'proc', 'tmp', 'usr'], d).to.include(d);
}
const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

describe('plugins/rewards/sandbox', function () {
  this.timeout(120000);

  describeWithBwrap('good paths (bwrap)', () => {
    const sb = new Sandbox(base);
    after(() => sb.close());

    it('uses the bubblewrap sandbox for `auto`', () => expect(sb.isolation).to.equal('bwrap'));

    it('runs a function on argument literals (call mode) and a script on stdin (stdin mode)', async () => {
      expect(
        (
          await sb.run('def f(a, b):\n    return a + b\n', 'call', 'f', [
            ['1', '2'],
            ['[1]', '[2]'],
            ['1', '"x"'],
          ])
        ).outcomes,
      ).to.deep.equal([{ out: '3' }, { out: '[1, 2]' }, { err: 'TypeError' }]);
      expect((await run(sb, 'print(int(input()) * 2)', [['21'], ['x']])).outcomes).to.deep.equal([
        { out: '42\n' },
        { err: 'ValueError' },
      ]);
      expect((await sb.run('def g(): pass', 'call', 'f', [['1']])).outcomes).to.deep.equal([{ err: 'NameError' }]);
      expect((await run(sb, 'def (', [[''], ['']])).outcomes).to.deep.equal([
        { err: 'SyntaxError' },
        { err: 'SyntaxError' },
      ]);
      // the standard library's native modules load inside (shared libraries found and bound)
      expect(
        out(
          await run(
            sb,
            'import decimal, hashlib, json, math, heapq, bisect, collections, re, fractions\nprint(decimal.Decimal("0.1") + decimal.Decimal("0.2"), hashlib.sha256(b"").hexdigest()[:8])',
          ),
        ),
      ).to.equal('0.3 e3b0c442\n');
    });

    it("writing inside the private /tmp works; one run never sees another's files", async () => {
      expect(
        (await run(sb, 'open("note.txt", "w").write("ok")\nprint(open("note.txt").read())')).outcomes,
      ).to.deep.equal([{ out: 'ok\n' }]);
      expect(out(await run(sb, 'import os\nprint(os.getcwd(), os.listdir("."))'))).to.equal('/tmp []\n');
    });

    it('an infinite loop is stopped at the time limit and the next input still runs', async () => {
      const r = await sb.run('def f(x):\n    while x: pass\n    return 7\n', 'call', 'f', [['True'], ['False']]);
      expect(r.outcomes).to.deep.equal([{ err: 'timeout' }, { out: '7' }]);
      const ignoring = await run(sb, 'import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True: pass', [
        [''],
        [''],
      ]);
      expect(ignoring.outcomes).to.deep.equal([{ err: 'timeout' }, { err: 'timeout' }]);
      expect(ignoring.killed).to.equal(true);
    });

    it('a program that ends the interpreter loses only that input', async () => {
      const r = await sb.run('import os\ndef f(x):\n    if x: os._exit(3)\n    return 1\n', 'call', 'f', [
        ['False'],
        ['True'],
        ['False'],
      ]);
      expect(r.outcomes).to.deep.equal([{ out: '1' }, { err: 'crash' }, { out: '1' }]);
      expect(r.starts).to.equal(2);
    });

    it('waiting runs are served lane by lane; a run whose signal aborts leaves the queue, or is killed with its sandbox', async () => {
      const one = new Sandbox({ ...base, concurrency: 1, timeoutMs: 60_000 });
      try {
        const order: string[] = [];
        const blocker = new AbortController();
        const sleeping = one.run('import time\ntime.sleep(60)', 'stdin', '', [['']], {
          signal: blocker.signal,
          lane: 'a',
        });
        const queued = (name: string, lane: string) =>
          one.run(`print("${name}")`, 'stdin', '', [['']], { lane }).then((r) => {
            order.push(name);
            return r;
          });
        // a queues two more and waits for its running one; b, with nothing running, starts at once
        // on a place of its own beyond `concurrency`; c waits (two places at most), then leaves.
        const runs = [queued('a1', 'a'), queued('a2', 'a'), queued('b1', 'b')];
        const leaving = new AbortController();
        const never = one.run('print("never")', 'stdin', '', [['']], { signal: leaving.signal, lane: 'c' });
        leaving.abort(new Error('client c left'));
        await never.then(
          () => expect.fail('ran'),
          (e: Error) => expect(e.message).to.equal('client c left'),
        );
        blocker.abort(new Error('client a left'));
        await sleeping.then(
          () => expect.fail('finished'),
          (e: Error) => expect(e.message).to.equal('client a left'),
        );
        const results = await Promise.all(runs);
        expect(order).to.deep.equal(['b1', 'a1', 'a2']);
        expect(results.map((r) => r.outcomes)).to.deep.equal([[{ out: 'a1\n' }], [{ out: 'a2\n' }], [{ out: 'b1\n' }]]);
      } finally {
        one.close();
      }
    });

    it('an outcome line the program prints itself to the real stdout is cut to maxOutput like any output', async () => {
      // Each input's program writes the harness's outcome line for the running input (1 MB of "x",
      // and an error marker of 1000 characters for the second) before the harness can write its own.
      const forge = `import sys, json
i = int(input())
line = {"i": i, "out": "x" * 1000000} if i == 0 else {"i": i, "err": "E" * 1000}
sys.__stdout__.write(json.dumps(line) + "\\n")
sys.__stdout__.flush()`;
      const r = await run(sb, forge, [['0'], ['1']]);
      expect(r.outcomes).to.deep.equal([{ out: 'x'.repeat(base.maxOutput) }, { err: 'E'.repeat(60) }]);
    });
  });

  for (const { name, options, prefix } of modes) {
    describeWithBwrap(`hostile battery: ${name}`, () => {
      const sb = new Sandbox({ ...options, maxOutput: 1_000_000 });
      const hostile = (program: string, inputs: string[][] = [['']]) => run(sb, prefix + program, inputs);
      let dir: string;
      before(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-hostile-'));
      });
      after(() => {
        sb.close();
        fs.rmSync(dir, { recursive: true, force: true });
      });

      if (prefix) {
        it('the one-liner does switch the audit hook off (ctypes, which it refuses, imports)', async () => {
          expect(out(await hostile('import ctypes\nprint("hook off")'))).to.equal('hook off\n');
        });
      }

      it('host files are not there: /etc/passwd, /etc/shadow, the project, $HOME, /root, the run folder', async () => {
        const secret = path.join(dir, 'state.json');
        fs.writeFileSync(secret, '{"secret": "corl-file-secret"}');
        const paths = [
          '/etc/passwd',
          '/etc/shadow',
          '/etc/hostname',
          path.resolve('package.json'),
          process.cwd(),
          os.homedir(),
          '/root',
          secret,
          dir,
          '/home',
          '/var',
          '/proc/self/root/etc/passwd',
          '/proc/1/root/etc/passwd',
          '/proc/1/cwd/etc/passwd',
        ];
        const r = await hostile(`import os, json
res = {}
for p in ${JSON.stringify(paths)}:
    try:
        res[p] = os.listdir(p) if os.path.isdir(p) else open(p).read()[:200]
    except Exception as e:
        res[p] = type(e).__name__
print(json.dumps(res))
print(json.dumps(sorted(os.listdir("/"))))`);
        const [line, root] = out(r).trim().split('\n');
        const res = JSON.parse(line!) as Record<string, unknown>;
        for (const p of paths)
          expect(res[p], p).to.be.oneOf(['FileNotFoundError', 'PermissionError', 'NotADirectoryError']);
        expect(JSON.stringify(res)).to.not.contain('corl-file-secret');
        expectMinimalRoot(JSON.parse(root!));
      });

      it("no secret in the environment or in any /proc it can see (the parent's environ included)", async () => {
        process.env.CORL_SANDBOX_SECRET = 'hunter2-corl';
        try {
          const r = await hostile(`import os, json
print(json.dumps(dict(os.environ)))
seen = []
for pid in [${process.pid}, ${process.ppid}, os.getppid(), 1, 2, 'self']:
    for what in ('environ', 'cmdline'):
        try:
            seen.append(open('/proc/%s/%s' % (pid, what), 'rb').read().decode('latin-1'))
        except Exception as e:
            seen.append(type(e).__name__)
for d in os.listdir('/proc'):
    if d.isdigit():
        try: seen.append(open('/proc/%s/environ' % d, 'rb').read().decode('latin-1'))
        except Exception: pass
print(sorted(int(d) for d in os.listdir('/proc') if d.isdigit()))
print(any('hunter2-corl' in s for s in seen), len(seen))
print(json.dumps(seen))`);
          const [env, pids, found, seen] = out(r).trim().split('\n');
          expect(found).to.match(/^False \d+$/);
          // nothing but the working folder bwrap sets
          expect(Object.keys(JSON.parse(env!)).filter((k) => k !== 'PWD')).to.deep.equal([]);
          expect(seen).to.not.contain('hunter2-corl');
          // only the sandbox's own processes: its init, the harness and the listing itself
          expect(JSON.parse(pids!).every((p: number) => p <= 3)).to.equal(true);
        } finally {
          delete process.env.CORL_SANDBOX_SECRET;
        }
      });

      it("writes outside the private /tmp fail and leave the host's files as they were (dir_fd too)", async () => {
        const state = path.join(dir, 'state.json');
        fs.writeFileSync(state, 'original');
        const r = await hostile(`import os
res = []
def attempt(f):
    try:
        f(); res.append('wrote')
    except Exception as e:
        res.append(type(e).__name__)
attempt(lambda: open(${JSON.stringify(state)}, 'w').write('pwned'))
attempt(lambda: open('/etc/corl-escape', 'w').write('x'))
attempt(lambda: open('/usr/corl-escape', 'w').write('x'))
attempt(lambda: open('/corl-escape', 'w').write('x'))
attempt(lambda: open('/dev/shm/corl-escape', 'w').write('x'))
attempt(lambda: os.mkdir('/var'))
attempt(lambda: os.write(os.open('corl-escape', os.O_WRONLY | os.O_CREAT, dir_fd=os.open('/usr', os.O_RDONLY)), b'x'))
attempt(lambda: os.write(os.open(${JSON.stringify(path.basename(state))}, os.O_WRONLY | os.O_TRUNC, dir_fd=os.open(${JSON.stringify(dir)}, os.O_RDONLY)), b'x'))
print(res)`);
        expect(out(r).trim()).to.not.contain("'wrote'");
        expect(fs.readFileSync(state, 'utf8')).to.equal('original');
        for (const p of ['/etc/corl-escape', '/usr/corl-escape', '/corl-escape', '/dev/shm/corl-escape'])
          expect(fs.existsSync(p), p).to.equal(false);
      });

      it("the private /tmp is capped (filling it stops at its size, not the host's memory)", async () => {
        const r = await hostile(`n = 0
try:
    for k in range(40):
        with open('f%d' % k, 'wb') as f:
            f.write(b'x' * (8 << 20))
        n += 1
except OSError as e:
    print(type(e).__name__, e.errno)
print(n)`);
        const lines = out(r).trim().split('\n');
        expect(lines[0]).to.equal('OSError 28'); // ENOSPC
        expect(Number(lines[1])).to.be.below(9);
      });

      it('no network: TCP, UDP, unix (path and abstract) reach nothing the test listens on', async () => {
        let connections = 0;
        const tcp = net.createServer((s) => {
          connections++;
          s.destroy();
        });
        await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
        const port = (tcp.address() as net.AddressInfo).port;
        const sockPath = path.join(dir, 'corl.sock');
        const unix = net.createServer((s) => {
          connections++;
          s.destroy();
        });
        await new Promise<void>((resolve) => unix.listen(sockPath, resolve));
        const abstractName = `corl-abstract-${process.pid}`;
        const abstract = net.createServer((s) => {
          connections++;
          s.destroy();
        });
        await new Promise<void>((resolve) => abstract.listen(`\0${abstractName}`, resolve));
        let datagrams = 0;
        const udp = dgram.createSocket('udp4');
        udp.on('message', () => {
          datagrams++;
        });
        await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
        const udpPort = udp.address().port;
        try {
          const r = await hostile(`import socket
res = []
def attempt(f):
    try:
        f(); res.append('ok')
    except Exception as e:
        res.append(type(e).__name__)
attempt(lambda: socket.create_connection(('127.0.0.1', ${port}), timeout=0.5))
attempt(lambda: socket.create_connection(('1.1.1.1', 53), timeout=0.5))
def unix(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(0.5); s.connect(addr)
attempt(lambda: unix(${JSON.stringify(sockPath)}))
attempt(lambda: unix('\\0${abstractName}'))
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(5): s.sendto(b'x', ('127.0.0.1', ${udpPort}))
attempt(udp)
print(res)`);
          await new Promise((res) => setTimeout(res, 200));
          expect(connections).to.equal(0);
          expect(datagrams).to.equal(0);
          const res = out(r).trim();
          // the TCP and unix connections all fail (UDP "sends" into the sandbox's own empty loopback)
          expect(res.startsWith("['")).to.equal(true);
          expect(res.split(', ').slice(0, 4)).to.not.include("'ok'");
        } finally {
          tcp.close();
          unix.close();
          abstract.close();
          udp.close();
        }
      });

      it('50 forks: capped by the process limit, and none is left afterwards', async () => {
        const marker = `cf${process.pid % 10000}${prefix ? 'x' : 'h'}${options.auditHook === false ? 'n' : 'y'}`;
        // A generous time limit, so that on a loaded machine 50 fork attempts finish before it.
        const roomy = new Sandbox({ ...options, timeoutMs: 20000 });
        const r = await run(
          roomy,
          prefix +
            `import os, time, sys
n = 0
err = 'none'
for k in range(50):
    try:
        pid = os.fork()
    except Exception as e:
        err = type(e).__name__
        continue
    if pid == 0:
        try:
            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(1000)', '${marker}'])
        finally:
            os._exit(0)
    n += 1
print(n, err)`,
        ).finally(() => roomy.close());
        const [n, err] = out(r).trim().split(' ');
        if (options.auditHook === false || prefix) {
          expect(Number(n)).to.be.below(16); // RLIMIT_NPROC of the sandbox (its init and the harness count)
          expect(err).to.equal('BlockingIOError');
        } else {
          expect(Number(n)).to.equal(0); // the audit hook refuses os.fork
        }
        expect(await survivors(marker)).to.deep.equal([]);
      });

      it('setsid orphans (Popen start_new_session, fork + setsid) die with the sandbox and never hold the call', async () => {
        const marker = `co${process.pid % 10000}${prefix ? 'x' : 'h'}${options.auditHook === false ? 'n' : 'y'}`;
        const program = `import os, sys, subprocess, time
res = []
try:
    subprocess.Popen(['sleep', '1000'], start_new_session=True); res.append('sleep')
except Exception as e:
    res.append(type(e).__name__)
try:
    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1000)', '${marker}'], start_new_session=True); res.append('popen')
except Exception as e:
    res.append(type(e).__name__)
try:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(1000)', '${marker}'])
        os._exit(0)
    res.append('fork')
except Exception as e:
    res.append(type(e).__name__)
print(res)`;
        // the program returns at once (its orphans hold the pipe), or loops in C until the limit; the orphans
        // sleep 1000 s and the loop would run for hours, so each call returning at all (inside the suite's
        // hang guard) shows that neither held it: no wall-clock bound here, the machine may be loaded
        const quick = { value: await hostile(program, [[''], ['']]) };
        expect(quick.value.outcomes).to.have.length(2);
        const looping = { value: await hostile(program + '\nsum(range(10 ** 12))') };
        expect(looping.value.outcomes).to.deep.equal([{ err: 'timeout' }]);
        if (prefix || options.auditHook === false)
          expect(out(quick.value)).to.equal("['FileNotFoundError', 'popen', 'fork']\n");
        expect(await survivors(marker)).to.deep.equal([]);
      });

      it('a memory bomb hits the memory limit', async () => {
        // A generous time limit, so that on a loaded machine the memory limit is what stops it.
        const roomy = new Sandbox({ ...options, timeoutMs: 20000 });
        expect((await run(roomy, prefix + 'x = bytearray(10 ** 10)')).outcomes).to.deep.equal([{ err: 'memory' }]);
        expect((await run(roomy, prefix + 'a = []\nwhile True: a.append(" " * 10 ** 7)')).outcomes).to.deep.equal([
          { err: 'memory' },
        ]);
      });

      it('a loop inside C is killed at the per-input limit from outside; each later input still runs', async () => {
        const r = await sb.run(prefix + 'def f(x):\n    return sum(range(10 ** 12)) if x else 5\n', 'call', 'f', [
          ['True'],
          ['False'],
          ['True'],
          ['False'],
        ]);
        expect(r.outcomes).to.deep.equal([{ err: 'timeout' }, { out: '5' }, { err: 'timeout' }, { out: '5' }]);
        expect(r.killed).to.equal(true);
        expect(r.starts).to.equal(3);
        // the in-process timer is not what stopped it: with the alarm ignored, the same
        const ignoring = {
          value: await hostile(
            'import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nsignal.setitimer(signal.ITIMER_REAL, 0)\nsum(range(10 ** 12))',
          ),
        };
        expect(ignoring.value.outcomes).to.deep.equal([{ err: 'timeout' }]);
      });

      it('killing the parent (getppid, kill(-1)) reaches nothing outside, even a host process of the same uid', async () => {
        const root = process.getuid?.() === 0;
        const sentinel = spawn('sleep', ['60'], { stdio: 'ignore', ...(root ? { uid: 65534, gid: 65534 } : {}) });
        try {
          const r = await hostile(
            `import os, signal
res = []
for pid in (os.getppid(), 1, ${process.pid}, ${sentinel.pid}, -1):
    try:
        os.kill(pid, signal.SIGKILL); res.append('sent')
    except Exception as e:
        res.append(type(e).__name__)
print(res)`,
            [[''], ['']],
          );
          expect(r.outcomes).to.have.length(2);
          await new Promise((res) => setTimeout(res, 200));
          expect(alive(sentinel)).to.equal(true);
        } finally {
          sentinel.kill('SIGKILL');
        }
      });

      it('no way out through /proc/self/root, ptrace, new namespaces or a chroot', async () => {
        const r = await hostile(`import os, json
res = {}
try:
    res['root'] = sorted(os.listdir('/proc/self/root'))
except Exception as e:
    res['root'] = type(e).__name__
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    res['ptrace_host'] = (libc.ptrace(16, ${process.pid}, 0, 0), ctypes.get_errno())
    res['unshare_user'] = (libc.unshare(0x10000000), ctypes.get_errno())
    res['unshare_mount'] = (libc.unshare(0x00020000), ctypes.get_errno())
    res['chroot'] = (libc.chroot(b'/proc/1/root'), ctypes.get_errno())
    res['mount'] = (libc.mount(b'none', b'/tmp', b'proc', 0, None), ctypes.get_errno())
except Exception as e:
    res['ctypes'] = type(e).__name__
fds = sorted(os.listdir('/proc/self/fd'))
res['fds'] = fds
print(json.dumps(res))`);
        const res = JSON.parse(out(r)) as Record<string, unknown>;
        expectMinimalRoot(res.root as string[]);
        if (res.ctypes === undefined) {
          for (const k of ['ptrace_host', 'unshare_user', 'unshare_mount', 'chroot', 'mount'])
            expect((res[k] as number[])[0], k).to.equal(-1);
        }
        expect(fs.readFileSync(`/proc/${process.pid}/status`, 'utf8')).to.match(/TracerPid:\s+0\n/);
        // stdin, stdout, stderr and the listing's own descriptor: nothing inherited
        expect((res.fds as string[]).length).to.be.at.most(4);
      });
    });
  }

  describe('without bubblewrap', () => {
    it('refuses with CORL_ERR_SANDBOX_BWRAP_MISSING, saying how to install it', () => {
      let err: unknown;
      try {
        new Sandbox({ ...base, bwrap: '/nonexistent/bwrap' });
      } catch (e) {
        err = e;
      }
      expect(isCorlError(err, 'CORL_ERR_SANDBOX_BWRAP_MISSING'), String(err)).to.equal(true);
      expect(String((err as { hint?: string }).hint)).to.contain('apt-get install -y bubblewrap');
      expect(String((err as Error).message)).to.contain('/nonexistent/bwrap');
    });

    it('a bwrap that cannot build the sandbox is CORL_ERR_SANDBOX_BWRAP_FAILED', () => {
      let err: unknown;
      try {
        new Sandbox({ ...base, bwrap: '/bin/false' });
      } catch (e) {
        err = e;
      }
      expect(isCorlError(err, 'CORL_ERR_SANDBOX_BWRAP_FAILED'), String(err)).to.equal(true);
    });

    it('`unsafe-process` runs unisolated, warns on every instantiation, and still holds the per-input limit', async () => {
      const warnings: string[] = [];
      const options: SandboxOptions = {
        ...base,
        isolation: 'unsafe-process',
        bwrap: '/nonexistent/bwrap',
        warn: (l) => warnings.push(l),
        owner: 'corl:exec-vote',
      };
      const sb = new Sandbox(options);
      new Sandbox(options).close();
      expect(sb.isolation).to.equal('unsafe-process');
      expect(warnings).to.have.length(2);
      expect(warnings[0]).to.contain('corl:exec-vote').and.contain('UNISOLATED').and.contain('bubblewrap');
      try {
        expect((await sb.run('def f(a, b):\n    return a + b\n', 'call', 'f', [['1', '2']])).outcomes).to.deep.equal([
          { out: '3' },
        ]);
        const r = await sb.run('def f(x):\n    return sum(range(10 ** 12)) if x else 5\n', 'call', 'f', [
          ['True'],
          ['False'],
        ]);
        expect(r.outcomes).to.deep.equal([{ err: 'timeout' }, { out: '5' }]);
      } finally {
        sb.close();
      }
    });
  });
});
