// Generated code is untrusted. Every containment is checked in each isolation mode this machine
// offers, with the audit hook on (the configuration a run uses) and, for namespaces, with it off, so
// that the OS-level layer is shown to hold on its own.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { namespaceAvailable, findPython, Sandbox, type SandboxOptions } from '../../../../plugins/rewards/sandbox/sandbox';

const base: SandboxOptions = { isolation: 'process', timeoutMs: 800, memoryMb: 256, concurrency: 2, maxOutput: 1000, python: '' };
const modes: { name: string; options: SandboxOptions }[] = [{ name: 'process isolation', options: base }];
if (namespaceAvailable(findPython(''))) {
  modes.push({ name: 'namespace isolation', options: { ...base, isolation: 'namespace' } });
  modes.push({ name: 'namespace isolation without the audit hook', options: { ...base, isolation: 'namespace', auditHook: false } });
}

const run = (sb: Sandbox, program: string, inputs: string[][] = [['']]) => sb.run(program, 'stdin', '', inputs);

describe('plugins/rewards/sandbox', function () {
  this.timeout(60000);
  it('runs a function on argument literals (call mode) and a script on stdin (stdin mode)', async () => {
    const sb = new Sandbox(base);
    expect((await sb.run('def f(a, b):\n    return a + b\n', 'call', 'f', [['1', '2'], ['[1]', '[2]'], ['1', '"x"']])).outcomes)
      .to.deep.equal([{ out: '3' }, { out: '[1, 2]' }, { err: 'TypeError' }]);
    expect((await run(sb, 'print(int(input()) * 2)', [['21'], ['x']])).outcomes).to.deep.equal([{ out: '42\n' }, { err: 'ValueError' }]);
    expect((await sb.run('def g(): pass', 'call', 'f', [['1']])).outcomes).to.deep.equal([{ err: 'NameError' }]);
    expect((await run(sb, 'def (', [[''], ['']])).outcomes).to.deep.equal([{ err: 'SyntaxError' }, { err: 'SyntaxError' }]);
  });

  for (const { name, options } of modes) {
    describe(name, () => {
      const sb = new Sandbox(options);
      it(`uses ${options.isolation} isolation`, () => expect(sb.isolation).to.equal(options.isolation));

      it('an infinite loop is stopped at the time limit and the next input still runs', async () => {
        const r = await sb.run('import sys\ndef f(x):\n    while x: pass\n    return 7\n', 'call', 'f', [['True'], ['False']]);
        expect(r.outcomes).to.deep.equal([{ err: 'timeout' }, { out: '7' }]);
        const ignoring = await run(sb, 'import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True: pass');
        expect(ignoring.outcomes).to.deep.equal([{ err: 'timeout' }]);
      });

      it('a memory bomb hits the memory limit', async () => {
        // A generous time limit, so that on a loaded machine the memory limit is what stops it.
        const roomy = new Sandbox({ ...options, timeoutMs: 20000 });
        expect((await run(roomy, 'x = bytearray(10 ** 10)')).outcomes).to.deep.equal([{ err: 'memory' }]);
        expect((await run(roomy, 'a = []\nwhile True: a.append(" " * 10 ** 7)')).outcomes).to.deep.equal([{ err: 'memory' }]);
      });

      it('the parent\'s environment variables are not there', async () => {
        process.env.CORL_SANDBOX_SECRET = 'hunter2';
        try {
          const r = await run(sb, 'import os\nprint(sorted(os.environ))\nprint(os.environ.get("CORL_SANDBOX_SECRET"))');
          expect(r.outcomes).to.have.length(1);
          const out = (r.outcomes[0] as { out: string }).out;
          expect(out).to.not.contain('hunter2');
          expect(out.trim().split('\n')[1]).to.equal('None');
          const viaProc = await run(sb, 'import os\nprint(open("/proc/%d/environ" % os.getppid(), "rb").read())');
          expect(JSON.stringify(viaProc.outcomes)).to.not.contain('hunter2');
        } finally {
          delete process.env.CORL_SANDBOX_SECRET;
        }
      });

      it('writing outside the fresh working folder fails and leaves nothing behind; inside works', async () => {
        const target = path.join(os.tmpdir(), `corl-escape-${process.pid}-${options.isolation}-${options.auditHook === false ? 'nohook' : 'hook'}`);
        fs.rmSync(target, { force: true });
        const tries = [`open(${JSON.stringify(target)}, "w").write("x")`, 'open("/etc/corl-escape", "w")', 'open("../corl-escape", "w").write("x")', 'import os\nos.mkdir("/var/tmp/corl-escape")'];
        for (const t of tries) {
          const r = await run(sb, t);
          expect('err' in r.outcomes[0]!, `${t}: ${JSON.stringify(r.outcomes)}`).to.equal(true);
        }
        expect(fs.existsSync(target)).to.equal(false);
        expect(fs.existsSync('/etc/corl-escape')).to.equal(false);
        expect(fs.existsSync('/var/tmp/corl-escape')).to.equal(false);
        const inside = await run(sb, 'open("note.txt", "w").write("ok")\nprint(open("note.txt").read())');
        expect(inside.outcomes).to.deep.equal([{ out: 'ok\n' }]);
      });

      it('a socket cannot reach a server on this machine', async () => {
        let connections = 0;
        const server = net.createServer((s) => { connections++; s.destroy(); });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const port = (server.address() as net.AddressInfo).port;
        try {
          const r = await run(sb, `import socket\ns = socket.create_connection(("127.0.0.1", ${port}), timeout=0.5)\nprint("connected")`);
          expect('err' in r.outcomes[0]!, JSON.stringify(r.outcomes)).to.equal(true);
          expect(connections).to.equal(0);
        } finally {
          server.close();
        }
      });

      it('subprocesses are refused or cannot touch the host', async () => {
        const marker = path.join(os.tmpdir(), `corl-spawn-${process.pid}-${options.isolation}`);
        await run(sb, `import os\nos.system("touch ${marker}")`);
        await run(sb, `import subprocess\nsubprocess.run(["touch", "${marker}"])`);
        expect(fs.existsSync(marker)).to.equal(false);
      });
    });
  }
});
