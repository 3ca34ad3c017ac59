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
