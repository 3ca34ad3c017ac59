// Runs untrusted generated Python. `bwrap` isolation (the default; see ./bwrap.ts) runs the harness
// in a bubblewrap sandbox whose init is killed, and with it every process the program made, when
// a limit passes or the run ends. `unsafe-process` isolation is for trusted code on machines
// without bubblewrap: a plain process (as nobody when corl is root) with the same rlimits, an empty
// environment, a fresh folder and the harness's audit hook, none of which the program cannot undo;
// it warns on every instantiation.
//
// Time is enforced from outside, per input: the harness announces each input (`{"s": i}`), and an
// input that has not reported its outcome `timeoutMs` + KILL_GRACE_MS later is killed with the whole
// sandbox, marked `timeout`, and the remaining inputs run in a fresh sandbox. The in-process timer
// stops ordinary Python loops without that restart; the outside timer stops everything else (a loop
// inside C, a blocked signal, a program that kills the harness's timer).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkOptions } from '../../../core/contracts/work';
import { CorlError } from '../../../core/errors';
import { FairGate } from '../../../core/util/fair-queue';
import { bwrapPlan, NOBODY, type BwrapPlan } from './bwrap';
import { HARNESS, type HarnessJob, type HarnessLine } from './harness';

/** How generated code is contained. */
export type Isolation = 'bwrap' | 'unsafe-process';

/** Options of a {@link Sandbox}. */
export interface SandboxOptions {
  /** `auto` and `bwrap`: the bubblewrap sandbox (refused where bwrap is missing); `unsafe-process`: no isolation, a warning per instantiation. */
  readonly isolation: Isolation | 'auto';
  /** Milliseconds of wall-clock time per test input. */
  readonly timeoutMs: number;
  /** Address-space limit of each process in MiB. */
  readonly memoryMb: number;
  /** Programs run at the same time. */
  readonly concurrency: number;
  /** Characters of each output kept. */
  readonly maxOutput: number;
  /** Python interpreter; empty finds one (`/usr/bin/python3` first, readable by an unprivileged user). */
  readonly python: string;
  /** bubblewrap executable; empty: /usr/bin/bwrap, else bwrap on PATH. */
  readonly bwrap?: string;
  /** The harness's audit hook (default on; tests turn it off to check the OS-level layer alone). */
  readonly auditHook?: boolean;
  /** Where warnings go (default: a line on stderr). */
  readonly warn?: (line: string) => void;
  /** Who runs the sandbox, for warnings (a plugin name). */
  readonly owner?: string;
}

/** What one test input gave: an output, or an error marker. */
export type TestOutcome = { readonly out: string } | { readonly err: string };

/** The result of running one program on all its inputs. */
export interface RunResult {
  /** One outcome per input, in order. */
  readonly outcomes: readonly TestOutcome[];
  /** Whether a wall-clock limit killed the sandbox (at least once). */
  readonly killed: boolean;
  /** Sandboxes started (1, plus one per input killed at its limit or ending the interpreter). */
  readonly starts: number;
}

/** Environment of the unsafe process: nothing of the parent's. */
const CLEAN_ENV: Readonly<Record<string, string>> = { PATH: '/usr/bin:/bin', LC_ALL: 'C.UTF-8' };
/** Characters of an error marker kept (the harness writes an exception class name, at most 60). */
const MAX_ERROR = 60;
/** Bytes of stdout read from one sandbox before it is killed. */
const MAX_STDOUT = 4 * 1024 * 1024;
/** How long after its own limit an input is killed from outside (the in-process timer usually answers first). */
export const KILL_GRACE_MS = 500;
/** Start-up allowance of one sandbox (interpreter start and compiling the program), loaded machines included. */
const STARTUP_MS = 10_000;
/** Processes and threads of one bwrap sandbox, its init and the harness included. */
const SANDBOX_PROCESSES = 16;
/** RLIMIT_NPROC of the unsafe mode (per uid on the host, shared by every run). */
const UNSAFE_PROCESSES = 256;
/** How long the pipe may stay open once the sandbox is dead or killed (an unsafe-mode orphan can hold it). */
const DRAIN_MS = 1000;

