// `corl serve`: the reward plugins of a config over HTTP, and the cross-agent label exchange.
// Routes and fields: docs/guide/serve.md.
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as path from 'node:path';
import { CorlError, isCorlError, type ErrorCode } from '../errors';
import { CORL_VERSION } from '../version';
import { GetRewardScorer } from './barrier';
import { Credentials, type Caller } from './identity';
import { Exchange, type RetainRule } from './exchange';
import { Journal, type JournalCohort } from './journal';
import { ServeMetrics } from './prom';
import { parseGetRewardRequest, parseGroupsRequest } from './requests';
import { checkReplay } from './restore';
import { Scorer, summarize, type GroupAnswer } from './scorer';
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
  CORL_ERR_SERVE_UNKNOWN_AGENT: 422,
  CORL_ERR_SERVE_GROUP_SIZE: 422,
  CORL_ERR_SERVE_REWARD_FAILED: 500,
  CORL_ERR_SERVE_INTERNAL: 500,
  CORL_ERR_SERVE_UNAVAILABLE: 503,
  CORL_ERR_SERVE_BUSY: 503,
  CORL_ERR_SERVE_PEER_TIMEOUT: 504,
};

/** The HTTP status a coded error is answered with. */
export function statusOf(e: CorlError): number {
  if (e.code === 'CORL_ERR_SERVE_NOT_FOUND' && e.data?.method) return 405;
  return STATUS[e.code] ?? 500;
}

/**
 * Connections past `serve.maxConnections` that are still read (at most this many, or the cap if
 * smaller): each gets one answer (GET /health, else a coded 503) and is closed. Beyond them Node
 * closes a connection at once, so open files stay bounded by the cap plus this spare.
 */
