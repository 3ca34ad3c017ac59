// One computation shared by everyone who asked for the same thing (two requests with the same
// program, a retry joining its first attempt): it is cancelled only when every one of them has
// stopped waiting (WorkOptions.signal in core/contracts/work.ts, of which this is the shape).
import { setMaxListeners } from 'node:events';

/** Whom a piece of work is for and when nobody waits for it any more (core/contracts/work.ts). */
interface WorkOptions {
  readonly signal?: AbortSignal;
  readonly lane?: string;
}

interface Running<V> {
  readonly promise: Promise<V>;
  readonly ctrl: AbortController;
  /** Callers still waiting; Infinity once one that cannot stop waiting (no signal) joined. */
  waiting: number;
}

/** A caller's view of shared work: the result, or its own signal's reason once it stops waiting. */
export function waitFor<V>(promise: Promise<V>, signal: AbortSignal | undefined, onLeave?: () => void): Promise<V> {
  if (!signal) return promise;
  if (signal.aborted) {
    onLeave?.();
    return Promise.reject(signal.reason);
  }
  return new Promise<V>((resolve, reject) => {
    const leave = (): void => {
      onLeave?.();
      reject(signal.reason);
    };
    signal.addEventListener('abort', leave, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', leave);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', leave);
        reject(e);
      },
    );
  });
}

/** Computations by key, shared while they run; each is aborted when its last waiting caller leaves. */
export class SharedWork<K, V> {
  private readonly running = new Map<K, Running<V>>();

  /** Computations running now. */
  get size(): number {
    return this.running.size;
  }

  /** Whether a computation for `key` is running now (started and not yet settled or stopped). */
  has(key: K): boolean {
    return this.running.has(key);
  }

  /**
   * The result of `start` for `key`: joined if one is running, else started with a signal that
   * aborts when every caller's own signal has aborted (never, once a caller without one joined)
   * and the first caller's lane.
   */
  run(key: K, work: WorkOptions | undefined, start: (work: WorkOptions) => Promise<V>): Promise<V> {
    let r = this.running.get(key);
    if (!r) {
      const ctrl = new AbortController();
      setMaxListeners(0, ctrl.signal); // every piece of the shared work may listen
      const own: WorkOptions = { signal: ctrl.signal, ...(work?.lane !== undefined ? { lane: work.lane } : {}) };
      const entry: Running<V> = {
        ctrl,
        waiting: 0,
        promise: Promise.resolve()
          .then(() => start(own))
          .finally(() => {
            if (this.running.get(key) === entry) this.running.delete(key);
          }),
      };
      entry.promise.catch(() => undefined); // every caller handles it through its own view
      this.running.set(key, entry);
      r = entry;
    }
    const entry = r;
    const signal = work?.signal;
    entry.waiting = signal ? entry.waiting + 1 : Infinity;
    return waitFor(entry.promise, signal, () => {
      if (--entry.waiting <= 0 && this.running.get(key) === entry) {
        this.running.delete(key);
        entry.ctrl.abort(signal!.reason);
      }
    });
  }
}
