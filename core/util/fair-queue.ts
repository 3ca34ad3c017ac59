// Work of several clients waiting for a few workers (a sandbox's processes, a worker pool): the
// lanes are served in turn, so one client's backlog delays another's work by at most the items
// already running, never by the whole backlog (WorkOptions.lane in core/contracts/work.ts).

/** Items waiting per lane; `shift` takes the first item of the next lane in turn. */
export class FairQueue<T> {
  /** Lanes with waiting items, in serving order (the next one first). */
  private readonly lanes = new Map<string, T[]>();
  private count = 0;

  /** Items waiting, all lanes together. */
  get size(): number {
    return this.count;
  }

  /** Queue an item at the end of its lane (a new lane is served after the lanes already waiting). */
  push(lane: string, item: T): void {
    let q = this.lanes.get(lane);
    if (!q) this.lanes.set(lane, (q = []));
    q.push(item);
    this.count++;
  }

  /** The next item: the oldest of the lane whose turn it is; that lane then waits behind the others. */
  shift(): T | undefined {
    for (const [lane, q] of this.lanes) {
      this.lanes.delete(lane);
      const item = q.shift();
      if (q.length > 0) this.lanes.set(lane, q);
      if (item !== undefined) {
        this.count--;
        return item;
      }
    }
    return undefined;
  }

  /** The first waiting lane (in serving order) that `skip` does not hold, if any. */
  laneOutside(skip: (lane: string) => boolean): string | undefined {
    for (const lane of this.lanes.keys()) if (!skip(lane)) return lane;
    return undefined;
  }

  /** The oldest item of one lane (out of turn: a worker started for that lane), which then waits behind the others. */
  shiftLane(lane: string): T | undefined {
    const q = this.lanes.get(lane);
    if (!q) return undefined;
    this.lanes.delete(lane);
    const item = q.shift();
    if (q.length > 0) this.lanes.set(lane, q);
    if (item !== undefined) this.count--;
    return item;
  }

  /** Take an item out (its work was cancelled); whether it was waiting. */
  remove(lane: string, item: T): boolean {
    const q = this.lanes.get(lane);
    const i = q ? q.indexOf(item) : -1;
    if (i < 0) return false;
    q!.splice(i, 1);
    if (q!.length === 0) this.lanes.delete(lane);
    this.count--;
    return true;
  }

  /** Take every item out, in serving order. */
  drain(): T[] {
    const out: T[] = [];
    for (let x = this.shift(); x !== undefined; x = this.shift()) out.push(x);
    return out;
  }
}

/**
 * `places` places shared by lanes: work of a lane takes a place, or waits for one lane by lane
 * ({@link FairQueue}). A lane with nothing running may also take one extra place while the others
 * are held (up to twice `places`), so one client's long work never makes another's wait behind it.
 * Waiting work leaves the queue when its signal aborts, rejecting with the signal's reason.
 */
export class FairGate {
  private running = 0;
  /** Places held per lane. */
  private readonly runningOf = new Map<string, number>();
  private readonly waiting = new FairQueue<() => void>();

  constructor(private readonly places: number) {}

  /** Places held, all lanes together. */
  get held(): number {
    return this.running;
  }

  /** Work waiting for a place, all lanes together. */
  get queued(): number {
    return this.waiting.size;
  }

  /** Take a place for `lane`, now or in its turn; rejects with `signal.reason` if it aborts first. Pair with {@link release}. */
  acquire(lane: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.mayStart(lane)) {
      this.begin(lane);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const leave = (): void => {
        if (this.waiting.remove(lane, start)) reject(signal!.reason);
      };
      const start = (): void => {
        signal?.removeEventListener('abort', leave);
        this.begin(lane);
        resolve();
      };
      this.waiting.push(lane, start);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  /** Give back a place of `lane`, and start the waiting work it makes room for. */
  release(lane: string): void {
    this.running--;
    const n = (this.runningOf.get(lane) ?? 1) - 1;
    if (n > 0) this.runningOf.set(lane, n);
    else this.runningOf.delete(lane);
    for (;;) {
      const c = this.limit();
      let next: (() => void) | undefined;
      if (this.running < c) next = this.waiting.shift();
      else if (this.running < 2 * c) {
        const idle = this.waiting.laneOutside((l) => (this.runningOf.get(l) ?? 0) > 0);
        next = idle === undefined ? undefined : this.waiting.shiftLane(idle);
      }
      if (!next) return;
      next();
    }
  }

  /** Run `fn` on a place of `lane`. */
  async run<T>(lane: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    await this.acquire(lane, signal);
    try {
      return await fn();
    } finally {
      this.release(lane);
    }
  }

  private limit(): number {
    return Math.max(1, this.places);
  }

  private mayStart(lane: string): boolean {
    const c = this.limit();
    return this.running < c || ((this.runningOf.get(lane) ?? 0) === 0 && this.running < 2 * c);
  }

  private begin(lane: string): void {
    this.running++;
    this.runningOf.set(lane, (this.runningOf.get(lane) ?? 0) + 1);
  }
}
