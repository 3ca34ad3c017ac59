/**
 * What a caller says about a piece of plugin work, beside the frozen context and never inside it:
 * who the work is for and whether anyone still waits for its result. `corl serve` passes one per
 * request (its client is the lane; the signal aborts when the client goes away or the request's
 * time, `serve.timeouts.work`, runs out); `corl train` passes none. A plugin may ignore it: the
 * result of aborted work is discarded either way.
 */
export interface WorkOptions {
  /**
   * Aborted when nobody waits for the result any more. Work that queues or runs long (a sandbox, a
   * worker pool) should stop, drop what it queued, and reject with `signal.reason`; it must not
   * cache or remember anything of the aborted work as if it had finished (a comparison cut short
   * is not "not equal").
   */
  readonly signal?: AbortSignal;
  /**
   * Whom the work is for (an opaque name: the agent a `corl serve` request posts as). A plugin that
   * queues work serves the lanes in turn (core/util/fair-queue.ts does this), so one client's
   * backlog never holds another's work behind it; corl's sandbox and symbolic pool also give a
   * lane with nothing running a place of its own beyond their usual number (up to twice it).
   */
  readonly lane?: string;
}