export const SPARE_CONNECTIONS = 16;

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
  readonly metrics = new ServeMetrics();
  private readonly scorer: Scorer;
  private readonly groups: Exchange;
  private readonly getReward: GetRewardScorer;
  private readonly started = Date.now();
  private inflight = 0;
  private stopping?: Promise<void>;
  /** Open connections within `serve.maxConnections`. */
  private connections = 0;
  /** Connections that arrived over the cap: answered once, then closed. */
  private readonly overCap = new WeakSet<object>();

  private constructor(
    readonly runtime: ServeRuntime,
    private readonly journal: Journal,
    private readonly server: http.Server,
    private readonly credentials: Credentials,
    readonly tornTail: boolean,
    records: Parameters<Exchange['restore']>[0],
  ) {
    const s = runtime.settings;
    this.scorer = new Scorer(runtime);
    const events = {
      wait: (seconds: number, arrived: boolean) => {
        this.metrics.waits.inc({ outcome: arrived ? 'arrived' : 'timeout' });
        this.metrics.waitSeconds.observe(seconds);
      },
      fallback: (kind: string) => this.metrics.fallbacks.inc({ kind }),
      replay: () => this.metrics.replays.inc(),
    };
    this.groups = new Exchange(
      runtime,
      this.scorer,
      journal,
      {
        namespace: 'groups',
        waitMs: s.exchange.wait * 1000,
        fallback: s.exchange.fallback,
        keepSteps: s.exchange.keepSteps,
        startStep: s.exchange.startStep,
        maxStepsAhead: s.exchange.maxStepsAhead,
        maxGroupsPerStep: s.exchange.maxGroupsPerStep,
      },
      events,
    );
    const getRewardExchange = new Exchange(
      runtime,
      this.scorer,
      journal,
      {
        namespace: 'get_reward',
        waitMs: s.exchange.wait * 1000,
        fallback: s.exchange.fallback,
        keepSteps: Infinity,
        keepRounds: s.getReward.keepRounds,
      },
      events,
    );
    this.groups.restore(records);
    getRewardExchange.restore(records);
    this.getReward = new GetRewardScorer(runtime, this.scorer, getRewardExchange, this.metrics);
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
      'the newest step of POST /v1/groups (posts may run serve.exchange.maxStepsAhead beyond it)',
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
      'corl_serve_uptime_seconds',
      'seconds since the service started',
      () => (Date.now() - this.started) / 1000,
    );
    server.on('connection', (socket: Socket) => {
      if (this.connections >= s.maxConnections) {
        this.overCap.add(socket);
        this.metrics.connectionsRefused.inc({ outcome: 'answered' });
        return;
      }
      this.connections++;
      socket.once('close', () => this.connections--);
    });
    server.on('drop', () => this.metrics.connectionsRefused.inc({ outcome: 'dropped' }));
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
      const cohort: JournalCohort = {
        agents: runtime.agents,
        topology: served.config.topology.use,
        reward: served.config.reward.use,
      };
      let opened: {
        journal: Journal;
        replay: { records: Parameters<Exchange['restore']>[0]; tornTail: boolean; notes: readonly string[] };
      };
      if (runtime.journalFile === undefined) {
        opened = {
          journal: Journal.disabled(),
          replay: {
            records: [],
            tornTail: false,
            notes: ['journal: none (serve.journal is false): labels live in memory only and are lost at restart'],
          },
        };
      } else {
        const file = runtime.journalFile;
        opened = await Journal.open(file, cohort, (replay) => {
          // Nothing is rewritten before every record has been checked: a refusal leaves the file as it was.
          const { newest: reached } = checkReplay(replay, file, {
            agents: runtime.agents,
            maxStepsAhead: settings.exchange.maxStepsAhead,
          });
          const newest = Math.max(settings.exchange.startStep, reached ?? -1);
          const keep = (n: string): RetainRule =>
            n === 'groups'
              ? { steps: settings.exchange.keepSteps, newest }
              : { steps: Infinity, rounds: settings.getReward.keepRounds };
          return {
            keep: Exchange.retain(replay.records, keep),
            exchange: { newest, maxStepsAhead: settings.exchange.maxStepsAhead },
          };
        });
      }
      journal = opened.journal;
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
      // Node closes connections beyond this at once; the spare ones over the cap get a coded 503.
      const spare = Math.min(SPARE_CONNECTIONS, settings.maxConnections);
      server.maxConnections = settings.maxConnections + spare;
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
      const rs = new RewardServer(runtime, journal, server, credentials, opened.replay.tornTail, opened.replay.records);
      for (const note of credentials.startNotes(host)) options.log?.(note);
      for (const note of opened.replay.notes) options.log?.(note);
      if (opened.replay.tornTail)
        options.log?.(
          `journal: dropped a torn last line of ${runtime.journalFile} (the previous service stopped mid-write; that write was never acknowledged)`,
        );
      if (runtime.journalFile !== undefined)
        options.log?.(`journal: ${runtime.journalFile} (${opened.replay.records.length} record(s) restored)`);
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
    const [pathname = '/', search = ''] = (req.url ?? '/').split('?', 2);
    const route = ['/health', '/metrics', '/v1/groups', '/get_reward'].includes(pathname) ? pathname : 'other';
    this.inflight++;
    let status = 200;
    try {
      if (this.stopping)
        throw new CorlError('CORL_ERR_SERVE_UNAVAILABLE', 'expected a running service, got one shutting down');
      const method = route === '/health' || route === '/metrics' ? 'GET' : 'POST';
      if (route === 'other')
        throw new CorlError(
          'CORL_ERR_SERVE_NOT_FOUND',
          `expected one of POST /get_reward, POST /v1/groups, GET /health, GET /metrics; got ${req.method} ${pathname}`,
          { where: pathname },
        );
      if (req.method !== method)
        throw new CorlError('CORL_ERR_SERVE_NOT_FOUND', `expected ${method} ${pathname}, got ${req.method}`, {
          where: pathname,
          data: { method },
        });
      if (this.overCap.has(req.socket)) {
        // One answer, then the connection closes: /health still tells a probe the service lives.
        res.setHeader('connection', 'close');
        if (route !== '/health') {
          res.setHeader('retry-after', '1');
          throw new CorlError(
            'CORL_ERR_SERVE_BUSY',
            `expected at most ${this.runtime.settings.maxConnections} open connections (serve.maxConnections), got one more`,
            {
              where: 'connection',
              hint: 'reuse keep-alive connections and retry after a moment, or raise serve.maxConnections',
            },
          );
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
      const body = await readJson(req, this.runtime.settings.maxBodyBytes);
      if (route === '/v1/groups') return send(res, 200, await this.postGroups(body, caller));
      return send(res, 200, await this.postGetReward(body, params, caller));
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
      this.inflight--;
      if (this.stopping) this.server.closeIdleConnections();
      const code = status === 200 ? res.statusCode : status;
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

  private async postGroups(body: unknown, caller: Caller): Promise<unknown> {
    const rt = this.runtime;
    const req = parseGroupsRequest(body, {
      maxGroups: rt.settings.exchange.maxGroupsPerStep,
      maxCompletions: rt.settings.maxCompletions,
      maxRequestCompletions: rt.settings.maxRequestCompletions,
      maxTestInputs: rt.settings.maxTestInputs,
    });
    const agent = this.credentials.agentOf(caller, this.agent(req.agent, 'agent'), 'agent')!;
    const K = rt.settings.groupSize;
    req.groups.forEach((g, i) => {
      if (K > 0 && g.completions.length !== K) {
        throw new CorlError(
          'CORL_ERR_SERVE_GROUP_SIZE',
          `expected ${K} completions in group "${g.id}" (serve.groupSize), got ${g.completions.length}`,
          { where: `groups[${i}].completions` },
        );
      }
      if (rt.supervised && g.reference === undefined) {
        throw new CorlError(
          'CORL_ERR_SERVE_BAD_REQUEST',
          `expected groups[${i}].reference because "${rt.config.reward.use}" reads ground truth, got nothing`,
          { where: `groups[${i}].reference` },
        );
      }
    });
    const answers = await this.groups.post(
      agent,
      req.step,
      req.groups,
      req.wait === undefined ? undefined : req.wait * 1000,
    );
    this.metrics.completions.inc(
      { route: '/v1/groups' },
      answers.reduce((s, a) => s + a.rewards.length, 0),
    );
    return { agent: rt.agents[agent], step: req.step, groups: answers.map(publicAnswer), metrics: summarize(answers) };
  }

  private async postGetReward(body: unknown, params: URLSearchParams, caller: Caller): Promise<unknown> {
    const rt = this.runtime;
    const req = parseGetRewardRequest(body, rt.settings.maxRequestCompletions);
    const name = params.get('agent');
    const named =
      name === null
        ? undefined
        : this.agent(
            /^\d+$/.test(name) && rt.agentIndex(name) === undefined ? Number(name) : name,
            'agent (query parameter)',
          );
    // With agent tokens the token says who posts; otherwise ?agent=, else serve.getReward.agent, else the first.
    const agent =
      this.credentials.agentOf(caller, named, 'agent (query parameter)') ??
      rt.agentIndex(rt.settings.getReward.agent ?? rt.agents[0]!)!;
    const samples = req.query.map((query, i) => ({ query, prompt: req.prompts?.[i], label: req.labels?.[i] }));
    const results = await this.getReward.score(agent, samples);
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
      supervised: rt.supervised,
      pointwise: rt.pointwise,
      groupSize: s.groupSize,
      maxCompletions: s.maxCompletions,
      exchange: { ...s.exchange, slots: this.groups.size, newestStep: this.groups.newest },
      getReward: {
        groupSize: s.getReward.groupSize,
        wait: s.getReward.wait,
        groupBy: s.getReward.groupBy,
        agent: s.getReward.agent ?? rt.agents[0],
      },
      journal: { file: rt.journalFile ?? null, written: this.journal.written },
      auth: this.credentials.mode,
      uptimeSeconds: (Date.now() - this.started) / 1000,
    };
  }
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
      const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8');
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
