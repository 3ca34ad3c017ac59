// Runs untrusted generated Python in a separate process, with OS-level containment where the
// machine allows it. `namespace` isolation (Linux, root or user namespaces): a new mount, network and
// PID namespace (no network at all, a fresh /proc, a private tmpfs over /tmp, /var/tmp and /dev/shm),
// the interpreter running as nobody with no capabilities and no new privileges, an empty
// environment, and kernel rlimits on memory, CPU, file size and open files. `process` isolation
// (the fallback): a fresh temporary folder, an empty environment and the same rlimits. Both add the
// harness's audit hook (no sockets, no subprocesses, no writes outside the folder, no /proc) and both
// are killed, process group and all, when the wall-clock limit passes.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CorlError } from '../../../core/errors';
import { HARNESS, type HarnessJob, type HarnessLine } from './harness';

/** How strongly generated code is contained. */
export type Isolation = 'namespace' | 'process';

/** Options of a {@link Sandbox}. */
export interface SandboxOptions {
  /** `auto` picks `namespace` when it works on this machine, else `process`. */
  readonly isolation: Isolation | 'auto';
  /** Seconds of wall-clock time per test input. */
  readonly timeoutMs: number;
  /** Address-space limit of the interpreter in MiB. */
  readonly memoryMb: number;
  /** Programs run at the same time. */
  readonly concurrency: number;
  /** Characters of each output kept. */
  readonly maxOutput: number;
  /** Python interpreter; empty finds one (`/usr/bin/python3` first, readable by an unprivileged user). */
  readonly python: string;
  /** The harness's audit hook (default on; tests turn it off to check the OS-level layer alone). */
  readonly auditHook?: boolean;
}

/** What one test input gave: an output, or an error marker. */
export type TestOutcome = { readonly out: string } | { readonly err: string };

/** The result of running one program on all its inputs. */
export interface RunResult {
  /** One outcome per input, in order. */
  readonly outcomes: readonly TestOutcome[];
  /** Whether the wall-clock limit killed the process. */
  readonly killed: boolean;
}

/** Environment of the sandboxed process: nothing of the parent's. */
const CLEAN_ENV: Readonly<Record<string, string>> = { PATH: '/usr/bin:/bin', LC_ALL: 'C.UTF-8' };
/** Bytes of stdout read from one run before it is killed. */
const MAX_STDOUT = 4 * 1024 * 1024;
const NOBODY = 65534;

const SETUP = [
  'mount -t tmpfs -o size=64m,mode=0755 corl /tmp',
  `mkdir -m 0700 /tmp/work && chown ${NOBODY}:${NOBODY} /tmp/work`,
  '{ mount -t tmpfs -o size=1m,mode=0755 corl /var/tmp 2>/dev/null; mount -t tmpfs -o size=1m,mode=0755 corl /dev/shm 2>/dev/null; true; }',
  'cd /tmp/work',
  `exec setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all -- "$1" -I -S -c "$2"`,
].join(' && ');

const UNSHARE_ARGS = ['--mount', '--net', '--pid', '--fork', '--kill-child', '--mount-proc', '--propagation', 'private', '/bin/sh', '-c', SETUP, 'corl-sandbox'];

/** The interpreter to use: the option, else /usr/bin/python3, else python3 on PATH (resolved). */
export function findPython(option: string): string {
  if (option) return option;
  for (const p of ['/usr/bin/python3', '/usr/local/bin/python3']) if (fs.existsSync(p)) return p;
  const r = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8', env: process.env });
  const exe = r.status === 0 ? r.stdout.trim() : '';
  if (!exe) throw new CorlError('CORL_ERR_SANDBOX_UNAVAILABLE', 'expected a python3 interpreter for generated code, got none on this machine', { hint: 'install python3 or set the reward option `python` to its path' });
  return exe;
}

const namespaceSupport = new Map<string, boolean>();

/** Whether namespace isolation works here (tried once per interpreter with a trivial program). */
export function namespaceAvailable(python: string): boolean {
  let ok = namespaceSupport.get(python);
  if (ok === undefined) {
    const r = spawnSync('unshare', [...UNSHARE_ARGS, python, 'import os; print(os.getuid())'], { encoding: 'utf8', env: CLEAN_ENV, timeout: 10_000 });
    ok = r.status === 0 && r.stdout.trim() === String(NOBODY);
    namespaceSupport.set(python, ok);
  }
  return ok;
}

/** A pool of sandboxed runs with a concurrency limit. */
export class Sandbox {
  readonly isolation: Isolation;
  private readonly python: string;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly children = new Set<number>();

  constructor(private readonly options: SandboxOptions) {
    this.python = findPython(options.python);
    if (options.isolation === 'process') this.isolation = 'process';
    else if (namespaceAvailable(this.python)) this.isolation = 'namespace';
    else if (options.isolation === 'namespace') {
      throw new CorlError('CORL_ERR_SANDBOX_UNAVAILABLE', 'expected namespace isolation (unshare with mount, network and PID namespaces, setpriv), got a machine where it does not work', {
        hint: 'run as root or enable unprivileged user namespaces, or set the option `isolation` to "auto" or "process"',
      });
    } else this.isolation = 'process';
  }

