// The work a request asks of the reward plugins (answer keys, rewards) is bounded (docs/guide/serve.md
// "Work per request"): it runs in its client's lane, stops when nobody waits for it any more, and
// each phase stops after `serve.timeouts.work` seconds. A reusable unit: a route hands a RequestWork
// to the exchange or the barrier, which open a phase around each piece of plugin work.
import { setMaxListeners } from 'node:events';
import type { WorkOptions } from '../contracts/work';
import { CorlError } from '../errors';
import { waitFor } from '../util/shared-work';

/** One phase of work: the options to hand to the plugins, and `done` to call once it ended. */
export interface Phase {
  readonly work: WorkOptions;
  done(): void;
}

/** The coded error a phase that outlasted its time is aborted with (HTTP 503). */
export function workTimeout(seconds: number, what: string): CorlError {
  return new CorlError(
    'CORL_ERR_SERVE_WORK_TIMEOUT',
    `expected ${what} within serve.timeouts.work (${seconds} s), got work still running: it was stopped`,
    {
      where: 'work',
      hint: 'a group whose programs all run to their time limit takes completions x testInputs x timeoutMs / concurrency; send fewer, or raise serve.timeouts.work',
    },
  );
}

/**
 * A phase of work for `lane`: aborted when `gone` aborts (with its reason) or after `seconds` (with
 * CORL_ERR_SERVE_WORK_TIMEOUT naming `what`), whichever comes first.
 */
export function phase(lane: string, gone: AbortSignal | undefined, seconds: number, what: string): Phase {
  const ctrl = new AbortController();
  setMaxListeners(0, ctrl.signal); // one listener per piece of work waiting on it (16 programs, 4096 groups)
  const onGone = (): void => ctrl.abort(gone!.reason);
  if (gone?.aborted) ctrl.abort(gone.reason);
  else gone?.addEventListener('abort', onGone, { once: true });
  const timer = Number.isFinite(seconds)
    ? setTimeout(() => ctrl.abort(workTimeout(seconds, what)), seconds * 1000)
    : undefined;
  return {
    work: { signal: ctrl.signal, lane },
    done: () => {
      clearTimeout(timer);
      gone?.removeEventListener('abort', onGone);
    },
  };
}

/** What one request's work may use: its client's lane, whether anyone still waits for it, and the time of each phase. */
export interface RequestWork {
  /** Whom the work is for (the agent the request posts as). */
  readonly lane: string;
  /** Aborted when nobody waits for the request's answer any more. */
  readonly gone?: AbortSignal;
  /** Seconds each phase may take (`serve.timeouts.work`). */
  readonly seconds: number;
}

/**
 * Run `f` as one phase of `req` (no request: no bounds). The phase ends when its signal aborts even
 * if a plugin ignores the signal and goes on (its late result is discarded), so a request is
 * answered within `seconds` of each phase whatever the plugins do.
 */
export async function inPhase<T>(
  req: RequestWork | undefined,
  what: string,
  f: (work?: WorkOptions) => Promise<T>,
): Promise<T> {
  if (!req) return f(undefined);
  const p = phase(req.lane, req.gone, req.seconds, what);
  try {
    return await waitFor(f(p.work), p.work.signal);
  } finally {
    p.done();
  }
}

/**
 * The work of a group scored for several requests (samples of one group posted separately): in
 * `lane`, stopped only when every member's request has gone away, never while one member's request
 * cannot go away (undefined: a keyed request, whose retry may claim the answer).
 */
export function sharedRequestWork(
  lane: string,
  seconds: number,
  gones: readonly (AbortSignal | undefined)[],
): RequestWork {
  if (gones.length === 0 || gones.some((g) => !g)) return { lane, seconds };
  const ctrl = new AbortController();
  setMaxListeners(0, ctrl.signal);
  let waiting = gones.length;
  for (const g of gones as readonly AbortSignal[]) {
    const leave = (): void => {
      if (--waiting === 0) ctrl.abort(g.reason);
    };
    if (g.aborted) leave();
    else g.addEventListener('abort', leave, { once: true });
  }
  return { lane, seconds, gone: ctrl.signal };
}
