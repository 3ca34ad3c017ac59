import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import { FolderLock, LOCK_FILE, readLockOwner, type LockOwner } from '../../../core/util/folder-lock';
import { tempDir } from '../../fixtures/configs';

const MODULE = path.resolve(__dirname, '../../../core/util/folder-lock.js');

/** A child process that takes the lock of `dir`, says "held", and releases it when told "release" on stdin. */
function holder(dir: string): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(process.execPath, [
    '-e',
    `const { FolderLock } = require(${JSON.stringify(MODULE)});
     const lock = FolderLock.acquire(${JSON.stringify(dir)}, { command: 'test holder' });
     process.stdout.write('held\\n');
     process.stdin.on('data', () => { lock.release(); process.stdout.write('released\\n'); process.exit(0); });`,
  ]);
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) =>
      d.toString().startsWith('held') ? resolve(child) : reject(new Error(d.toString())),
    );
    child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
}

function exited(child: ChildProcessWithoutNullStreams): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

function plant(dir: string, owner: Partial<LockOwner>): void {
  fs.writeFileSync(
    path.join(dir, LOCK_FILE),
    JSON.stringify({
      pid: 1,
      host: os.hostname(),
      startedAt: '2026-01-01T00:00:00.000Z',
      command: 'corl train',
      ...owner,
    }),
  );
}

/** Replace the lock as a new holder's appears: written aside and renamed into place, so no heartbeat reads half of it. */
function replaceLock(dir: string, owner: Partial<LockOwner>): void {
  const aside = fs.mkdtempSync(path.join(dir, 'aside-'));
  plant(aside, owner);
  fs.renameSync(path.join(aside, LOCK_FILE), path.join(dir, LOCK_FILE));
  fs.rmdirSync(aside);
}

