// A pool of worker threads running the symbolic engine, with a hard time limit per comparison. The
// limit is enforced from this thread: a worker that has not answered in time is terminated (which
// stops even a synchronous loop inside the engine) and replaced. Python graders' signal-based
// timeouts fail in threads; this one cannot.
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { CorlError } from '../../core/errors';
import type { SymbolicRequest, SymbolicResponse } from './symbolic-worker';

/** Options of a {@link SymbolicPool}. */
export interface SymbolicPoolOptions {
  /** Worker threads (each loads the engine once, ~0.3 s). */
  readonly workers: number;
  /** Hard limit per comparison, in milliseconds; a comparison that exceeds it is "not equal". */
  readonly timeoutMs: number;
  /** Relative tolerance for constant expressions. */
  readonly tolerance: number;
  /** Heap limit of each worker, in MiB (an expression that explodes kills its worker, not the run). */
  readonly heapMb: number;
  /** Worker script (tests substitute a slow one); defaults to the compiled symbolic-worker.js. */
  readonly script?: string;
}

/** Counters of a pool's life, for metrics and tests. */
export interface SymbolicPoolStats {
  /** Comparisons answered by a worker. */
  answered: number;
  /** Comparisons cut off by the time limit. */
  timeouts: number;
  /** Workers that died while comparing (out of memory, crash). */
  crashes: number;
  /** Workers started. */
  started: number;
}

interface Pending {
  readonly id: number;
  readonly a: string;
  readonly b: string;
  readonly resolve: (v: boolean) => void;
  readonly reject: (e: unknown) => void;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  busy?: Pending;
  timer?: NodeJS.Timeout;
  dead: boolean;
}

/** Consecutive workers that may die before answering anything before the pool gives up. */
const MAX_START_FAILURES = 3;

export class SymbolicPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private startFailures = 0;
  private broken?: CorlError;
  private closed = false;
  readonly stats: SymbolicPoolStats = { answered: 0, timeouts: 0, crashes: 0, started: 0 };

  constructor(private readonly options: SymbolicPoolOptions) {}

  /** Whether two keys are equal according to the engine; false when it cannot tell or time runs out. */
  compare(a: string, b: string): Promise<boolean> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, a, b, resolve, reject });
      this.closed = false;
      this.dispatch();
    });
  }

  /** Number of live workers. */
  get size(): number {
    return this.slots.length;
  }

  /** Terminate every worker; comparisons still waiting resolve to false. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    for (const p of this.queue.splice(0)) p.resolve(false);
    await Promise.all(
      slots.map(async (s) => {
        s.dead = true;
        if (s.timer) clearTimeout(s.timer);
        s.busy?.resolve(false);
        s.busy = undefined;
        await s.worker.terminate().catch(() => undefined);
      }),
    );
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (slot.ready && !slot.busy && !slot.dead) this.run(slot, this.queue.shift()!);
    }
    const starting = this.slots.filter((s) => !s.ready && !s.dead).length;
    if (this.queue.length > starting && this.slots.length < Math.max(1, this.options.workers)) this.spawn();
    this.updateRefs();
  }

  private spawn(): void {
    const script = this.options.script ?? path.join(__dirname, 'symbolic-worker.js');
    const worker = new Worker(script, {
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
      stdout: true,
      stderr: true,
    });
    this.stats.started++;
    // the engine may print warnings; they must not reach the CLI's JSON output
    worker.stdout.resume();
    worker.stderr.resume();
    const slot: Slot = { worker, ready: false, dead: false };
    this.slots.push(slot);
    worker.on('message', (msg: SymbolicResponse | { ready: true }) => {
      if ('ready' in msg) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const p = slot.busy;
      if (!p || p.id !== msg.id) return;
      if (slot.timer) clearTimeout(slot.timer);
      slot.busy = undefined;
      slot.timer = undefined;
      this.startFailures = 0;
      this.stats.answered++;
      p.resolve(msg.equal === true);
      this.dispatch();
    });
    const onDeath = (err?: unknown): void => {
      if (slot.dead) return;
      slot.dead = true;
      if (slot.timer) clearTimeout(slot.timer);
      this.remove(slot);
      if (slot.busy) {
        this.stats.crashes++;
        slot.busy.resolve(false);
        slot.busy = undefined;
      } else if (!slot.ready) {
        // died before it could load the engine: an installation problem, not a hard expression
        if (++this.startFailures >= MAX_START_FAILURES) {
          this.broken = new CorlError(
            'CORL_ERR_ANSWERS_SYMBOLIC',
            `expected the symbolic worker to start, got ${describe(err)}`,
            { cause: err },
          );
          for (const p of this.queue.splice(0)) p.reject(this.broken);
          return;
        }
      }
      this.dispatch();
    };
    worker.on('error', onDeath);
    worker.on('exit', (code) => onDeath(new Error(`worker exited with code ${code}`)));
  }

  private run(slot: Slot, p: Pending): void {
    slot.busy = p;
    slot.timer = setTimeout(() => {
      if (slot.busy !== p || slot.dead) return;
      this.stats.timeouts++;
      slot.dead = true;
      slot.busy = undefined;
      this.remove(slot);
      p.resolve(false);
      void slot.worker.terminate().catch(() => undefined);
      this.dispatch();
    }, this.options.timeoutMs);
    const req: SymbolicRequest = { id: p.id, a: p.a, b: p.b, tolerance: this.options.tolerance };
    slot.worker.postMessage(req);
  }

  private remove(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
  }

  /** Idle workers must not keep the process alive; busy ones must. */
  private updateRefs(): void {
    const waiting = this.queue.length > 0;
    for (const s of this.slots) {
      if (s.busy || (waiting && !s.ready)) s.worker.ref();
      else s.worker.unref();
    }
  }
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
