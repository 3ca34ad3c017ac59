// The long-lived Python process behind `corl:python`: started once, spoken to over its stdin and
// stdout in the line framing host.py documents (one JSON object per line), one request at a time.
// It runs in a session and process group of its own, so that a Ctrl-C in the terminal reaches corl,
// which closes it, rather than interrupting the function mid-call. On Linux the process corl starts
// is host.py's guard: it forks the host, relays the pipe and, told to end (SIGTERM, the end of its
// stdin, corl's death), kills every process below it, daemons that left the session included;
// elsewhere corl kills the process group. Every line it sends is checked by messages.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError, type ErrorCode } from '../../../core/errors';
import { readHostMessage, resultsProblem, type HostError, type HostReady } from './messages';

export type { HostError, HostReady } from './messages';

/** The host script (shipped in the package beside the compiled code's source folder). */
export const HOST_SCRIPT = findHost();

function findHost(): string {
  // dist/plugins/rewards/python/process.js → plugins/rewards/python/host.py (source tree, package files)
  const candidates = [
    path.join(__dirname, 'host.py'),
    path.resolve(__dirname, '..', '..', '..', '..', 'plugins', 'rewards', 'python', 'host.py'),
  ];
  return candidates.find((p) => fs.existsSync(p)) ?? candidates[1]!;
}

/** How to start and talk to one host. */
export interface HostOptions {
  /** The interpreter as configured (a name on PATH, or a path already resolved against the config folder). */
  readonly python: string;
  /** Setup handed to host.py (module, function, signature, format, withheld). */
  readonly setup: Readonly<Record<string, unknown>>;
  /** Working folder of the process (the config's folder). */
  readonly cwd: string;
  /** Limit of the import and of each request, in milliseconds. */
  readonly timeoutMs: number;
  /** The option a message names, by problem: `where` of each coded error. */
  readonly where: (option: 'python' | 'module' | 'function' | 'timeoutSeconds') => string;
  /** What the function is called in messages (`reward.py:reward_func`). */
  readonly name: string;
  /** Where the process's stderr goes, line by line (undefined: kept only for error messages). */
  readonly forward?: (line: string) => void;
}

/** Characters of stderr kept for error messages. */
const STDERR_TAIL = 16_384;
/** The longest line accepted from the host (a larger one is not the protocol). */
const MAX_LINE = 256 * 1024 * 1024;
/** How long the interpreter may take to start and run the host's first line (a loaded machine included). */
const STARTUP_MS = 30_000;
/** How long a closing host may take to leave on its own before it is killed. */
const CLOSE_MS = 2000;

/** Every live host (its pid, and whether it is guarded), ended if corl exits without closing it. */
const LIVE = new Map<number, boolean>();
let exitHook = false;