/** The interpreter to use: the option, else /usr/bin/python3, else python3 on PATH (resolved). */
export function findPython(option: string): string {
  if (option) return option;
  for (const p of ['/usr/bin/python3', '/usr/local/bin/python3']) if (fs.existsSync(p)) return p;
  const r = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8', env: process.env });
  const exe = r.status === 0 ? r.stdout.trim() : '';
  if (!exe)
    throw new CorlError(
      'CORL_ERR_SANDBOX_UNAVAILABLE',
      'expected a python3 interpreter for generated code, got none on this machine',
      { hint: 'install python3 or set the reward option `python` to its path' },
    );
  return exe;
}

/** How one sandbox ended: every outcome in, an input killed at its limit, or the interpreter gone. */
interface Attempt {
  /** Outcomes by input index (relative to the attempt's first input). */
  readonly results: Map<number, TestOutcome>;
  /** The last input announced, -1 when none started. */
  readonly started: number;
  /** `timeout`: `started` overran; `startup`: no input started in time. */
  readonly limit: 'timeout' | 'startup' | null;
  /** stdout exceeded MAX_STDOUT. */
  readonly flood: boolean;
}

/** A pool of sandboxed runs with a concurrency limit. */
export class Sandbox {
  readonly isolation: Isolation;
  private readonly python: string;
  private readonly plan: BwrapPlan | undefined;
  /** The `concurrency` places runs take, served lane by lane (WorkOptions.lane). */
  private readonly gate: FairGate;
  private readonly live = new Set<() => void>();

  constructor(private readonly options: SandboxOptions) {
    this.gate = new FairGate(options.concurrency);
    this.python = findPython(options.python);
    const warn =
      options.warn ??
      ((l: string) => {
        process.stderr.write(l + '\n');
      });
    const who = options.owner ?? 'the code reward';
    if (options.isolation === 'unsafe-process') {
      this.isolation = 'unsafe-process';
      warn(
        `corl: warning: ${who} runs generated code UNISOLATED (isolation "unsafe-process"): it can read your files, reach the network and signal your processes; only rlimits, an empty environment and an audit hook that the code can switch off stand in its way. Install bubblewrap (apt-get install -y bubblewrap) and use isolation "auto".`,
      );
    } else {
      this.isolation = 'bwrap';
      this.plan = bwrapPlan(options.bwrap ?? '', this.python);
      if (!this.plan.processCap) {
        warn(
          `corl: warning: ${who}: bubblewrap cannot run as nobody here (no unprivileged user namespaces, or ${this.plan.python} is not readable by nobody), so the sandbox's processes are uid 0 on the host and RLIMIT_NPROC does not apply; a fork bomb is bounded only by the per-input wall-clock kill.`,
        );
      }
    }
  }

  /**
   * Run `program` on each input; never throws for anything the program does. Runs wait for a place
   * lane by lane (`work.lane`); when `work.signal` aborts, a waiting run leaves the queue and a
   * running one is killed with its sandbox, and the run rejects with the signal's reason.
   */
  async run(
    program: string,
    mode: HarnessJob['mode'],
    entryPoint: string,
    inputs: readonly (readonly string[])[],
    work?: WorkOptions,
  ): Promise<RunResult> {
    const signal = work?.signal;
    const lane = work?.lane ?? '';
    await this.gate.acquire(lane, signal);
    try {
      const outcomes: (TestOutcome | undefined)[] = new Array(inputs.length).fill(undefined);
      let from = 0;
      let killed = false;
      let starts = 0;
      while (from < inputs.length) {
        signal?.throwIfAborted();
        const slice = inputs.slice(from);
        const a = await this.attempt(program, mode, entryPoint, slice, signal);
        signal?.throwIfAborted();
        starts++;
        for (const [k, o] of a.results) outcomes[from + k] = o;
        if (a.results.size === slice.length) break;
        if (a.started < 0) {
          // the interpreter did not reach the first input: the rest are lost either way
          if (a.limit) killed = true;
          break;
        }
        if (!a.results.has(a.started))
          outcomes[from + a.started] = { err: a.limit === 'timeout' ? 'timeout' : a.flood ? 'output' : 'crash' };
        if (a.limit === 'timeout') killed = true;
        // the next inputs get a fresh sandbox
        from += a.started + 1;
      }
      return { outcomes: outcomes.map((o) => o ?? { err: killed ? 'timeout' : 'crash' }), killed, starts };
    } finally {
      this.gate.release(lane);
    }
  }

