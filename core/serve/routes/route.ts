// What a route handler is given: the service's parts it may use, and its request beyond the body.
// Each route (one file in this folder) is a function from (service, body, request) to its answer.
import { CorlError } from '../../errors';
import type { GetRewardScorer } from '../barrier';
import type { Exchange } from '../exchange';
import type { Caller, Credentials } from '../identity';
import type { Journal } from '../journal';
import type { ReplyLedger } from '../ledger';
import type { ServeMetrics } from '../prom';
import type { SampleScorer } from '../samples';
import type { PostedCompletion } from '../scorer';
import type { ServeRuntime } from '../setup';
import type { RequestWork } from '../work';

/** The parts of a running service the routes use. */
export interface Service {
  readonly runtime: ServeRuntime;
  readonly credentials: Credentials;
  readonly metrics: ServeMetrics;
  /** POST /v1/groups (and POST /v1/samples with a step). */
  readonly groups: Exchange;
  /** POST /get_reward's barrier and exchange of rounds. */
  readonly getReward: GetRewardScorer;
  /** POST /v1/samples. */
  readonly samples: SampleScorer;
  /** Replies to POST /get_reward requests sent with an Idempotency-Key. */
  readonly replies: ReplyLedger;
  /** Fingerprints of POST /v1/groups and /v1/samples requests sent with an Idempotency-Key. */
  readonly groupIds: ReplyLedger;
  readonly journal: Journal;
  /** When the service started (Date.now()). */
  readonly started: number;
}

/** What a route handler needs to know about its request beyond the body. */
export interface RequestContext {
  readonly caller: Caller;
  /** The Idempotency-Key, when sent. */
  readonly id: string | undefined;
  /** Aborted when the request goes away before it is answered (the client closed the connection). */
  readonly gone: AbortSignal;
  readonly params: URLSearchParams;
  /**
   * Count this request against its agent's requests in progress (serve.maxHeldPerAgent): a route
   * calls it once it knows the agent (the token's, or the body's when the route trusts it) and
   * before it changes anything; over the bound it throws a coded 503 and the connection closes.
   */
  admit(agent: number): void;
}

/** A POST route: its answer (a JSON value) for a parsed body. */
export type PostRoute = (svc: Service, body: unknown, ctx: RequestContext) => Promise<unknown>;

/** The index of an agent named (or numbered) by a request. */
export function agentIndex(rt: ServeRuntime, value: string | number, where: string): number {
  const i = typeof value === 'number' ? (value < rt.agents.length ? value : undefined) : rt.agentIndex(value);
  if (i === undefined) {
    throw new CorlError(
      'CORL_ERR_SERVE_UNKNOWN_AGENT',
      `expected an agent among ${rt.agents.map((n) => `"${n}"`).join(', ')}, got ${JSON.stringify(value)}`,
      { where },
    );
  }
  return i;
}

/** The work a request may ask of the plugins: its agent's lane, and `gone` when nobody else can claim its answer. */
export function requestWork(rt: ServeRuntime, agent: number, gone?: AbortSignal): RequestWork {
  return {
    lane: rt.agents[agent]!,
    seconds: rt.settings.timeouts.work,
    ...(gone ? { gone } : {}),
  };
}

/** A reward that reads per-token statistics (RENT, Intuitor) needs them on every completion. */
export function checkTokenStats(rt: ServeRuntime, c: PostedCompletion, where: string): void {
  if (!rt.tokenStats || c.entropies || c.meanLogprobs) return;
  throw new CorlError(
    'CORL_ERR_SERVE_BAD_REQUEST',
    `expected ${where} to carry per-token statistics (entropies or meanLogprobs, one per generated token) because "${rt.config.reward.use}" reads them, got none`,
    { where },
  );
}
