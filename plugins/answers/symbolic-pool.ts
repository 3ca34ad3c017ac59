// A pool of worker threads running the symbolic engine, with a hard time limit per comparison. The
// limit is enforced from this thread: a worker that has not answered in time is terminated (which
// stops even a synchronous loop inside the engine) and replaced. Python graders' signal-based
// timeouts fail in threads; this one cannot.
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { WorkOptions } from '../../core/contracts/work';
import { CorlError } from '../../core/errors';
import { FairQueue } from '../../core/util/fair-queue';
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
  readonly lane: string;
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
  /** Comparisons waiting for a worker, served lane by lane (WorkOptions.lane). */
  private readonly queue = new FairQueue<Pending>();
  private nextId = 1;
  private startFailures = 0;
  private broken?: CorlError;
  private closed = false;
  readonly stats: SymbolicPoolStats = { answered: 0, timeouts: 0, crashes: 0, started: 0 };

  constructor(private readonly options: SymbolicPoolOptions) {}

  /**
   * Whether two keys are equal according to the engine; false when it cannot tell or time runs out.
   * When `work.signal` aborts, a waiting comparison leaves the queue and a running one's worker is
   * terminated, and the comparison rejects with the signal's reason (it is not "not equal").
   */
  compare(a: string, b: string, work?: WorkOptions): Promise<boolean> {
    if (this.broken) return Promise.reject(this.broken);
    const signal = work?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<boolean>((resolve, reject) => {
      const lane = work?.lane ?? '';
      const leave = (): void => {
        if (this.queue.remove(lane, p)) return reject(signal!.reason);
        const slot = this.slots.find((s) => s.busy === p);
        if (slot) this.stop(slot);
        reject(signal!.reason);
      };
      const done =
        <T>(f: (v: T) => void) =>
        (v: T) => {
          signal?.removeEventListener('abort', leave);
          f(v);
        };
      const p: Pending = { id: this.nextId++, a, b, lane, resolve: done(resolve), reject: done(reject) };
      signal?.addEventListener('abort', leave, { once: true });
      this.queue.push(lane, p);
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
    for (const p of this.queue.drain()) p.resolve(false);
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

  /**
   * Hand waiting comparisons to idle workers, a lane with nothing running first, else lane by lane.
   * A lane that waits while every worker compares for other lanes gets a worker of its own (up to
   * twice `workers`; it ends once idle with nothing waiting), so one client's slow comparisons
   * never make another's wait for their whole time limit.
   */
  private dispatch(): void {
    if (this.closed) return;
    const busyLanes = (): Set<string> => new Set(this.slots.flatMap((s) => (s.busy ? [s.busy.lane] : [])));
    for (const slot of this.slots) {
      if (this.queue.size === 0) break;
      if (!slot.ready || slot.busy || slot.dead) continue;
      const busy = busyLanes();
      const lane = this.queue.laneOutside((l) => busy.has(l));
      this.run(slot, (lane !== undefined ? this.queue.shiftLane(lane) : this.queue.shift())!);
    }
    const workers = Math.max(1, this.options.workers);
    const starting = this.slots.filter((s) => !s.ready && !s.dead).length;
    if (this.queue.size > starting && this.slots.length < workers) this.spawn();
    else if (starting === 0 && this.slots.length < 2 * workers) {
      const busy = busyLanes();
      if (this.queue.laneOutside((l) => busy.has(l)) !== undefined) this.spawn();
    }
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
      // An extra worker (beyond `workers`) ends once nothing waits.
      if (this.queue.size === 0 && this.slots.length > Math.max(1, this.options.workers)) this.stop(slot);
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
          for (const p of this.queue.drain()) p.reject(this.broken);
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
      this.stop(slot);
      p.resolve(false);
    }, this.options.timeoutMs);
    const req: SymbolicRequest = { id: p.id, a: p.a, b: p.b, tolerance: this.options.tolerance };
    slot.worker.postMessage(req);
  }

  /** Terminate a busy worker (its comparison timed out or nobody waits for it); the next one starts. */
  private stop(slot: Slot): void {
    if (slot.dead) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.dead = true;
    slot.busy = undefined;
    this.remove(slot);
    void slot.worker.terminate().catch(() => undefined);
    this.dispatch();
  }

  private remove(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
  }

  /** Idle workers must not keep the process alive; busy ones must. */
  private updateRefs(): void {
    const waiting = this.queue.size > 0;
    for (const s of this.slots) {
      if (s.busy || (waiting && !s.ready)) s.worker.ref();
      else s.worker.unref();
    }
  }
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
