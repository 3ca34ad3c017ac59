// `corl serve`: the reward plugins of a config over HTTP, and the cross-agent label exchange.
// Routes and fields: docs/guide/serve.md.
import { isUtf8 } from 'node:buffer';
import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as path from 'node:path';
import { CorlError, isCorlError, type ErrorCode } from '../errors';
import { CORL_VERSION } from '../version';
import { GetRewardScorer } from './barrier';
import { ConnectionTable, type Cap } from './connections';
import { Credentials, type Caller } from './identity';
import type { Exchange } from './exchange';
import { Journal, type ServeIdentity } from './journal';
import { ServeMetrics } from './prom';
import { ReplyLedger, requestHash, requestId } from './ledger';
import { inPostedOrder, inScoringOrder } from './order';
import { parseGetRewardRequest, parseGroupsRequest, type GetRewardRequest } from './requests';
import { parseSamplesRequest, SampleScorer } from './samples';
import { summarize, type GroupAnswer, type PostedCompletion, type PostedGroup, type Scorer } from './scorer';
import { openState, type ServeState } from './state';
import type { RequestWork } from './work';
import { buildServeRuntime, type LoadedServeConfig, type ServeRuntime } from './setup';

/** How to start a {@link RewardServer}; unset fields come from the config's `serve` section. */
export interface ServerOptions {
  readonly host?: string;
  readonly port?: number;
  /** The service token: with agent tokens it reads GET /metrics; without, every agent shares it (every request but GET /health must carry one). */
  readonly token?: string;
  /** The agents' tokens file (default: `serve.tokens`, relative to the config): a JSON object `{agent: token}`. */
  readonly tokensFile?: string;
  /** Journal file (default: serve.journal, or <name>.journal.jsonl beside the config). */
  readonly journal?: string;
  /** Allow a non-loopback address without a token (trusted networks only). */
  readonly allowNoToken?: boolean;
  /** Where start-up notes go (default: nowhere). */
  readonly log?: (line: string) => void;
}

const STATUS: Partial<Record<ErrorCode, number>> = {
  CORL_ERR_SERVE_BAD_JSON: 400,
  CORL_ERR_SERVE_BAD_REQUEST: 400,
  CORL_ERR_SERVE_UNAUTHORIZED: 401,
  CORL_ERR_SERVE_FORBIDDEN: 403,
  CORL_ERR_SERVE_NOT_FOUND: 404,
  CORL_ERR_SERVE_CONFLICT: 409,
  CORL_ERR_SERVE_STEP_EXPIRED: 410,
  CORL_ERR_SERVE_TOO_LARGE: 413,
  CORL_ERR_SERVE_LIMIT: 413,
  CORL_ERR_SERVE_STEP_AHEAD: 422,
  CORL_ERR_SERVE_STEP_FULL: 422,
  CORL_ERR_SERVE_KEYS_FULL: 422,
  CORL_ERR_SERVE_UNKNOWN_AGENT: 422,
  CORL_ERR_SERVE_GROUP_SIZE: 422,
  CORL_ERR_REWARD_FAILED: 500,
  CORL_ERR_REWARD_OUTPUT: 500,
  CORL_ERR_SERVE_INTERNAL: 500,
  CORL_ERR_SERVE_UNAVAILABLE: 503,
  CORL_ERR_SERVE_BUSY: 503,
  CORL_ERR_SERVE_CANCELLED: 499,
  CORL_ERR_SERVE_WORK_TIMEOUT: 503,
  CORL_ERR_SERVE_PEER_TIMEOUT: 504,
};

/** The HTTP status a coded error is answered with. */
export function statusOf(e: CorlError): number {
  if (e.code === 'CORL_ERR_SERVE_NOT_FOUND' && e.data?.method) return 405;
  return STATUS[e.code] ?? 500;
}

/**
 * Connections over a cap that are still read (at most this many, or `serve.maxConnections` if
 * smaller), waiting for their first request; a newer one closes the oldest. A request takes the
 * place of a held connection without work, else it gets one answer (GET /health, else a coded 503)
 * and its connection is closed. So open files stay bounded by the cap plus this spare.
 */
export const SPARE_CONNECTIONS = 64;

