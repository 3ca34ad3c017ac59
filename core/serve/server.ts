// `corl serve`: the reward plugins of a config over HTTP, and the cross-agent label exchange.
// Routes and fields: docs/guide/serve.md.
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as path from 'node:path';
import type { Duplex } from 'node:stream';
import { CorlError, isCorlError } from '../errors';
import { GetRewardScorer } from './barrier';
import { boardDir, ServeBoard } from './board';
import { ConnectionTable, HeldRequests, type Cap } from './connections';
import { LINGER_BYTES, lingerClose, lingerOnClose, type LingerBounds } from './linger';
import { Credentials, type Caller } from './identity';
import type { Exchange } from './exchange';
import { answerClientError, clientErrorOf, type LastRequest } from './client-errors';
import { errorJson, goneSignal, readJson, send, sendText, statusOf, STOPPING } from './http';
import { Journal, type ServeIdentity } from './journal';
import { ServeMetrics } from './prom';
import { requestId } from './ledger';
import {
  health,
  metricsText,
  METRICS_CONTENT_TYPE,
  PATHS,
  POST_ROUTES,
  type RequestContext,
  type Service,
} from './routes';
import { SampleScorer } from './samples';
import { openState, type ServeState } from './state';
import { buildServeRuntime, type LoadedServeConfig, type ServeRuntime } from './setup';

export { statusOf } from './http';

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

/**
 * Connections over a cap that are still read (at most this many, or `serve.maxConnections` if
 * smaller), waiting for their first request; a newer one closes the oldest. A request takes the
 * place of a held connection without work, else it gets one answer (GET /health, else a coded 503)
 * and its connection is closed. So open files stay bounded by the cap plus this spare.
 */