function signalTo(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function killGroup(pid: number | undefined): void {
  if (pid !== undefined) signalTo(-pid, 'SIGKILL');
}

/** What each kind of host error is, and the option it names. */
const ERROR_CODES: Readonly<Record<HostError['kind'], readonly [ErrorCode, 'module' | 'function' | 'python']>> = {
  import: ['CORL_ERR_PYTHON_IMPORT', 'module'],
  function: ['CORL_ERR_PYTHON_FUNCTION', 'function'],
  withheld: ['CORL_ERR_PYTHON_FUNCTION', 'function'],
  call: ['CORL_ERR_PYTHON_FUNCTION', 'function'],
  interpreter: ['CORL_ERR_PYTHON_INTERPRETER', 'python'],
  output: ['CORL_ERR_PYTHON_OUTPUT', 'function'],
  raised: ['CORL_ERR_PYTHON_RAISED', 'function'],
};

interface Pending {
  readonly id: number;
  readonly calls: readonly Readonly<Record<string, unknown>>[];
  readonly describe: (call: number) => string;
  resolve(v: unknown[]): void;
  reject(e: unknown): void;
}

/** A request refused unsent because its host had already failed (a timeout or a crash of an earlier request). */
export class HostGone extends Error {
  constructor(readonly failure: CorlError) {
    super(failure.message);
  }
}

/** One running host.py. Use {@link PythonHost.start}; `request` answers or throws a coded error. */
export class PythonHost {
  private readonly child: ChildProcess;
  private buffer: Buffer[] = [];
  private buffered = 0;
  private stderrTail = '';
  private stderrLine = '';
  private pending: Pending | undefined;
  private greeted = false;
  /** The host runs under host.py's guard (Linux), which ends its whole tree on SIGTERM. */
  private guarded = false;
  private readyInfo: HostReady | undefined;
  private onReady: ((e?: unknown) => void) | undefined;
  private onHello: (() => void) | undefined;
  private nextId = 1;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private failure: CorlError | undefined;
  private readonly exited: Promise<void>;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly o: HostOptions) {
    this.child = spawn(o.python, ['-u', HOST_SCRIPT, JSON.stringify(o.setup)], {
      cwd: o.cwd,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONHASHSEED: '0', PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' },
    });
    if (this.child.pid !== undefined) {
      LIVE.set(this.child.pid, false);
      if (!exitHook) {
        exitHook = true;
        // A guard told SIGTERM ends its whole tree; a SIGKILL of its group would leave the daemons.
        process.once('exit', () => {
          for (const [pid, guarded] of LIVE) {
            if (guarded) signalTo(pid, 'SIGTERM');
            else killGroup(pid);
          }
        });
      }
    }
    this.exited = new Promise((resolve) => {
      this.child.once('close', () => resolve());
      this.child.once('error', () => resolve());
    });
    this.child.once('error', (e: NodeJS.ErrnoException) => this.fail(this.spawnError(e)));
    this.child.once('exit', (code, signal) => {
      this.exit = { code, signal };
      if (this.child.pid !== undefined) LIVE.delete(this.child.pid);
      // The group may outlive its leader (a forked child of an unguarded host): end it too.
      killGroup(this.child.pid);
      // A process that escaped the kill and holds the pipe's other ends must not keep close() waiting.
      setTimeout(() => {
        this.child.stdout?.destroy();
        this.child.stderr?.destroy();
      }, CLOSE_MS).unref();
    });
    this.child.once('close', () => {
      if (this.stderrLine && this.o.forward) this.o.forward(this.stderrLine);
      this.stderrLine = '';
      this.fail(this.exitError());
    });
    this.child.stdout!.on('data', (d: Buffer) => this.onData(d));
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (d: string) => this.onStderr(d));
    this.child.stdin!.on('error', () => {
      // EPIPE when the process died: the exit handler reports it.
    });
    this.idle();
  }

  /** Start a host and wait until it has imported the module (coded errors for every way that fails). */
  static async start(o: HostOptions): Promise<PythonHost> {
    const host = new PythonHost(o);
    await host.handshake();
    return host;
  }

  /** What the host said when it was ready. */
  get ready(): HostReady {
    return this.readyInfo!;
  }

  /** Whether the process is gone or failed (a new host is needed). */
  get dead(): boolean {
    return this.failure !== undefined || this.exit !== undefined;
  }

  /**
   * Send one request of calls; resolves with one result per call, in order. Requests are served one
   * at a time. `what` names the request in a timeout, `describe` a call in the function's errors.
   */
  request(
    calls: readonly Readonly<Record<string, unknown>>[],
    what: string,
    describe: (call: number) => string,
  ): Promise<unknown[]> {
    const run = this.queue.then(() => this.send(calls, what, describe));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** End the process (and its tree): EOF on its stdin, then a kill if it does not leave in time. */
  async close(): Promise<void> {
    if (!this.exit) {
      if (this.pending) this.kill();
      else this.child.stdin!.end();
      const timer = setTimeout(() => this.kill(), CLOSE_MS);
      await this.exited;
      clearTimeout(timer);
    }
    killGroup(this.child.pid);
    this.fail(
      new CorlError(
        'CORL_ERR_PYTHON_EXITED',
        `expected a running Python process for ${this.o.name}, got one already closed`,
        { where: this.o.where('function') },
      ),
    );
  }

  /**
   * End the host and everything it started: a guard is told SIGTERM (it kills its tree, then leaves),
   * with the group's SIGKILL after CLOSE_MS should it not; an unguarded host's group is killed at once.
   */
  private kill(): void {
    const pid = this.child.pid;
    if (pid === undefined || this.exit) return;
    if (!this.guarded) return killGroup(pid);
    signalTo(pid, 'SIGTERM');
    setTimeout(() => {
      if (!this.exit) killGroup(pid);
    }, CLOSE_MS).unref();
  }

  private handshake(): Promise<void> {
    return new Promise((resolve, reject) => {
      // The interpreter's own start (before the host's hello) gets a fixed allowance, loaded machines
      // included; the import is held to timeoutSeconds from the hello on.
      let timer = setTimeout(() => this.startTimeout(STARTUP_MS, 'start'), STARTUP_MS);
      this.onHello = () => {
        clearTimeout(timer);
        timer = setTimeout(() => this.startTimeout(this.o.timeoutMs, 'import'), this.o.timeoutMs);
      };
      this.onReady = (e?: unknown) => {
        clearTimeout(timer);
        this.onReady = undefined;
        this.onHello = undefined;
        this.idle();
        if (e === undefined) resolve();
        else {
          this.kill();
          reject(e);
        }
      };
      if (this.failure) this.onReady(this.failure);
    });
  }

  private startTimeout(ms: number, phase: 'start' | 'import'): void {
    this.kill();
    this.fail(
      phase === 'start'
        ? new CorlError(
            'CORL_ERR_PYTHON_INTERPRETER',
            `expected "${this.o.python}" to start corl's Python host within ${ms / 1000} s, got no word from it${this.lastStderr()}`,
            { where: this.o.where('python') },
          )
        : new CorlError(
            'CORL_ERR_PYTHON_TIMEOUT',
            `expected ${String(this.o.setup.module)} to be imported within ${ms / 1000} s, got no answer${this.lastStderr()}`,
            { where: this.o.where('timeoutSeconds') },
          ),
    );
  }

  private send(
    calls: readonly Readonly<Record<string, unknown>>[],
    what: string,
    describe: (call: number) => string,
  ): Promise<unknown[]> {
    // The process failed while this request waited its turn: it was never sent, and a fresh host may answer it.
    if (this.failure) return Promise.reject(new HostGone(this.failure));
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.kill();
        this.fail(
          new CorlError(
            'CORL_ERR_PYTHON_TIMEOUT',
            `expected ${this.o.name} to answer ${what} within ${this.o.timeoutMs / 1000} s, got no answer${this.lastStderr()}`,
            { where: this.o.where('timeoutSeconds') },
          ),
        );
      }, this.o.timeoutMs);
      this.pending = {
        id,
        calls,
        describe,
        resolve: (v) => {
          clearTimeout(timer);
          this.pending = undefined;
          this.idle();
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          this.pending = undefined;
          this.idle();
          reject(e);
        },
      };
      this.busy();
      this.child.stdin!.write(JSON.stringify({ id, calls }) + '\n');
    });
  }

  /** Keep the event loop alive only while corl waits for an answer. */
  private busy(): void {
    this.child.ref();
    for (const s of [this.child.stdout, this.child.stderr, this.child.stdin]) (s as { ref?: () => void })?.ref?.();
  }

  private idle(): void {
    if (this.pending || this.onReady) return;
    this.child.unref();
    for (const s of [this.child.stdout, this.child.stderr, this.child.stdin]) (s as { unref?: () => void })?.unref?.();
  }

  private onData(d: Buffer): void {
    if (this.failure) {
      this.buffer = [];
      this.buffered = 0;
      return;
    }
    let start = 0;
    for (let nl = d.indexOf(10); nl !== -1; nl = d.indexOf(10, start)) {
      this.buffer.push(d.subarray(start, nl));
      const line = Buffer.concat(this.buffer).toString('utf8');
      this.buffer = [];
      this.buffered = 0;
      start = nl + 1;
      this.onLine(line);
    }
    if (start < d.length) {
      this.buffer.push(d.subarray(start));
      this.buffered += d.length - start;
      if (this.buffered > MAX_LINE) this.protocol(`a line longer than ${MAX_LINE} bytes`);
    }
  }

  /** One line from the host: a message of the protocol, in the state where it may come, or a protocol failure. */
  private onLine(line: string): void {
    if (this.failure) return; // a failed host's last words are not read
    const msg = readHostMessage(line);
    if (typeof msg === 'string') return this.protocol(msg);
    if ('hello' in msg) {
      if (this.greeted) return this.protocol('a second "hello"');
      this.greeted = true;
      this.guarded = msg.hello.guard === true;
      if (this.child.pid !== undefined && LIVE.has(this.child.pid)) LIVE.set(this.child.pid, this.guarded);
      return this.onHello?.();
    }
    if (!this.greeted) return this.protocol(`${JSON.stringify(line.slice(0, 80))} before "hello"`);
    if ('ready' in msg || 'fatal' in msg) {
      if (this.readyInfo) return this.protocol(`a "${'ready' in msg ? 'ready' : 'fatal'}" message after "ready"`);
      if ('fatal' in msg) return this.fail(this.hostError(msg.fatal, 'the import'));
      this.readyInfo = msg.ready;
      return this.onReady?.();
    }
    const p = this.pending;
    if (!this.readyInfo || !p || msg.id !== p.id)
      return this.protocol(`an answer to no request (${JSON.stringify(line.slice(0, 80))})`);
    if ('error' in msg) {
      if (msg.call >= p.calls.length)
        return this.protocol(`an error of call ${msg.call} in a request of ${p.calls.length} calls`);
      return p.reject(this.hostError(msg.error, p.describe(msg.call)));
    }
    const problem = resultsProblem(msg.results, p.calls);
    if (problem) return this.protocol(`${problem} (one result per call, one reward per completion)`);
    p.resolve([...msg.results]);
  }

  private onStderr(d: string): void {
    this.stderrTail = (this.stderrTail + d).slice(-STDERR_TAIL);
    if (!this.o.forward) return;
    const lines = (this.stderrLine + d).split('\n');
    this.stderrLine = lines.pop() ?? '';
    // A line that never ends (a flood without newlines) is passed on in pieces, never held whole.
    if (this.stderrLine.length > STDERR_TAIL) {
      lines.push(this.stderrLine);
      this.stderrLine = '';
    }
    for (const l of lines) this.o.forward(l);
  }

  /** The last non-empty line the process wrote to stderr, as a message suffix. */
  private lastStderr(): string {
    const last = this.stderrTail
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .pop();
    return last ? `; its last line on stderr: ${last.slice(0, 300)}` : '';
  }

  private protocol(what: string): void {
    this.kill();
    this.fail(
      new CorlError(
        'CORL_ERR_PYTHON_EXITED',
        `expected corl's protocol from the Python process of ${this.o.name}, got ${what}${this.lastStderr()}`,
        { where: this.o.where('function') },
      ),
    );
  }

  private hostError(e: HostError, during: string): CorlError {
    const at = e.where ? ` (at ${e.where})` : '';
    const [code, option] = ERROR_CODES[e.kind];
    const message =
      e.kind === 'raised'
        ? `expected ${this.o.name} to return rewards (${during}), got ${e.last}${at}`
        : e.kind === 'import'
          ? `expected ${this.o.setup.module} to import, got ${e.last}${at}`
          : `expected ${e.kind === 'output' ? `a usable return from ${this.o.name} (${during})` : `a function corl can call`}, got: ${e.last}`;
    return new CorlError(code, message, { where: this.o.where(option) });
  }

  private spawnError(e: NodeJS.ErrnoException): CorlError {
    return new CorlError(
      'CORL_ERR_PYTHON_INTERPRETER',
      `expected to start the Python interpreter "${this.o.python}", got ${e.code === 'ENOENT' ? 'no such program' : e.code === 'EACCES' ? 'permission denied' : e.message}`,
      { where: this.o.where('python') },
    );
  }

  private exitError(): CorlError {
    const how = this.exit?.signal ? `killed by ${this.exit.signal}` : `exit code ${this.exit?.code ?? 'unknown'}`;
    if (!this.greeted)
      return new CorlError(
        'CORL_ERR_PYTHON_INTERPRETER',
        `expected "${this.o.python}" to run corl's Python host (Python 3.8 or later), got ${how}${this.lastStderr()}`,
        { where: this.o.where('python') },
      );
    if (!this.readyInfo)
      return new CorlError(
        'CORL_ERR_PYTHON_IMPORT',
        `expected ${String(this.o.setup.module)} to import, got the process ended (${how})${this.lastStderr()}`,
        { where: this.o.where('module') },
      );
    return new CorlError(
      'CORL_ERR_PYTHON_EXITED',
      `expected ${this.o.name} to answer, got the Python process ended (${how})${this.lastStderr()}`,
      { where: this.o.where('function') },
    );
  }

  /** Record the first failure and hand it to whoever waits (the handshake or the pending request). */
  private fail(e: CorlError): void {
    if (!this.failure) this.failure = e;
    const err = this.failure;
    if (this.onReady) this.onReady(err);
    if (this.pending) this.pending.reject(err);
  }
}
