// serve.maxConnections: a connection over the cap gets one answer (GET /health as usual, anything
// else a coded 503) and is closed, changing nothing; past the spare ones it is closed unanswered;
// the connections within the cap keep working, and a freed place admits a new one.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { boxed, ringServeConfig, startServer } from '../../fixtures/serve';

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** One raw keep-alive connection: requests are sent one after another and their answers read in order. */
class Conn {
  readonly socket: net.Socket;
  private buffer = Buffer.alloc(0);
  private waiting?: { resolve: (r: Reply) => void; reject: (e: Error) => void };
  /** Resolves when the server has closed the connection, with every byte it sent. */
  readonly closed: Promise<string>;
  private all = '';

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.closed = new Promise((resolve) => {
      this.socket.on('close', () => resolve(this.all));
    });
    this.socket.on('error', () => undefined); // a reset shows as 'close'
    this.socket.on('data', (d: Buffer) => {
      this.all += d.toString('latin1');
      this.buffer = Buffer.concat([this.buffer, d]);
      this.take();
    });
    this.socket.on('close', () => this.waiting?.reject(new Error('connection closed before an answer')));
  }

  connected(): Promise<void> {
    return new Promise((resolve) => (this.socket.connecting ? this.socket.once('connect', resolve) : resolve()));
  }

  request(method: string, route: string, body?: unknown): Promise<Reply> {
    const text = body === undefined ? '' : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(
        `${method} ${route} HTTP/1.1\r\nHost: test\r\n` +
          (body === undefined
            ? ''
            : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n`) +
          `\r\n${text}`,
      );
    });
  }

  private take(): void {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0 || !this.waiting) return;
    const head = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return;
    const text = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(end + 4 + length);
    const w = this.waiting;
    this.waiting = undefined;
    w.resolve({
      status: Number(head[0]!.split(' ')[1]),
      headers,
      body: (headers['content-type'] ?? '').startsWith('application/json') ? JSON.parse(text) : text,
    });
  }

  end(): void {
    this.socket.end();
  }
}

describe('serve: maxConnections', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  const conns: Conn[] = [];
  beforeEach(() => {
    tmp = tempDir('corl-serve-conns-');
  });
  afterEach(async () => {
    for (const c of conns.splice(0)) c.socket.destroy();
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  async function open(port: number): Promise<Conn> {
    const c = new Conn(port);
    conns.push(c);
    await c.connected();
    return c;
  }

  /** Everything a refused connection must leave as it was, read over a connection within the cap. */
  async function state(via: Conn): Promise<unknown> {
    const prom = (await via.request('GET', '/metrics')).body as string;
    const metric = (series: string): number | undefined => {
      const line = prom.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    return {
      newest: metric('corl_serve_exchange_newest_step'),
      slots: metric('corl_serve_exchange_slots'),
      records: metric('corl_serve_journal_records_total'),
      journal: fs.readFileSync(path.join(tmp.dir, 'journal.jsonl'), 'utf8'),
    };
  }

  async function refused(via: Conn, outcome: string): Promise<number> {
    const prom = (await via.request('GET', '/metrics')).body as string;
    const series = `corl_serve_connections_refused_total{outcome="${outcome}"}`;
    const line = prom.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  }

  it('over the cap: GET /health answered, anything else a coded 503, then closed; state unchanged; a freed place admits again', async () => {
    server = await startServer(ringServeConfig({ maxConnections: 3, exchange: { wait: 10 } }), tmp.dir);
    const port = server.address.port;
    // Three connections fill the cap; a request on each makes sure the service has counted it.
    const [a, b, watch] = [await open(port), await open(port), await open(port)];
    for (const c of [a, b, watch]) expect((await c.request('GET', '/health')).status).to.equal(200);
    const step0 = await Promise.all([
      a.request('POST', '/v1/groups', { agent: 'a', step: 0, groups: [boxed('p0', ['1', '1', '2'])] }),
      b.request('POST', '/v1/groups', { agent: 'b', step: 0, groups: [boxed('p0', ['2', '2', '1'])] }),
    ]);
    expect(step0.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(step0[0]!.body.groups[0]).to.deep.include({ label: '2', rewards: [0, 0, 1], source: 'supervisors' });
    const before = await state(watch);

    // A fourth connection: a post that would add a step is refused with a coded 503 and the connection closed.
    const over = await open(port);
    const r = await over.request('POST', '/v1/groups', {
      agent: 'a',
      step: 1,
      groups: [boxed('p1', ['7', '7', '7'])],
    });
    expect(r.status).to.equal(503);
    expect(r.body.error).to.include({ code: 'CORL_ERR_SERVE_BUSY', where: 'connection' });
    expect(r.body.error.message).to.contain('serve.maxConnections');
    expect(r.headers).to.include({ connection: 'close', 'retry-after': '1' });
    await over.closed;
    // Another one still learns that the service is alive, and is closed after that answer.
    const probe = await open(port);
    const h = await probe.request('GET', '/health');
    expect(h.status).to.equal(200);
    expect(h.body.status).to.equal('ok');
    expect(h.headers.connection).to.equal('close');
    await probe.closed;

    // Nothing changed, and the connections within the cap go on: a retry gets the stored answer.
    expect(await state(watch)).to.deep.equal(before);
    expect(await refused(watch, 'answered')).to.equal(2);
    const retry = await a.request('POST', '/v1/groups', {
      agent: 'a',
      step: 0,
      groups: [boxed('p0', ['1', '1', '2'])],
    });
    expect(retry.body.groups).to.deep.equal(step0[0]!.body.groups);
    expect((await watch.request('GET', '/health')).status).to.equal(200);

    // A freed place admits a new connection (once the service has seen the close).
    a.end();
    await a.closed;
    let fresh: Conn | undefined;
    for (let attempt = 0; attempt < 200 && !fresh; attempt++) {
      const c = await open(port);
      const m = await c.request('GET', '/metrics');
      if (m.status === 200) fresh = c;
      else {
        expect(m.body.error.code).to.equal('CORL_ERR_SERVE_BUSY');
        await c.closed;
      }
    }
    expect(fresh, 'a connection admitted after one closed').to.not.equal(undefined);
    const step1 = await Promise.all([
      fresh!.request('POST', '/v1/groups', { agent: 'a', step: 1, groups: [boxed('p1', ['3', '3', '4'])] }),
      b.request('POST', '/v1/groups', { agent: 'b', step: 1, groups: [boxed('p1', ['4', '4', '3'])] }),
    ]);
    expect(step1.map((x) => x.status)).to.deep.equal([200, 200]);
    expect(step1[1]!.body.groups[0]).to.deep.include({ label: '3', rewards: [0, 0, 1], source: 'supervisors' });
  });

  it('past the spare connections, one is closed without an answer; the held ones keep answering', async () => {
    // Cap 2: two spare connections over it are read (each answered once), a fifth is closed at once.
    server = await startServer(ringServeConfig({ maxConnections: 2 }), tmp.dir);
    const port = server.address.port;
    const held = [await open(port), await open(port)];
    for (const c of held) expect((await c.request('GET', '/health')).status).to.equal(200);
    const spare = [await open(port), await open(port)];
    const dropped = await open(port);
    expect(await dropped.closed).to.equal('');
    for (const c of spare) {
      const r = await c.request('POST', '/v1/groups', { agent: 'a', step: 0, groups: [boxed('p0', ['1'])] });
      expect(r.body.error.code).to.equal('CORL_ERR_SERVE_BUSY');
      await c.closed;
    }
    expect(await refused(held[0]!, 'dropped')).to.equal(1);
    expect(await refused(held[0]!, 'answered')).to.equal(2);
    expect((await held[1]!.request('GET', '/health')).status).to.equal(200);
    const journal = fs.readFileSync(path.join(tmp.dir, 'journal.jsonl'), 'utf8').split('\n');
    expect(journal).to.have.length(2); // the header alone: no refused post left a record
  });
});