export const SPARE_CONNECTIONS = 64;

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
  /** What the routes (core/serve/routes/) are given. */
  private readonly service: Service;
  private readonly groups: Exchange;
  /** The exchange of groups without a step (POST /get_reward, POST /v1/samples without one). */
  private readonly rounds: Exchange;
  private readonly getReward: GetRewardScorer;
  private readonly samples: SampleScorer;
  private readonly journal: Journal;
  private readonly board: ServeBoard;
  /** A torn last line of the journal was dropped at start. */
  readonly tornTail: boolean;
  private inflight = 0;
  private stopping?: Promise<void>;
  /** Open connections within `serve.maxConnections` and `serve.maxConnectionsPerPeer`. */
  private readonly table: ConnectionTable;
  /** Connections that arrived over a cap with nothing to close for them: answered once, then closed. */
  private readonly overCap = new WeakMap<object, Cap>();
  /** POST requests in progress per agent, within serve.maxHeldPerAgent. */
  private readonly held: HeldRequests;
  /** The request each connection carried last (a client error on it is answered after it, never instead). */
  private readonly last = new WeakMap<object, LastRequest>();
  /** Connections answered with `connection: close`: nothing more they send is handled as a request. */
  private readonly closing = new WeakSet<object>();
  /** Connections whose client error was answered (Node's parser reports it again for every later chunk). */
  private readonly spent = new WeakSet<object>();

  private constructor(
    readonly runtime: ServeRuntime,
    state: ServeState,
    private readonly server: http.Server,
    private readonly credentials: Credentials,
    readonly metrics: ServeMetrics,
    board: ServeBoard,
  ) {
    const s = runtime.settings;
    this.board = board;
    this.held = new HeldRequests(runtime.maxHeld, runtime.agents.length);
    this.groups = state.groups;
    this.rounds = state.rounds;
    this.journal = state.journal;
    this.tornTail = state.tornTail;
    const getRewardExchange = state.rounds;
    const journal = state.journal;
    this.getReward = new GetRewardScorer(runtime, state.scorer, getRewardExchange, metrics, board);
    // POST /v1/samples forms groups and hands them to the same exchanges: with a step, the one of
    // POST /v1/groups; without, the one of POST /get_reward (rounds per group id).
    this.samples = new SampleScorer(
      runtime,
      state.scorer,
      { steps: this.groups, rounds: getRewardExchange },
      metrics,
      state.late,
      state.pointwise,
      board,
    );
    this.service = {
      runtime,
      credentials,
      metrics,
      groups: this.groups,
      getReward: this.getReward,
      samples: this.samples,
      replies: state.replies,
      groupIds: state.groupIds,
      journal,
      started: Date.now(),
    };
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
      'corl_serve_deferred_samples',
      'POST /v1/samples deferred samples held: waiting for their answer, or answered and not yet collected',
      () => this.samples.deferred,
    );
    this.metrics.gauge(
      'corl_serve_sample_waiters',
      'requests waiting on POST /v1/samples samples whose groups are still forming (a retry still open counts; one closed, never)',
      () => this.samples.sampleWaiters,
    );
    this.metrics.gauge(
      'corl_serve_parked_waits',
      'POST /v1/samples/wait requests held open until one of their samples has its answer',
      () => this.samples.parkedWaits,
    );
    this.metrics.gauge('corl_serve_open_connections', 'client connections open now', () => this.table.open);
    this.metrics.gauge(
      'corl_serve_open_connections_peak',
      'the most client connections open at once since the service started',
      () => this.table.peak,
    );
    this.metrics.gauge(
      'corl_serve_uptime_seconds',
      'seconds since the service started',
      () => (Date.now() - this.service.started) / 1000,
    );
    this.table = new ConnectionTable(
      s.maxConnections,
      s.maxConnectionsPerPeer,
      Math.min(SPARE_CONNECTIONS, s.maxConnections),
      {
        evicted: (cap) => this.metrics.connectionsEvicted.inc({ reason: cap }),
        dropped: () => this.metrics.connectionsRefused.inc({ outcome: 'dropped' }),
      },
      Math.max(1, Math.floor(Math.min(s.maxConnections, s.maxConnectionsPerPeer) / runtime.agents.length)),
      credentials.mode === 'agents',
    );
    this.agentGauges();
    server.on('connection', (socket: Socket) => {
      const cap = this.table.add(socket);
      if (cap) this.overCap.set(socket, cap);
    });
    server.on('request', (req, res) => {
      void this.handle(req, res);
    });
    // Malformed HTTP gets a coded 400 (431 for headers over Node's limit); a client too slow with
    // its headers or body a coded 408; then the connection closes (core/serve/client-errors.ts).
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.clientError(err, socket));
  }

  /** The per-agent gauges of GET /metrics: connections held and POST requests in progress. */
  private agentGauges(): void {
    const runtime = this.runtime;
    this.metrics.labeledGauge(
      'corl_serve_agent_connections',
      'client connections held for each agent (those whose last request carried its token, or named it)',
      () => runtime.agents.map((agent, i) => ({ labels: { agent }, value: this.table.ofAgent(i) })),
    );
    this.metrics.labeledGauge(
      'corl_serve_agent_held_requests',
      'POST requests of each agent in progress now (within serve.maxHeldPerAgent)',
      () => runtime.agents.map((agent, i) => ({ labels: { agent }, value: this.held.of(i) })),
    );
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
      const board = await ServeBoard.open(runtime, runtime.sinks, runtime.sinkNames, metrics, {
        file: runtime.journalFile === undefined ? undefined : `${runtime.journalFile}.points.json`,
        dir: boardDir(runtime),
        ...(options.log ? { log: options.log } : {}),
      });
      const state = await openState(
        runtime,
        identity,
        {
          wait: (seconds: number, arrived: boolean) => {
            metrics.waits.inc({ outcome: arrived ? 'arrived' : 'timeout' });
            metrics.waitSeconds.observe(seconds);
          },
          fallback: (kind: string) => metrics.fallbacks.inc({ kind }),
          unseen: (count: number) => metrics.unseen.inc({}, count),
          replay: () => metrics.replays.inc(),
          graded: (agent, labelRight, rewardRight) => {
            const labels = { agent: runtime.agents[agent]! };
            if (labelRight !== undefined) {
              metrics.labelsGraded.inc(labels);
              metrics.labelsRight.inc(labels, labelRight);
            }
            if (rewardRight) {
              metrics.rewardsGraded.inc(labels, rewardRight.length);
              metrics.rewardsRight.inc(
                labels,
                rewardRight.reduce((a, b) => a + b, 0),
              );
            }
          },
          decided: (namespace, agent, step, answer) =>
            board.decided(agent, namespace === 'groups' ? { step } : 'stepless', answer),
        },
        board,
      );
      board.restored();
      journal = state.journal;
      const server = http.createServer({
        keepAlive: true,
        // Slow or stuck clients are cut (HTTP 408) so that they cannot hold connections, and the
        // open files behind them, forever: headers, then the whole request, each in bounded time.
        // Node takes whole milliseconds (a fraction is a RangeError): rounded up, at least 1.
        headersTimeout: wholeMs(t.headers),
        requestTimeout: wholeMs(t.body),
        keepAliveTimeout: wholeMs(t.idle),
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.round(Math.min(t.headers, t.body) * 250))),
      });
      server.keepAliveTimeout = wholeMs(t.idle);
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
      const rs = new RewardServer(runtime, state, server, credentials, metrics, board);
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

  /** A connection's bytes Node's parser refused, or a client too slow: one coded answer, then the connection closes. */
  private clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    if (this.spent.has(socket)) return;
    this.spent.add(socket);
    this.closing.add(socket);
    const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT';
    this.metrics.clientErrors.inc({ reason: timeout ? 'timeout' : 'malformed' });
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const t = this.runtime.settings.timeouts;
    answerClientError(socket, clientErrorOf(err, t), this.last.get(socket), wholeMs(t.headers));
  }

  /** How long and how much a closing connection goes on reading and dropping what its client sends. */
  private get linger(): LingerBounds {
    const s = this.runtime.settings;
    return { bytes: Math.max(LINGER_BYTES, s.maxBodyBytes), ms: wholeMs(s.timeouts.body) };
  }

  /**
   * Answer with `connection: close`, handle nothing more from the connection, and close it once the
   * answer is sent: by lingering (core/serve/linger.ts), so that a client still sending its body
   * reads the answer rather than a TCP reset.
   */
  private closeAfter(res: http.ServerResponse): void {
    const socket = res.req.socket;
    res.setHeader('connection', 'close');
    if (this.closing.has(socket)) return;
    this.closing.add(socket);
    lingerOnClose(socket, res.req, this.linger);
  }

  /** Read and drop a body the service answered without reading; past `limit` bytes, close its connection (lingering) after the answer. */
  private dropBody(req: http.IncomingMessage, limit: number): void {
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit || this.closing.has(req.socket)) return;
      this.closing.add(req.socket);
      lingerClose(req.socket, req, this.linger);
    });
    req.on('error', () => undefined);
    req.resume();
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
      this.rounds.close();
      this.getReward.shutdown();
      this.samples.shutdown();
      this.server.closeIdleConnections();
      // Requests woken above answer with "connection: close"; anything still open after a grace
      // period (a client that never reads its answer) is cut.
      const grace = setTimeout(() => this.server.closeAllConnections(), 5000);
      await closed;
      clearTimeout(grace);
      await this.journal.close();
      // The open steps' points, then the sinks (closed with the plugins).
      await this.board.close();
      await this.runtime.close();
    })();
    return this.stopping;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // A request read after the connection was answered with `connection: close` (pipelined behind
    // a 413, say) is never handled: the connection closes once that answer is sent.
    if (this.closing.has(req.socket)) return;
    this.last.set(req.socket, { req, res });
    const t0 = performance.now();
    const gone = goneSignal(res);
    const [pathname = '/', search = ''] = (req.url ?? '/').split('?', 2);
    const route = PATHS.includes(pathname) ? pathname : 'other';
    this.inflight++;
    let status = 200;
    let working = false;
    let read = false;
    let admitted: number | undefined;
    const limit = this.runtime.settings.maxBodyBytes;
    // A body declared over the limit is not read, whatever the answer: the connection closes after it.
    if (Number(req.headers['content-length']) > limit) this.closeAfter(res);
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
      const params = new URLSearchParams(search);
      // Who the request comes from, before it takes a place: an agent's token proves it. (A bad
      // token is answered once the place is settled.) OpenRLHF cannot set headers: POST
      // /get_reward also takes the token as ?token=.
      let caller: Caller | undefined;
      let unauthorized: unknown;
      if (route !== '/health')
        try {
          caller = this.credentials.authenticate(
            req.headers.authorization,
            route === '/get_reward' ? params.get('token') : undefined,
          );
        } catch (e) {
          unauthorized = e;
        }
      const agent = caller?.kind === 'agent' ? caller.agent : undefined;
      // A connection over a cap takes the place of one without work when it sends a request.
      const refused = this.overCap.has(req.socket) ? this.table.promote(req.socket, agent) : undefined;
      this.table.seen(req.socket);
      if (agent !== undefined) this.table.claim(req.socket, agent);
      if (refused === undefined) this.overCap.delete(req.socket);
      else {
        this.metrics.connectionsRefused.inc({ outcome: 'answered' });
        // One answer, then the connection closes: /health still tells a probe the service lives.
        this.closeAfter(res);
        if (route !== '/health') {
          res.setHeader('retry-after', '1');
          throw busy(refused, this.runtime.settings, req.socket.remoteAddress ?? '');
        }
      }
      if (route === '/health') return send(res, 200, health(this.service));
      if (caller === undefined) throw unauthorized;
      if (route === '/metrics') return sendText(res, 200, metricsText(this.service), METRICS_CONTENT_TYPE);
      const ctx: RequestContext = {
        caller,
        id: requestId(req.headers['idempotency-key']),
        gone,
        params,
        admit: (agent) => {
          if (admitted !== undefined) return;
          if (!this.held.take(agent)) {
            // Its place goes back at once: another agent on this host may take it.
            this.closeAfter(res);
            res.setHeader('retry-after', '1');
            throw heldBusy(this.runtime, agent);
          }
          admitted = agent;
          this.table.claim(req.socket, agent);
        },
      };
      read = true;
      const body = await readJson(req, limit);
      // From here the service works for this request: its connection is not given up for another.
      this.table.busy(req.socket);
      working = true;
      return send(res, 200, await POST_ROUTES[route]!(this.service, body, ctx));
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
      if (tooLarge && !res.headersSent) this.closeAfter(res);
      if (status === 401) res.setHeader('www-authenticate', 'Bearer');
      if (!res.headersSent) send(res, status, errorJson(err));
      // An answer already sent in full (a client error answered this request) stays as it is.
      else if (!res.writableEnded) res.destroy();
    } finally {
      // Answered before its body was read: the rest is read and dropped (so the connection stays
      // usable), at most maxBodyBytes of it (more closes the connection) and within
      // timeouts.body of its start (Node's request timeout; the connection is then closed).
      if (!read && !req.complete && !this.closing.has(req.socket)) this.dropBody(req, limit);
      if (working) this.table.done(req.socket);
      if (admitted !== undefined) this.held.release(admitted);
      this.inflight--;
      if (this.stopping) this.server.closeIdleConnections();
      // A client that left before its answer was sent counts as 499, whatever was computed for it.
      const code = gone.aborted ? 499 : status === 200 ? res.statusCode : status;
      this.metrics.requests.inc({ route, status: String(code) });
      this.metrics.latency.observe((performance.now() - t0) / 1000, { route });
    }
  }
}