/** Marks a server that is stopping, so answers close their connections. */
const STOPPING = Symbol('corl.serve.stopping');

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** The soft limit on open files of this process (Linux /proc), undefined when unknown. */
function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** A running reward service. */
export class RewardServer {
  private readonly scorer: Scorer;
  private readonly groups: Exchange;
  private readonly getReward: GetRewardScorer;
  private readonly samples: SampleScorer;
  private readonly journal: Journal;
  private readonly replies: ReplyLedger;
  private readonly groupIds: ReplyLedger;
  /** A torn last line of the journal was dropped at start. */
  readonly tornTail: boolean;
  private readonly started = Date.now();
  private inflight = 0;
  private stopping?: Promise<void>;
  /** Open connections within `serve.maxConnections` and `serve.maxConnectionsPerPeer`. */
  private readonly table: ConnectionTable;
  /** Connections that arrived over a cap with nothing to close for them: answered once, then closed. */
  private readonly overCap = new WeakMap<object, Cap>();

  private constructor(
    readonly runtime: ServeRuntime,
    state: ServeState,
    private readonly server: http.Server,
    private readonly credentials: Credentials,
    readonly metrics: ServeMetrics,
  ) {
    const s = runtime.settings;
    this.scorer = state.scorer;
    this.groups = state.groups;
    this.journal = state.journal;
    this.replies = state.replies;
    this.groupIds = state.groupIds;
    this.tornTail = state.tornTail;
    const getRewardExchange = state.rounds;
    const journal = state.journal;
    this.getReward = new GetRewardScorer(runtime, this.scorer, getRewardExchange, this.metrics);
    // POST /v1/samples forms groups and hands them to the same exchanges: with a step, the one of
    // POST /v1/groups; without, the one of POST /get_reward (rounds per group id).
    this.samples = new SampleScorer(
      runtime,
      this.scorer,
      { steps: this.groups, rounds: getRewardExchange },
      this.metrics,
    );
    journal.onSync = (seconds, n) => {
      this.metrics.journalSync.observe(seconds);
      this.metrics.journalRecords.inc({}, n);
    };
    this.metrics.gauge('corl_serve_inflight_requests', 'requests being handled now', () => this.inflight);
    this.metrics.gauge(
      'corl_serve_exchange_slots',
      '(step, group) slots held by POST /v1/groups',
      () => this.groups.size,
    );
    this.metrics.gauge(
      'corl_serve_exchange_newest_step',
      'the newest step any agent reached on POST /v1/groups',
      () => this.groups.newest,
    );
    this.metrics.gauge(
      'corl_serve_get_reward_slots',
      '(round, group) slots held by POST /get_reward',
      () => getRewardExchange.size,
    );
    this.metrics.gauge(
      'corl_serve_barrier_pending_samples',
      'POST /get_reward samples waiting for the rest of their group',
      () => this.getReward.pending,
    );
    this.metrics.gauge(
      'corl_serve_pending_samples',
      'POST /v1/samples samples waiting for the rest of their group',
      () => this.samples.pendingSamples,
    );
    this.metrics.gauge(
      'corl_serve_uptime_seconds',
      'seconds since the service started',
      () => (Date.now() - this.started) / 1000,
    );
    this.table = new ConnectionTable(
      s.maxConnections,
      s.maxConnectionsPerPeer,
      Math.min(SPARE_CONNECTIONS, s.maxConnections),
      {
        evicted: (cap) => this.metrics.connectionsEvicted.inc({ reason: cap }),
        dropped: () => this.metrics.connectionsRefused.inc({ outcome: 'dropped' }),
      },
    );
    server.on('connection', (socket: Socket) => {
      const cap = this.table.open(socket);
      if (cap) this.overCap.set(socket, cap);
    });
    server.on('request', (req, res) => {
      void this.handle(req, res);
    });
    // Malformed HTTP gets a bare 400; a client too slow with its headers or body (timeouts) a 408.
    server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT';
      this.metrics.clientErrors.inc({ reason: timeout ? 'timeout' : 'malformed' });
      if (socket.writable)
        socket.end(`HTTP/1.1 ${timeout ? '408 Request Timeout' : '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
      else socket.destroy();
    });
  }

  /** Build the plugins, replay the journal and listen. */
  static async start(served: LoadedServeConfig, options: ServerOptions = {}): Promise<RewardServer> {
    const settings = served.config.serve;
    const host = options.host ?? settings.host;
    const port = options.port ?? settings.port;
    const tokensFile =
      options.tokensFile ?? (settings.tokens ? path.resolve(served.loaded.baseDir, settings.tokens) : undefined);
    const credentials = Credentials.load(
      served.config.agents.map((a) => a.name),
      tokensFile,
      options.token,
    );
    if (!isLoopback(host) && !credentials.required && !options.allowNoToken) {
      throw new CorlError(
        'CORL_ERR_SERVE_BIND',
        `expected agent tokens or a bearer token to bind ${host} (beyond loopback), got none`,
        { where: '--host', hint: 'give each agent its own token (serve.tokens or --tokens-file)' },
      );
    }
    const t = settings.timeouts;
    if (t.headers > t.body) {
      throw new CorlError(
        'CORL_ERR_CONFIG_INVALID',
        `expected serve.timeouts.headers (${t.headers} s) to be at most serve.timeouts.body (${t.body} s): the body timeout counts the headers too`,
        { where: 'serve.timeouts.headers' },
      );
    }
    const runtime = await buildServeRuntime(served, { journal: options.journal });
    let journal: Journal | undefined;
    try {
      const identity: ServeIdentity = {
        agents: runtime.agents,
        topology: served.config.topology.use,
        reward: served.config.reward.use,
      };
      const metrics = new ServeMetrics();
      const state = await openState(runtime, identity, {
        wait: (seconds: number, arrived: boolean) => {
          metrics.waits.inc({ outcome: arrived ? 'arrived' : 'timeout' });
          metrics.waitSeconds.observe(seconds);
        },
        fallback: (kind: string) => metrics.fallbacks.inc({ kind }),
        replay: () => metrics.replays.inc(),
      });
      journal = state.journal;
      const server = http.createServer({
        keepAlive: true,
        // Slow or stuck clients are cut (HTTP 408) so that they cannot hold connections, and the
        // open files behind them, forever: headers, then the whole request, each in bounded time.
        headersTimeout: t.headers * 1000,
        requestTimeout: t.body * 1000,
        keepAliveTimeout: t.idle * 1000,
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.min(t.headers, t.body) * 250)),
      });
      server.keepAliveTimeout = t.idle * 1000;
      // Connections over the caps are handled by the service (ConnectionTable), not dropped by Node.
      const spare = Math.min(SPARE_CONNECTIONS, settings.maxConnections);
      const files = openFileLimit();
      if (files !== undefined && settings.maxConnections + spare + 64 > files) {
        options.log?.(
          `serve: serve.maxConnections is ${settings.maxConnections} (plus ${spare} spare ones answered with 503) but this process may open only ${files} files (ulimit -n); raise the limit or lower maxConnections, or connections beyond the limit are dropped`,
        );
      }
      await new Promise<void>((resolve, reject) => {
        const fail = (e: NodeJS.ErrnoException): void => {
          reject(
            new CorlError(
              'CORL_ERR_SERVE_BIND',
              `expected to listen on ${host}:${port}, got ${e.code === 'EADDRINUSE' ? 'a port already in use' : e.code === 'EADDRNOTAVAIL' ? 'an address that is not on this machine' : e.message}`,
              { where: `${host}:${port}`, cause: e },
            ),
          );
        };
        server.once('error', fail);
        server.listen(port, host, () => {
          server.off('error', fail);
          resolve();
        });
      });
      const rs = new RewardServer(runtime, state, server, credentials, metrics);
      for (const note of credentials.startNotes(host)) options.log?.(note);
      for (const note of state.notes) options.log?.(note);
      if (state.tornTail)
        options.log?.(
          `journal: dropped a torn last line of ${runtime.journalFile} (the previous service stopped mid-write; that write was never acknowledged)`,
        );
      if (runtime.journalFile !== undefined)
        options.log?.(`journal: ${runtime.journalFile} (${state.restored} record(s) restored)`);
      return rs;
    } catch (e) {
      await journal?.close();
      await runtime.close();
      throw e;
    }
  }

  /** The bound address. */
  get address(): AddressInfo {
    return this.server.address() as AddressInfo;
  }

  /** Base URL, e.g. http://127.0.0.1:8470. */
  get url(): string {
    const a = this.address;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /** Stop: refuse new requests, answer waiting ones with 503, flush the journal, release the plugins. */
  close(): Promise<void> {
    this.stopping ??= (async () => {
      (this.server as http.Server & { [STOPPING]?: boolean })[STOPPING] = true;
      const closed = new Promise<void>((r) => this.server.close(() => r()));
      this.groups.close();
      this.getReward.shutdown();
      this.samples.shutdown();
      this.server.closeIdleConnections();
      // Requests woken above answer with "connection: close"; anything still open after a grace
      // period (a client that never reads its answer) is cut.
      const grace = setTimeout(() => this.server.closeAllConnections(), 5000);
      await closed;
      clearTimeout(grace);
      await this.journal.close();
      await this.runtime.close();
    })();
    return this.stopping;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const t0 = performance.now();
    const gone = goneSignal(res);
    const [pathname = '/', search = ''] = (req.url ?? '/').split('?', 2);
    const route = ['/health', '/metrics', '/v1/groups', '/v1/samples', '/get_reward'].includes(pathname)
      ? pathname
      : 'other';
    this.inflight++;
    let status = 200;
    let working = false;
    try {
      if (this.stopping)
        throw new CorlError('CORL_ERR_SERVE_UNAVAILABLE', 'expected a running service, got one shutting down');
      const method = route === '/health' || route === '/metrics' ? 'GET' : 'POST';
      if (route === 'other')
        throw new CorlError(
          'CORL_ERR_SERVE_NOT_FOUND',
          `expected one of POST /get_reward, POST /v1/groups, POST /v1/samples, GET /health, GET /metrics; got ${req.method} ${pathname}`,
          { where: pathname },
        );
      if (req.method !== method)
        throw new CorlError('CORL_ERR_SERVE_NOT_FOUND', `expected ${method} ${pathname}, got ${req.method}`, {
          where: pathname,
          data: { method },
        });
      // A connection over a cap takes the place of one without work when it sends a request.
      const refused = this.overCap.has(req.socket) ? this.table.promote(req.socket) : undefined;
      if (refused === undefined) this.overCap.delete(req.socket);
      else {
        this.metrics.connectionsRefused.inc({ outcome: 'answered' });
        // One answer, then the connection closes: /health still tells a probe the service lives.
        res.setHeader('connection', 'close');
        if (route !== '/health') {
          res.setHeader('retry-after', '1');
          throw busy(refused, this.runtime.settings, req.socket.remoteAddress ?? '');
        }
      }
      if (route === '/health') return send(res, 200, this.health());
      const params = new URLSearchParams(search);
      // OpenRLHF cannot set headers: POST /get_reward also takes the token as ?token=.
      const caller = this.credentials.authenticate(
        req.headers.authorization,
        route === '/get_reward' ? params.get('token') : undefined,
      );
      if (route === '/metrics')
        return sendText(res, 200, this.metrics.render(), 'text/plain; version=0.0.4; charset=utf-8');
      const ctx: RequestContext = {
        caller,
        id: requestId(req.headers['idempotency-key']),
        gone,
        params,
      };
      const body = await readJson(req, this.runtime.settings.maxBodyBytes);
      // From here the service works for this request: its connection is not given up for another.
      this.table.busy(req.socket);
      working = true;
      if (route === '/v1/groups') return send(res, 200, await this.postGroups(body, ctx));
      if (route === '/v1/samples') return send(res, 200, await this.postSamples(body, ctx));
      return send(res, 200, await this.postGetReward(body, ctx));
    } catch (e) {
      const err = isCorlError(e)
        ? e
        : new CorlError(
            'CORL_ERR_SERVE_INTERNAL',
            `expected to handle ${req.method} ${pathname}, got ${(e as Error)?.message ?? String(e)}`,
            { cause: e },
          );
      status = statusOf(err);
      const tooLarge = err.code === 'CORL_ERR_SERVE_TOO_LARGE';
      if (tooLarge) res.setHeader('connection', 'close');
      if (status === 401) res.setHeader('www-authenticate', 'Bearer');
      if (!res.headersSent)
        send(res, status, { error: { code: err.code, message: err.message, where: err.where, hint: err.hint } });
      else res.destroy();
      if (tooLarge) {
        res.once('finish', () => req.socket.destroy());
      }
    } finally {
      if (working) this.table.done(req.socket);
      this.inflight--;
      if (this.stopping) this.server.closeIdleConnections();
      // A client that left before its answer was sent counts as 499, whatever was computed for it.
      const code = gone.aborted ? 499 : status === 200 ? res.statusCode : status;
      this.metrics.requests.inc({ route, status: String(code) });
      this.metrics.latency.observe((performance.now() - t0) / 1000, { route });
    }
  }

  private agent(value: string | number, where: string): number {
    const rt = this.runtime;
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

  private async postGroups(body: unknown, ctx: RequestContext): Promise<unknown> {
    const rt = this.runtime;
    const req = parseGroupsRequest(body, {
      maxGroups: rt.settings.exchange.maxGroupsPerStep,
      maxCompletions: rt.settings.maxCompletions,
      maxRequestCompletions: rt.settings.maxRequestCompletions,
      maxTestInputs: rt.settings.maxTestInputs,
    });
    const agent = this.credentials.agentOf(ctx.caller, this.agent(req.agent, 'agent'), 'agent')!;
    const K = rt.settings.groupSize;
    req.groups.forEach((g, i) => {
      if (K > 0 && g.completions.length !== K) {
        throw new CorlError(
          'CORL_ERR_SERVE_GROUP_SIZE',
          `expected ${K} completions in group "${g.id}" (serve.groupSize), got ${g.completions.length}`,
          { where: `groups[${i}].completions` },
        );
      }
      g.completions.forEach((c, k) => checkTokenStats(rt, c, `groups[${i}].completions[${k}]`));
      if (rt.readsGroundTruth && g.reference === undefined) {
        throw new CorlError(
          'CORL_ERR_SERVE_BAD_REQUEST',
          `expected groups[${i}].reference because "${rt.config.reward.use}" reads ground truth, got nothing`,
          { where: `groups[${i}].reference` },
        );
      }
    });
    this.countUntokenized('/v1/groups', req.groups);
    const post = async (): Promise<unknown> => {
      // Scored in text order, so that a tie never depends on how the trainer ordered its batch.
      const ordered = req.groups.map((g) => inScoringOrder(g));
      const answers = (
        await this.groups.post(
          agent,
          req.step,
          ordered.map((o) => o.group),
          req.wait === undefined ? undefined : req.wait * 1000,
          this.work(agent, ctx.gone),
        )
      ).map((a, i) => inPostedOrder(a, ordered[i]!.order));
      this.metrics.completions.inc(
        { route: '/v1/groups' },
        answers.reduce((s, a) => s + a.rewards.length, 0),
      );
      return {
        agent: rt.agents[agent],
        step: req.step,
        groups: answers.map(publicAnswer),
        metrics: summarize(answers),
      };
    };
    // A retry is answered from the stored answers whatever its id; an id only refuses its reuse for another body.
    if (ctx.id === undefined) return post();
    return this.groupIds.run(agent, ctx.id, requestHash([req.step, req.groups]), post);
  }

  private async postGetReward(body: unknown, ctx: RequestContext): Promise<unknown> {
    const rt = this.runtime;
    const req = parseGetRewardRequest(body, rt.settings.maxRequestCompletions);
    if (rt.tokenStats)
      throw new CorlError(
        'CORL_ERR_SERVE_BAD_REQUEST',
        `expected per-token statistics because "${rt.config.reward.use}" reads them, got POST /get_reward, which carries text only`,
        { where: 'query', hint: 'post each sample with its entropies or meanLogprobs through POST /v1/samples' },
      );
    // OpenRLHF sends text only: lengths are characters here (docs/guide/serve.md "Lengths").
    this.metrics.untokenized.inc({ route: '/get_reward' }, req.query.length);
    const name = ctx.params.get('agent');
    const named =
      name === null
        ? undefined
        : this.agent(
            /^\d+$/.test(name) && rt.agentIndex(name) === undefined ? Number(name) : name,
            'agent (query parameter)',
          );
    // With agent tokens the token says who posts; otherwise ?agent=, else serve.getReward.agent, else the first.
    const agent =
      this.credentials.agentOf(ctx.caller, named, 'agent (query parameter)') ??
      rt.agentIndex(rt.settings.getReward.agent ?? rt.agents[0]!)!;
    if (ctx.id === undefined) return this.getRewardReply(agent, req, this.work(agent, ctx.gone));
    // With an id the samples stay at the barrier if the request goes away: its retry claims the reply.
    const fp = requestHash([req.query, req.prompts ?? null, req.labels ?? null]);
    return this.replies.run(agent, ctx.id, fp, () => this.getRewardReply(agent, req, this.work(agent)));
  }

  /** The work a request may ask of the plugins: its agent's lane, and `gone` when nobody else can claim its answer. */
  private work(agent: number, gone?: AbortSignal): RequestWork {
    return {
      lane: this.runtime.agents[agent]!,
      seconds: this.runtime.settings.timeouts.work,
      ...(gone ? { gone } : {}),
    };
  }

  private async postSamples(body: unknown, ctx: RequestContext): Promise<unknown> {
    const rt = this.runtime;
    const req = parseSamplesRequest(body, {
      maxCompletions: rt.settings.maxCompletions,
      maxSamples: Math.min(rt.settings.samples.maxPending, rt.settings.maxRequestCompletions),
      maxTestInputs: rt.settings.maxTestInputs,
    });
    const agent = this.credentials.agentOf(ctx.caller, this.agent(req.agent, 'agent'), 'agent')!;
    req.samples.forEach((s, i) =>
      checkTokenStats(rt, s.completion, req.single ? 'completion' : `samples[${i}].completion`),
    );
    const untokenized = req.samples.filter((s) => s.completion.length === undefined).length;
    if (untokenized) this.metrics.untokenized.inc({ route: '/v1/samples' }, untokenized);
    const post = async (): Promise<unknown> => {
      const answers = await this.samples.post(
        agent,
        req,
        this.work(agent, ctx.id === undefined ? ctx.gone : undefined),
      );
      this.metrics.completions.inc({ route: '/v1/samples' }, answers.length);
      if (req.single) return { agent: rt.agents[agent], ...answers[0]! };
      return { agent: rt.agents[agent], samples: answers };
    };
    // Samples are idempotent by their own request ids; an Idempotency-Key only refuses its reuse for another body.
    if (ctx.id === undefined) return post();
    return this.groupIds.run(agent, ctx.id, requestHash([req.step ?? null, req.samples]), post);
  }

  /** Completions posted without a token count: their length falls back to characters. */
  private countUntokenized(route: string, groups: readonly PostedGroup[]): void {
    let n = 0;
    for (const g of groups) for (const c of g.completions) if (c.length === undefined) n++;
    if (n) this.metrics.untokenized.inc({ route }, n);
  }

  private async getRewardReply(agent: number, req: GetRewardRequest, work: RequestWork): Promise<unknown> {
    const samples = req.query.map((query, i) => ({ query, prompt: req.prompts?.[i], label: req.labels?.[i] }));
    const results = await this.getReward.score(agent, samples, work);
    this.metrics.completions.inc({ route: '/get_reward' }, results.length);
    const names = [...new Set(results.flatMap((r) => Object.keys(r.logs)))].sort();
    const extra: Record<string, number[]> = {};
    for (const n of names) extra[n] = results.map((r) => r.logs[n] ?? 0);
    return {
      rewards: results.map((r) => r.reward),
      scores: results.map((r) => Math.min(1, Math.max(0, r.reward))),
      extra_logs: extra,
    };
  }

  private health(): unknown {
    const rt = this.runtime;
    const s = rt.settings;
    return {
      status: 'ok',
      version: CORL_VERSION,
      name: rt.config.name,
      agents: rt.agents,
      topology: rt.config.topology.use,
      supervisors: Object.fromEntries(
        rt.agents.map((n, i) => [n, rt.topology.supervisors(i, rt.agents.length).map((m) => rt.agents[m])]),
      ),
      reward: rt.config.reward.use,
      extractor: rt.config.extractor.use,
      equivalence: rt.config.equivalence.use,
      readsGroundTruth: rt.readsGroundTruth,
      supervised: rt.readsGroundTruth || rt.trainedOnLabels,
      pointwise: rt.pointwise,
      tokenStats: rt.tokenStats,
      groupSize: s.groupSize,
      maxCompletions: s.maxCompletions,
      exchange: {
        ...s.exchange,
        slots: this.groups.size,
        newestStep: this.groups.newest,
        steps: this.groups.reaches(),
      },
      getReward: {
        groupSize: s.getReward.groupSize,
        wait: s.getReward.wait,
        groupBy: s.getReward.groupBy,
        agent: s.getReward.agent ?? rt.agents[0],
      },
      samples: { wait: s.samples.wait, maxPending: s.samples.maxPending, pending: this.samples.pendingSamples },
      journal: {
        file: rt.journalFile ?? null,
        written: this.journal.written,
        bytes: this.journal.size,
        compactions: this.journal.compactions,
        ...(this.journal.compactError ? { compactError: this.journal.compactError } : {}),
      },
      auth: this.credentials.mode,
      uptimeSeconds: (Date.now() - this.started) / 1000,
    };
  }
}

/** The answer of a connection over a cap with no idle connection to close for it. */
function busy(refused: Cap, s: ServeRuntime['settings'], peer: string): CorlError {
  return new CorlError(
    'CORL_ERR_SERVE_BUSY',
    refused === 'peer'
      ? `expected at most ${s.maxConnectionsPerPeer} open connections from ${peer} (serve.maxConnectionsPerPeer), got one more while all of them have requests in progress`
      : `expected at most ${s.maxConnections} open connections (serve.maxConnections), got one more while all of them have requests in progress`,
    {
      where: 'connection',
      hint: `reuse keep-alive connections and retry after a moment, or raise serve.${refused === 'peer' ? 'maxConnectionsPerPeer' : 'maxConnections'}`,
    },
  );
}

/** What a route handler needs to know about its request beyond the body. */
interface RequestContext {
  readonly caller: Caller;
  /** The Idempotency-Key, when sent. */
  readonly id: string | undefined;
  /** Aborted when the request goes away before it is answered (the client closed the connection). */
  readonly gone: AbortSignal;
  readonly params: URLSearchParams;
}

/** A signal aborted (with CORL_ERR_SERVE_CANCELLED) when the response closes before it was sent in full. */
function goneSignal(res: http.ServerResponse): AbortSignal {
  const ctrl = new AbortController();
  setMaxListeners(0, ctrl.signal); // each group and phase of the request listens
  res.once('close', () => {
    if (!res.writableFinished)
      ctrl.abort(
        new CorlError(
          'CORL_ERR_SERVE_CANCELLED',
          'expected the client to wait for its answer, got a closed connection',
        ),
      );
  });
  return ctrl.signal;
}

/** A reward that reads per-token statistics (RENT, Intuitor) needs them on every completion. */
function checkTokenStats(rt: ServeRuntime, c: PostedCompletion, where: string): void {
  if (!rt.tokenStats || c.entropies || c.meanLogprobs) return;
  throw new CorlError(
    'CORL_ERR_SERVE_BAD_REQUEST',
    `expected ${where} to carry per-token statistics (entropies or meanLogprobs, one per generated token) because "${rt.config.reward.use}" reads them, got none`,
    { where },
  );
}

function publicAnswer(a: GroupAnswer): unknown {
  const { agree: _agree, ...rest } = a;
  return rest;
}

function send(res: http.ServerResponse, status: number, value: unknown): void {
  sendText(res, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

function sendText(res: http.ServerResponse, status: number, text: string, type: string): void {
  const closing = (res.req.socket as unknown as { server?: Record<symbol, unknown> }).server?.[STOPPING] === true;
  // The text goes to the socket as is (encoded once there, not copied into a Buffer first).
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(text),
    ...(closing ? { connection: 'close' } : {}),
  });
  res.end(text);
}

function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const tooLarge = (n: number | string): CorlError =>
      new CorlError('CORL_ERR_SERVE_TOO_LARGE', `expected a body of at most ${limit} bytes, got ${n}`, {
        where: 'body',
      });
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      return reject(tooLarge(declared));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge(`more than ${limit}`));
        return;
      }
      chunks.push(c);
    });
    req.on('error', (e) => {
      if (!failed) {
        failed = true;
        reject(
          new CorlError('CORL_ERR_SERVE_BAD_REQUEST', `expected a complete request body, got ${e.message}`, {
            where: 'body',
          }),
        );
      }
    });
    req.on('end', () => {
      if (failed) return;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      // Invalid bytes would each decode to U+FFFD: two different ids or answers would become one.
      if (!isUtf8(bytes)) {
        reject(
          new CorlError('CORL_ERR_SERVE_BAD_JSON', 'expected a JSON body in UTF-8, got bytes that are not UTF-8', {
            where: 'body',
          }),
        );
        return;
      }
      const text = bytes.toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch (e) {
        reject(
          new CorlError(
            'CORL_ERR_SERVE_BAD_JSON',
            `expected a JSON body, got ${text.length === 0 ? 'an empty body' : (e as Error).message}`,
            { where: 'body' },
          ),
        );
      }
    });
  });
}
