// HTTP for `corl:openai`: POST JSON with a per-attempt timeout, retries with exponential backoff
// and seeded jitter (or the server's Retry-After), and a bound on requests in flight.
import { CorlError } from '../../../core/errors';
import { Rng } from '../../../core/util/rng';
import type { OpenAIOptions } from './options';

/** What the client needs of the options. */
export type ClientOptions = Pick<
  OpenAIOptions,
  'baseUrl' | 'apiKeyEnv' | 'timeoutSeconds' | 'retries' | 'backoffSeconds' | 'maxBackoffSeconds' | 'concurrency'
>;

/** Replaceable effects, so tests can see delays without waiting them out. */
export interface ClientEffects {
  /** Wait `ms` milliseconds (default: a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Where `apiKeyEnv` is looked up (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Counters of one client, for tests and `describe().details`. */
export interface ClientStats {
  /** Attempts sent (first tries and retries). */
  attempts: number;
  /** Retries made. */
  retries: number;
  /** Every retry delay waited, in milliseconds, in order. */
  readonly delaysMs: number[];
  /** The most attempts that were in flight at once. */
  maxInFlight: number;
}

interface Failure {
  readonly error: CorlError;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const s = header.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** The jittered exponential delay before retry `attempt` (0-based): min(max, base·2^attempt)·(0.5 + 0.5·u), u ∈ [0, 1). */
export function backoffMs(attempt: number, baseSeconds: number, maxSeconds: number, u: number): number {
  const capped = Math.min(maxSeconds, baseSeconds * 2 ** attempt);
  return capped * (0.5 + 0.5 * u) * 1000;
}

/** A JSON-over-HTTP client for one OpenAI-compatible server. */
export class OpenAIClient {
  readonly stats: ClientStats = { attempts: 0, retries: 0, delaysMs: [], maxInFlight: 0 };
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly rng: Rng;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly headers: Record<string, string>;

  constructor(
    private readonly options: ClientOptions,
    seed: number,
    effects: ClientEffects = {},
  ) {
    this.rng = new Rng(seed);
    this.sleep = effects.sleep ?? defaultSleep;
    this.headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (options.apiKeyEnv !== undefined) {
      const key = (effects.env ?? process.env)[options.apiKeyEnv];
      if (key === undefined || key === '') {
        throw new CorlError(
          'CORL_ERR_BACKEND_AUTH',
          `expected an API key in the environment variable ${options.apiKeyEnv} (option apiKeyEnv), got ${key === undefined ? 'no such variable' : 'an empty one'}`,
          { where: 'options.apiKeyEnv' },
        );
      }
      this.headers.authorization = `Bearer ${key}`;
    }
  }

  /** POST `body` to `baseUrl` + `route` and parse the JSON answer; retries what the protocol allows. */
  async post(route: string, body: unknown): Promise<unknown> {
    const url = this.options.baseUrl.replace(/\/+$/, '') + route;
    const payload = JSON.stringify(body);
    await this.acquire();
    try {
      for (let attempt = 0; ; attempt++) {
        const failure = await this.attempt(url, payload);
        if ('value' in failure) return failure.value;
        if (!failure.retryable || attempt >= this.options.retries) {
          if (!failure.retryable || this.options.retries === 0) throw failure.error;
          throw new CorlError(
            failure.error.code,
            `${failure.error.detail} (after ${attempt + 1} attempts: option retries = ${this.options.retries})`,
            { where: failure.error.where, hint: failure.error.hint, cause: failure.error },
          );
        }
        const delay =
          failure.retryAfterMs ??
          backoffMs(attempt, this.options.backoffSeconds, this.options.maxBackoffSeconds, this.rng.next());
        this.stats.retries++;
        this.stats.delaysMs.push(delay);
        await this.sleep(delay);
      }
    } finally {
      this.release();
    }
  }

  private async attempt(url: string, payload: string): Promise<Failure | { value: unknown }> {
    this.stats.attempts++;
    const timeoutMs = this.options.timeoutSeconds * 1000;
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: this.headers,
        body: payload,
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.status;
      retryAfter = res.headers.get('retry-after');
      text = await res.text();
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError' || err.name === 'AbortError') {
        return {
          retryable: true,
          error: new CorlError(
            'CORL_ERR_BACKEND_UNREACHABLE',
            `expected an answer from ${url} within ${this.options.timeoutSeconds} s (option timeoutSeconds), got none`,
            { where: url },
          ),
        };
      }
      const why = err.cause?.code ?? err.cause?.message ?? err.message;
      return {
        retryable: true,
        error: new CorlError(
          'CORL_ERR_BACKEND_UNREACHABLE',
          `expected a connection to ${url} (option baseUrl), got ${why}`,
          { where: url, cause: e },
        ),
      };
    }
    if (status >= 200 && status < 300) {
      try {
        return { value: JSON.parse(text) };
      } catch {
        return {
          retryable: false,
          error: new CorlError(
            'CORL_ERR_BACKEND_RESPONSE',
            `expected a JSON body from ${url}, got ${JSON.stringify(text.slice(0, 80))}`,
            { where: url },
          ),
        };
      }
    }
    const retryable = status === 429 || status >= 500;
    const hint =
      status === 404
        ? 'check options model, baseUrl (up to and including /v1) and endpoint'
        : status === 401 || status === 403
          ? 'check the key in the variable named by option apiKeyEnv'
          : undefined;
    return {
      retryable,
      retryAfterMs: retryable ? retryAfterMs(retryAfter) : undefined,
      error: new CorlError(
        'CORL_ERR_BACKEND_HTTP',
        `expected a 2xx answer from ${url}, got ${status}: ${serverMessage(text)}`,
        { where: url, hint, data: { status } },
      ),
    };
  }

  private async acquire(): Promise<void> {
    // A released slot is handed straight to the next waiter, so no newcomer can slip in between.
    if (this.inFlight >= this.options.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inFlight++;
    if (this.inFlight > this.stats.maxInFlight) this.stats.maxInFlight = this.inFlight;
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inFlight--;
  }
}

/** The error message of an OpenAI-style error body (`{"error": {"message"}}` or `{"message"}`), else the text's start. */
function serverMessage(text: string): string {
  try {
    const v = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof v.error === 'string' ? v.error : (v.error?.message ?? v.message);
    if (typeof m === 'string') return m.slice(0, 200);
  } catch {
    /* not JSON */
  }
  return JSON.stringify(text.slice(0, 200));
}