  /** Kill whatever is still running. */
  close(): void {
    for (const kill of [...this.live]) kill();
    this.live.clear();
  }

  private spawnHarness(): { child: ChildProcess; workDir?: string } {
    const opts = { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] as 'pipe'[] };
    if (this.plan) {
      const p = this.plan;
      const child = spawn(p.bwrap, [...p.args, '--', p.python, '-I', '-S', '-c', HARNESS], {
        ...opts,
        env: {},
        cwd: '/',
        ...(p.runAs !== undefined ? { uid: p.runAs, gid: p.runAs } : {}),
      });
      return { child };
    }
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-sandbox-'));
    if (dropPrivileges()) {
      // as root, still run the program as nobody: it then cannot read root's files or the parent's /proc entries
      fs.chownSync(workDir, NOBODY, NOBODY);
      return {
        child: spawn(
          'setpriv',
          [
            `--reuid=${NOBODY}`,
            `--regid=${NOBODY}`,
            '--clear-groups',
            '--no-new-privs',
            '--',
            this.python,
            '-I',
            '-S',
            '-c',
            HARNESS,
          ],
          { ...opts, cwd: workDir, env: CLEAN_ENV, detached: true },
        ),
        workDir,
      };
    }
    return {
      child: spawn(this.python, ['-I', '-S', '-c', HARNESS], { ...opts, cwd: workDir, env: CLEAN_ENV, detached: true }),
      workDir,
    };
  }

  /** What the harness is told: the program, its inputs and the limits each input and the whole sandbox run under. */
  private jobFor(
    program: string,
    mode: HarnessJob['mode'],
    entryPoint: string,
    inputs: readonly (readonly string[])[],
  ): HarnessJob {
    const timeoutS = this.options.timeoutMs / 1000;
    return {
      program,
      mode,
      entryPoint,
      inputs,
      timeoutS,
      memoryBytes: this.options.memoryMb * 1024 * 1024,
      cpuS: Math.ceil(timeoutS * inputs.length + 1),
      fileBytes: 16 * 1024 * 1024,
      processes: this.plan ? SANDBOX_PROCESSES : UNSAFE_PROCESSES,
      maxOutput: this.options.maxOutput,
      auditHook: this.options.auditHook !== false,
    };
  }

  /** One sandbox on `inputs`, until every outcome is in, an input overruns, the interpreter ends, or `abort` aborts (killed). */
  private attempt(
    program: string,
    mode: HarnessJob['mode'],
    entryPoint: string,
    inputs: readonly (readonly string[])[],
    abort?: AbortSignal,
  ): Promise<Attempt> {
    const job = this.jobFor(program, mode, entryPoint, inputs);
    return new Promise<Attempt>((resolve) => {
      const { child, workDir } = this.spawnHarness();
      const results = new Map<number, TestOutcome>();
      let started = -1;
      let limit: Attempt['limit'] = null;
      let flood = false;
      let buffered = '';
      let bytes = 0;
      let initPid: number | undefined;
      let exited = false;
      let killing = false;
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let drain: NodeJS.Timeout | undefined;
      let backstop: NodeJS.Timeout | undefined;

      const arm = (ms: number, what: Attempt['limit']) => {
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => {
          limit = what;
          kill();
        }, ms);
      };
      // SIGKILL the sandbox's init: the kernel then kills every process of its PID namespace, and bwrap
      // (still its parent) reaps it and exits. Without bwrap, the process group.
      const kill = () => {
        if (killing) return;
        killing = true;
        if (timer) clearTimeout(timer);
        if (this.plan) {
          if (initPid !== undefined && !exited) signal(initPid);
          else if (!exited) child.kill('SIGKILL');
          // bwrap not gone in time (or the init not known yet): bwrap itself, whose death kills the init (--die-with-parent)
          backstop = setTimeout(() => {
            if (!exited) child.kill('SIGKILL');
          }, DRAIN_MS);
        } else if (child.pid !== undefined) signal(-child.pid);
        drain ??= setTimeout(settle, DRAIN_MS);
      };
      const settle = () => {
        if (settled) return;
        settled = true;
        this.live.delete(kill);
        abort?.removeEventListener('abort', kill);
        for (const t of [timer, drain, backstop]) if (t) clearTimeout(t);
        if (!exited) {
          // only an unsafe-mode orphan can still hold the pipe here; stop reading it
          if (this.plan) child.kill('SIGKILL');
          else if (child.pid !== undefined) signal(-child.pid);
        }
        child.stdout?.destroy();
        child.stderr?.destroy();
        child.stdio[3]?.destroy();
        if (buffered.trim()) onLine(buffered);
        if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
        resolve({ results, started, limit, flood });
      };
      const onLine = (line: string) => {
        let v: HarnessLine;
        try {
          v = JSON.parse(line) as HarnessLine;
        } catch {
          return;
        }
        if (!v || typeof v !== 'object') return;
        // A program can write harness-shaped lines to the real stdout; it can only forge its own outcomes
        // (which it could produce honestly anyway), and inputs only start in order, once each.
        if (typeof v.s === 'number' && v.s === started + 1 && v.s < inputs.length && !killing) {
          started = v.s;
          arm(this.options.timeoutMs + KILL_GRACE_MS, 'timeout');
        } else if (typeof v.i === 'number' && v.i === started && !results.has(v.i)) {
          // The harness truncates what it prints, but a program can print an outcome line of its own
          // (of up to MAX_STDOUT characters): the limits hold here, whoever wrote the line.
          if (typeof v.out === 'string') results.set(v.i, { out: v.out.slice(0, this.options.maxOutput) });
          else if (typeof v.err === 'string') results.set(v.i, { err: v.err.slice(0, MAX_ERROR) });
          else return;
          if (timer) clearTimeout(timer);
          // every outcome in: end the sandbox now, orphans included
          if (results.size === inputs.length) kill();
        }
      };

      this.live.add(kill);
      abort?.addEventListener('abort', kill, { once: true });
      arm(STARTUP_MS, 'startup');
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        if (settled) return;
        bytes += chunk.length;
        if (bytes > MAX_STDOUT) {
          flood = true;
          kill();
          return;
        }
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          onLine(buffered.slice(0, nl));
          buffered = buffered.slice(nl + 1);
        }
      });
      child.stderr!.resume();
      const info = child.stdio[3] as import('node:stream').Readable | null;
      // a kill asked for before the init was known went to bwrap; nothing more to do then
      if (info && this.plan) watchInitPid(info, (pid) => (initPid ??= pid));
      child.on('error', () => {
        exited = true;
        settle();
      });
      child.on('exit', () => {
        exited = true;
        // the sandbox is gone; its pipes close at once unless an unsafe-mode orphan holds them
        drain ??= setTimeout(settle, DRAIN_MS);
      });
      child.on('close', settle);
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(JSON.stringify(job));
    });
  }
}

let setprivWorks: boolean | undefined;
function dropPrivileges(): boolean {
  if (setprivWorks === undefined) {
    setprivWorks =
      process.getuid?.() === 0 &&
      spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', '/bin/true'], {
        env: CLEAN_ENV,
      }).status === 0;
  }
  return setprivWorks;
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** Calls `found` with the sandbox init's pid once bwrap's --info-fd JSON names it. */
function watchInitPid(info: import('node:stream').Readable, found: (pid: number) => void): void {
  let text = '';
  let known = false;
  info.setEncoding('utf8');
  info.on('data', (c: string) => {
    text += c;
    const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
    if (m && !known) {
      known = true;
      found(Number(m[1]));
    }
  });
  info.on('error', () => undefined);
}