  /** Run `program` on each input; never throws for anything the program does. */
  async run(program: string, mode: HarnessJob['mode'], entryPoint: string, inputs: readonly (readonly string[])[]): Promise<RunResult> {
    await this.acquire();
    try {
      return await this.runOne(program, mode, entryPoint, inputs);
    } finally {
      this.release();
    }
  }

  /** Kill whatever is still running. */
  close(): void {
    for (const pid of this.children) killGroup(pid);
    this.children.clear();
  }

  private acquire(): Promise<void> {
    if (this.running < Math.max(1, this.options.concurrency)) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(() => { this.running++; resolve(); }));
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  private runOne(program: string, mode: HarnessJob['mode'], entryPoint: string, inputs: readonly (readonly string[])[]): Promise<RunResult> {
    const timeoutS = this.options.timeoutMs / 1000;
    const job: HarnessJob = {
      program, mode, entryPoint, inputs, timeoutS,
      memoryBytes: this.options.memoryMb * 1024 * 1024,
      cpuS: Math.ceil(timeoutS * inputs.length + 1),
      fileBytes: 16 * 1024 * 1024,
      maxOutput: this.options.maxOutput,
      auditHook: this.options.auditHook !== false,
    };
    // every input may use its whole limit, plus the interpreter's start
    const wallMs = this.options.timeoutMs * inputs.length + 3000;
    let workDir: string | undefined;
    let command: string;
    let args: string[];
    if (this.isolation === 'namespace') {
      command = 'unshare';
      args = [...UNSHARE_ARGS, this.python, HARNESS];
    } else {
      workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-sandbox-'));
      if (dropPrivileges()) {
        // as root, still run the program as nobody: it then cannot read root's files or the parent's /proc entries
        fs.chownSync(workDir, NOBODY, NOBODY);
        command = 'setpriv';
        args = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--no-new-privs', '--', this.python, '-I', '-S', '-c', HARNESS];
      } else {
        command = this.python;
        args = ['-I', '-S', '-c', HARNESS];
      }
    }
    return new Promise<RunResult>((resolve) => {
      const lines: HarnessLine[] = [];
      let buffered = '';
      let bytes = 0;
      let killed = false;
      let settled = false;
      const started = performance.now();
      const child = spawn(command, args, { cwd: workDir ?? '/', env: CLEAN_ENV, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      const pid = child.pid;
      if (pid !== undefined) this.children.add(pid);
      const timer = setTimeout(() => { killed = true; if (pid !== undefined) killGroup(pid); }, wallMs);
      const finish = (_code?: number | null | Error, signal?: NodeJS.Signals | null): void => {
        if (settled) return;
        // killed by the CPU limit (SIGXCPU, then SIGKILL one second later): a time limit too. Through
        // unshare the signal is not visible, so a run that used up its CPU budget in wall time counts.
        if (signal === 'SIGXCPU' || performance.now() - started >= job.cpuS * 1000) killed = true;
        settled = true;
        clearTimeout(timer);
        if (pid !== undefined) { killGroup(pid); this.children.delete(pid); }
        if (buffered.trim()) parseLine(buffered, lines);
        if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
        const outcomes: TestOutcome[] = inputs.map((_, i) => {
          const l = lines.find((x) => x.i === i);
          if (l && typeof l.out === 'string') return { out: l.out };
          if (l && typeof l.err === 'string') return { err: l.err };
          return { err: killed ? 'timeout' : 'crash' };
        });
        resolve({ outcomes, killed });
      };
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        bytes += chunk.length;
        if (bytes > MAX_STDOUT) { killed = true; if (pid !== undefined) killGroup(pid); return; }
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          parseLine(buffered.slice(0, nl), lines);
          buffered = buffered.slice(nl + 1);
        }
      });
      child.stderr.resume();
      child.on('error', finish);
      child.on('close', finish);
      child.stdin.on('error', () => undefined);
      child.stdin.end(JSON.stringify(job));
    });
  }
}

let setprivWorks: boolean | undefined;
function dropPrivileges(): boolean {
  if (setprivWorks === undefined) {
    setprivWorks = process.getuid?.() === 0 && spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', '/bin/true'], { env: CLEAN_ENV }).status === 0;
  }
  return setprivWorks;
}

function parseLine(line: string, into: HarnessLine[]): void {
  try {
    const v = JSON.parse(line) as HarnessLine;
    if (v && typeof v.i === 'number' && !into.some((x) => x.i === v.i)) into.push(v);
  } catch {
    // not a harness line. A program that writes harness-shaped lines to the real stdout can only
    // forge its own outcomes, which it could produce honestly anyway
  }
}

function killGroup(pid: number): void {
  try { process.kill(-pid, 'SIGKILL'); } catch { /* already gone */ }
}