/** Seconds as the whole milliseconds Node's server timeouts take (at least 1). */
function wholeMs(seconds: number): number {
  return Math.max(1, Math.ceil(seconds * 1000));
}

/** The answer of a request of an agent that has serve.maxHeldPerAgent requests in progress already. */
function heldBusy(rt: ServeRuntime, agent: number): CorlError {
  return new CorlError(
    'CORL_ERR_SERVE_BUSY',
    `expected at most ${rt.maxHeld} requests of agent "${rt.agents[agent]}" in progress at once (serve.maxHeldPerAgent${rt.settings.maxHeldPerAgent === undefined ? `, its share of min(serve.maxConnections, serve.maxConnectionsPerPeer) among ${rt.agents.length} agents` : ''}), got one more`,
    {
      where: 'connection',
      hint: 'retry after a moment; collect many samples with deferred samples and one POST /v1/samples/wait, or raise serve.maxHeldPerAgent with serve.maxConnectionsPerPeer',
    },
  );
}

/** The answer of a connection over a cap with no idle connection to close for it. */
function busy(refused: Cap, s: ServeRuntime['settings'], peer: string): CorlError {
  return new CorlError(
    'CORL_ERR_SERVE_BUSY',
    refused === 'peer'
      ? `expected at most ${s.maxConnectionsPerPeer} open connections from ${peer} (serve.maxConnectionsPerPeer), got one more while none of them may give way (each has a request in progress, or is another agent's within its share of the places)`
      : `expected at most ${s.maxConnections} open connections (serve.maxConnections), got one more while none of them may give way (each has a request in progress, or is another agent's within its share of the places)`,
    {
      where: 'connection',
      hint: `reuse keep-alive connections and retry after a moment, or raise serve.${refused === 'peer' ? 'maxConnectionsPerPeer' : 'maxConnections'}`,
    },
  );
}