describe('core/util/folder-lock (one writer per folder)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('corl-lock-')));
  afterEach(() => tmp.cleanup());

  it('records its owner, refuses a second taker while held, and is free again once released', () => {
    const lock = FolderLock.acquire(path.join(tmp.dir, 'run'), { command: 'corl train' });
    const owner = readLockOwner(path.join(tmp.dir, 'run'))!;
    expect(owner).to.include({ pid: process.pid, host: os.hostname(), command: 'corl train' });
    expect(Number.isNaN(Date.parse(owner.startedAt))).to.equal(false);
    const second = FolderLock.tryAcquire(path.join(tmp.dir, 'run'), { command: 'corl compare' });
    expect(second).to.not.be.instanceOf(FolderLock);
    expect((second as LockOwner).pid).to.equal(process.pid);
    lock.release();
    lock.release();
    expect(fs.existsSync(path.join(tmp.dir, 'run', LOCK_FILE))).to.equal(false);
    FolderLock.acquire(path.join(tmp.dir, 'run'), { command: 'again' }).release();
  });

  it('another process holding it: CORL_ERR_RUN_LOCKED names its pid; once it is killed, the stale lock is taken over', async () => {
    const child = await holder(tmp.dir);
    try {
      expect(() => FolderLock.acquire(tmp.dir, { command: 'corl train' }))
        .to.throw(/CORL_ERR_RUN_LOCKED/)
        .with.property('message')
        .that.includes(`test holder (pid ${child.pid} on ${os.hostname()}`);
    } finally {
      child.kill('SIGKILL');
      await exited(child);
    }
    expect(readLockOwner(tmp.dir)!.pid).to.equal(child.pid);
    const lock = FolderLock.acquire(tmp.dir, { command: 'corl train' });
    expect(readLockOwner(tmp.dir)!.pid).to.equal(process.pid);
    lock.release();
  });

  it('wait() takes the lock once its holder releases it, having been told who held it', async () => {
    const child = await holder(tmp.dir);
    const seen: LockOwner[] = [];
    const waiting = FolderLock.wait(tmp.dir, {
      command: 'corl compare --shard 2/2',
      pollMs: 20,
      onWait: (h) => {
        seen.push(h);
        child.stdin.write('release\n');
      },
    });
    const lock = await waiting;
    await exited(child);
    expect(seen.map((h) => h.pid)).to.deep.equal([child.pid]);
    expect(readLockOwner(tmp.dir)!.command).to.equal('corl compare --shard 2/2');
    lock.release();
  });

  it('a lock of a dead pid, or of a pid now held by a process started at another time, is stale', () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    plant(tmp.dir, { pid: Number(dead) });
    FolderLock.acquire(tmp.dir, { command: 'after a dead one' }).release();
    // pid 1 runs, but not since the recorded start: the pid was reused
    plant(tmp.dir, { pid: 1, procStart: '1' + '0'.repeat(15) });
    FolderLock.acquire(tmp.dir, { command: 'after a reused pid' }).release();
  });

  it('a lock of another host counts as held, and says so', () => {
    plant(tmp.dir, { pid: 12345, host: 'other-host.example' });
    try {
      FolderLock.acquire(tmp.dir, { command: 'corl train' });
      expect.fail('expected CORL_ERR_RUN_LOCKED');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_RUN_LOCKED')).to.equal(true);
      expect((e as Error).message)
        .to.include('pid 12345 on other-host.example')
        .and.include('another host');
    }
  });

  it('a lock of another host is held while its heartbeat refreshes it, stale once it stops; one recording no heartbeat stays held', () => {
    const file = path.join(tmp.dir, LOCK_FILE);
    const other = { pid: 12345, host: 'pod-7f9c.example', heartbeatMs: 10_000 };
    plant(tmp.dir, other);
    // refreshed 50 s ago: under the stale time of max(60 s, 6 heartbeats)
    const recent = new Date(Date.now() - 50_000);
    fs.utimesSync(file, recent, recent);
    expect(FolderLock.tryAcquire(tmp.dir, { command: 'corl compare' })).to.include({ pid: 12345 });
    // refreshed 61 s ago: its holder stopped (a requeued task's node, a deleted pod)
    const old = new Date(Date.now() - 61_000);
    fs.utimesSync(file, old, old);
    const lock = FolderLock.tryAcquire(tmp.dir, { command: 'corl compare (replacement)' });
    expect(lock).to.be.instanceOf(FolderLock);
    expect(readLockOwner(tmp.dir)).to.include({ pid: process.pid, command: 'corl compare (replacement)' });
    (lock as FolderLock).release();
    // a heartbeat of 20 s: stale after 6 beats, 120 s
    plant(tmp.dir, { ...other, heartbeatMs: 20_000 });
    const twoMinutes = new Date(Date.now() - 100_000);
    fs.utimesSync(file, twoMinutes, twoMinutes);
    expect(FolderLock.tryAcquire(tmp.dir, { command: 'corl compare' })).to.include({ pid: 12345 });
    // no heartbeat recorded: nothing tells whether it runs
    plant(tmp.dir, { pid: 12345, host: 'pod-7f9c.example' });
    const year = new Date(Date.now() - 365 * 86_400_000);
    fs.utimesSync(file, year, year);
    expect(FolderLock.tryAcquire(tmp.dir, { command: 'corl compare' })).to.include({ pid: 12345 });
  });

  it("the holder refreshes the lock's modification time, and is told when it finds the lock taken over", async () => {
    const file = path.join(tmp.dir, LOCK_FILE);
    const lost: (LockOwner | undefined)[] = [];
    let told: () => void = () => undefined;
    const gone = new Promise<void>((resolve) => (told = resolve));
    const lock = FolderLock.acquire(tmp.dir, {
      command: 'corl train',
      heartbeatMs: 20,
      onLost: (by) => {
        lost.push(by);
        told();
      },
    });
    expect(readLockOwner(tmp.dir)!.heartbeatMs).to.equal(20);
    fs.utimesSync(file, new Date(0), new Date(0));
    while (fs.statSync(file).mtimeMs === 0) await new Promise((r) => setTimeout(r, 10));
    expect(lost).to.deep.equal([]);
    // another host broke it as stale (this process stalled past its stale time) and took the folder
    replaceLock(tmp.dir, {
      pid: 4242,
      host: 'node-2.example',
      heartbeatMs: 10_000,
      command: 'corl compare --shard 2/2',
    });
    await gone;
    expect(lost.map((o) => o?.pid)).to.deep.equal([4242]);
    lock.release();
    expect(readLockOwner(tmp.dir)!.pid, "the new holder's lock is left alone").to.equal(4242);
  });

  it('a process whose lock was taken over stops with CORL_ERR_RUN_LOCKED and status 75, leaving the new lock', async () => {
    // what the corl binary does first (bin/corl.js): only a command-line entry point stops its process
    const child = spawn(process.execPath, [
      '-e',
      `const { FolderLock, stopProcessOnLostLock } = require(${JSON.stringify(MODULE)});
       stopProcessOnLostLock();
       FolderLock.acquire(${JSON.stringify(tmp.dir)}, { command: 'corl train', heartbeatMs: 20 });
       process.stdout.write('held\\n');
       setInterval(() => undefined, 1000);`,
    ]);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    replaceLock(tmp.dir, {
      pid: 4242,
      host: 'node-2.example',
      heartbeatMs: 10_000,
      command: 'corl compare --shard 1/2',
    });
    await exited(child);
    expect(child.exitCode, stderr).to.equal(75);
    expect(stderr)
      .to.contain('CORL_ERR_RUN_LOCKED')
      .and.contain('taken over by corl compare --shard 1/2 (pid 4242 on node-2.example)');
    expect(stderr).to.not.match(/\n\s+at /);
    expect(readLockOwner(tmp.dir)!.pid).to.equal(4242);
  });

  it('a library user whose lock was taken over keeps running; its next write is refused with CORL_ERR_RUN_LOCKED', async () => {
    const child = spawn(process.execPath, [
      '-e',
      `const { FolderLock } = require(${JSON.stringify(MODULE)});
       const lock = FolderLock.acquire(${JSON.stringify(tmp.dir)}, { command: 'corl train', heartbeatMs: 20 });
       process.stdout.write('held\\n');
       process.stdin.once('data', () => {
         let refusal = 'none';
         try { lock.assertHeld(); } catch (e) { refusal = e.code + ': ' + e.message; }
         process.stdout.write('lost=' + lock.lost + ' ' + refusal + '\\n');
         lock.release();
         process.exit(0);
       });`,
    ]);
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    replaceLock(tmp.dir, {
      pid: 4243,
      host: 'node-3.example',
      heartbeatMs: 10_000,
      command: 'corl compare --shard 2/2',
    });
    // several heartbeats (20 ms each) pass before the child is asked
    await new Promise<void>((resolve) => setTimeout(resolve, 300));
    child.stdin.write('?\n');
    await exited(child);
    expect(child.exitCode, stderr).to.equal(0);
    expect(stdout)
      .to.contain('lost=true CORL_ERR_RUN_LOCKED: ')
      .and.contain('taken over by corl compare --shard 2/2 (pid 4243 on node-3.example)');
    expect(stderr).to.equal('');
    expect(readLockOwner(tmp.dir)!.pid, "release leaves the new holder's lock alone").to.equal(4243);
  });

  it('a process whose locked folder was deleted outright keeps running: the lock just ends', async () => {
    const dir = path.join(tmp.dir, 'gone-folder');
    const child = spawn(process.execPath, [
      '-e',
      `const { FolderLock } = require(${JSON.stringify(MODULE)});
       FolderLock.acquire(${JSON.stringify(dir)}, { command: 'corl train', heartbeatMs: 20 });
       process.stdout.write('held\\n');
       process.stdin.once('data', () => { process.stdout.write('still here\\n'); process.exit(0); });`,
    ]);
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    fs.rmSync(dir, { recursive: true, force: true });
    // several heartbeats (20 ms each) pass before the child is asked whether it still runs
    await new Promise<void>((resolve) => setTimeout(resolve, 300));
    child.stdin.write('?\n');
    await exited(child);
    expect(child.exitCode, stderr).to.equal(0);
    expect(stdout).to.contain('still here');
    expect(stderr).to.equal('');
  });

  it('a damaged lock is a coded error naming the field, and is left in place', () => {
    for (const [text, field] of [
      ['null', '(root)'],
      ['{"pid": -5, "host": "h", "startedAt": "x", "command": "c"}', 'pid'],
      ['{"pid": 5, "host": 7, "startedAt": "x", "command": "c"}', 'host'],
      ['{"pid": 5, "host": "h", "startedAt": "x", "command": "c", "heartbeatMs": 0}', 'heartbeatMs'],
      ['not json', '(root)'],
    ] as const) {
      fs.writeFileSync(path.join(tmp.dir, LOCK_FILE), text);
      expect(() => FolderLock.acquire(tmp.dir, { command: 'c' }))
        .to.throw(/CORL_ERR_RUN_LOCKED/)
        .with.property('message')
        .that.includes(`${LOCK_FILE} ${field}`);
      expect(fs.readFileSync(path.join(tmp.dir, LOCK_FILE), 'utf8')).to.equal(text);
    }
    fs.rmSync(path.join(tmp.dir, LOCK_FILE));
    fs.mkdirSync(path.join(tmp.dir, LOCK_FILE));
    expect(() => FolderLock.acquire(tmp.dir, { command: 'c' })).to.throw(/CORL_ERR_RUN_LOCKED.*expected a lock file/);
  });
});
