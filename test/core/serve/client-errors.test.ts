// Early answers and Node's own client errors on a kept-alive connection (issue 39): the service
// answers before reading a body (404, 405, 401, 413), and Node's parser refuses bytes (a request
// line that is not HTTP, headers over its limit, bytes after a request that declared no body, as
// Node's own client sends for a HEAD or GET given a body without a length). Each is followed by a
// second request on the same socket, which is answered correctly or finds the socket closed: never
// a bare 400, never a second answer to one request, never a request the service did not mean to read.
import { expect } from 'chai';
import * as net from 'node:net';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { get, ringServeConfig, startServer } from '../../fixtures/serve';

const TOKEN = 'a-service-token-of-forty-characters-0123';
const AUTH = `authorization: Bearer ${TOKEN}\r\n`;
const HEALTH = 'GET /health HTTP/1.1\r\nhost: t\r\n\r\n';

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** A raw connection: bytes written as given, answers parsed in order, or 'closed' once the server closed it. */
class Raw {
  private readonly socket: net.Socket;
  private buffer = Buffer.alloc(0);
  private ended = false;
  private wake: () => void = () => undefined;
  readonly ready: Promise<void>;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.ready = new Promise((resolve) => this.socket.once('connect', () => resolve()));
    this.socket.on('data', (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.wake();
    });
    this.socket.on('error', () => undefined); // a reset shows as 'close'
    this.socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
  }

  write(bytes: string): void {
    this.socket.write(bytes);
  }

  /** The next answer (`head`: to a HEAD request, so without a body), or 'closed' when the server closed the connection first. */
  async next(head = false): Promise<Answer | 'closed'> {
    for (;;) {
      const answer = this.take(head);
      if (answer) return answer;
      if (this.ended) {
        expect(this.buffer.toString('latin1'), 'bytes that are no whole answer').to.equal('');
        return 'closed';
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private take(head: boolean): Answer | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const lines = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = head ? 0 : Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return undefined;
    const text = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(end + 4 + length);
    return { status: Number(lines[0]!.split(' ')[1]), headers, text };
  }
}

/** A coded JSON error answer with this status and code. */
function expectCoded(a: Answer | 'closed', status: number, code: string): void {
  expect(a, 'an answer').to.not.equal('closed');
  const answer = a as Answer;
  expect(answer.status, answer.text).to.equal(status);
  expect(answer.headers['content-type']).to.match(/^application\/json/);
  expect((JSON.parse(answer.text) as { error: { code: string } }).error.code).to.equal(code);
}

/** The second request's answer: GET /health, correct. */
function expectHealth(a: Answer | 'closed'): void {
  expect(a, 'an answer to the second request').to.not.equal('closed');
  const answer = a as Answer;
  expect(answer.status, answer.text).to.equal(200);
  expect(JSON.parse(answer.text)).to.deep.include({ status: 'ok', agents: ['a', 'b'] });
}

describe('serve: early answers and client errors on a kept-alive connection (issue 39)', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer;
  let conn: Raw;
  before(async () => {
    tmp = tempDir('corl-serve-wire-');
    server = await startServer(
      ringServeConfig({
        maxBodyBytes: 1024,
        timeouts: { headers: 1, body: 1 },
        exchange: { wait: 0.2, fallback: 'self' },
        samples: { wait: 0.2 },
      }),
      tmp.dir,
      { token: TOKEN },
    );
  });
  beforeEach(async () => {
    conn = new Raw(server.address.port);
    await conn.ready;
  });
  afterEach(() => conn.close());
  after(async () => {
    await server.close();
    tmp.cleanup();
  });

  const body = JSON.stringify({ agent: 'a', group: 'g', size: 2, completion: 'so \\boxed{2}' });
  const early: [string, string, number, string][] = [
    ['an unknown path', `POST /nope HTTP/1.1\r\nhost: t\r\n${AUTH}`, 404, 'CORL_ERR_SERVE_NOT_FOUND'],
    ['a wrong method', `PUT /v1/samples HTTP/1.1\r\nhost: t\r\n${AUTH}`, 405, 'CORL_ERR_SERVE_NOT_FOUND'],
    [
      'a bad token',
      `POST /v1/samples HTTP/1.1\r\nhost: t\r\nauthorization: Bearer nope\r\n`,
      401,
      'CORL_ERR_SERVE_UNAUTHORIZED',
    ],
  ];
  for (const [what, head, status, code] of early) {
    it(`${what}, answered before its body came: the body is dropped and the next request answered`, async () => {
      conn.write(`${head}content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
      expectCoded(await conn.next(), status, code);
      conn.write(body + HEALTH);
      expectHealth(await conn.next());
    });
  }

  it('a bad content type (a body that is no JSON) gets a coded 400 and the next request is answered', async () => {
    const text = 'agent=a&group=g';
    conn.write(
      `POST /v1/samples HTTP/1.1\r\nhost: t\r\n${AUTH}content-type: application/x-www-form-urlencoded\r\ncontent-length: ${text.length}\r\n\r\n${text}${HEALTH}`,
    );
    expectCoded(await conn.next(), 400, 'CORL_ERR_SERVE_BAD_JSON');
    expectHealth(await conn.next());
  });

  it('an oversized body gets a coded 413, then the connection closes: a request sent behind it is never read', async () => {
    const deferred = JSON.stringify({
      agent: 'a',
      defer: true,
      samples: [{ group: 'behind-413', size: 2, requestId: 'behind-413', completion: 'x' }],
    });
    conn.write(
      `POST /v1/samples HTTP/1.1\r\nhost: t\r\n${AUTH}content-type: application/json\r\ncontent-length: 2000\r\n\r\n` +
        'x'.repeat(2000) +
        `POST /v1/samples HTTP/1.1\r\nhost: t\r\n${AUTH}content-type: application/json\r\ncontent-length: ${deferred.length}\r\n\r\n${deferred}`,
    );
    expectCoded(await conn.next(), 413, 'CORL_ERR_SERVE_TOO_LARGE');
    expect(await conn.next()).to.equal('closed');
    const h = await get(server.url, '/health');
    expect(h.body.samples.deferred, 'the sample sent behind the 413 was never taken').to.equal(0);
  });

  it('a chunked body over maxBodyBytes after an early 404 closes the connection, without a second answer', async () => {
    conn.write(`POST /nope HTTP/1.1\r\nhost: t\r\n${AUTH}transfer-encoding: chunked\r\n\r\n`);
    expectCoded(await conn.next(), 404, 'CORL_ERR_SERVE_NOT_FOUND');
    conn.write(`7d0\r\n${'x'.repeat(2000)}\r\n0\r\n\r\n${HEALTH}`);
    expect(await conn.next()).to.equal('closed');
  });

  it('a body that never completes after an early 404 is cut by timeouts.body: closed, no 408 after the 404', async () => {
    conn.write(`POST /nope HTTP/1.1\r\nhost: t\r\n${AUTH}content-length: 100\r\n\r\n{"a"`);
    expectCoded(await conn.next(), 404, 'CORL_ERR_SERVE_NOT_FOUND');
    expect(await conn.next()).to.equal('closed');
  });

  it('bytes after a HEAD that declared no body (what node:http sends for a HEAD given a body) get a coded 400, not a bare one', async () => {
    conn.write(`HEAD /get_reward HTTP/1.1\r\nhost: t\r\n${AUTH}\r\nG${HEALTH}`);
    const head = await conn.next(true);
    expect(head !== 'closed' && head.status).to.equal(405);
    // "G" + "GET /health ..." is the next request line, and no HTTP method.
    expectCoded(await conn.next(), 400, 'CORL_ERR_SERVE_MALFORMED');
    expect(await conn.next()).to.equal('closed');
  });

  it('a request line that is not HTTP gets a coded 400, then the connection closes', async () => {
    conn.write(`POST /v1 samples HTTP/1.1\r\nhost: t\r\n\r\n${HEALTH}`);
    expectCoded(await conn.next(), 400, 'CORL_ERR_SERVE_MALFORMED');
    expect(await conn.next()).to.equal('closed');
  });

  it('headers over Node’s limit get a coded 431, then the connection closes', async () => {
    conn.write(`GET /health HTTP/1.1\r\nhost: t\r\nx-long: ${'y'.repeat(20_000)}\r\n\r\n`);
    expectCoded(await conn.next(), 431, 'CORL_ERR_SERVE_HEADERS_TOO_LARGE');
    expect(await conn.next()).to.equal('closed');
  });

  it('broken chunked framing of a body being read gets the request’s own coded 400', async () => {
    conn.write(`POST /v1/samples HTTP/1.1\r\nhost: t\r\n${AUTH}transfer-encoding: chunked\r\n\r\nzz\r\n`);
    expectCoded(await conn.next(), 400, 'CORL_ERR_SERVE_MALFORMED');
    expect(await conn.next()).to.equal('closed');
  });

  it('garbage pipelined behind a held request: the held request gets its own answer first, then a coded 400', async () => {
    const sample = JSON.stringify({ agent: 'a', group: 'held-1', size: 1, completion: 'so \\boxed{7}' });
    conn.write(
      `POST /v1/samples HTTP/1.1\r\nhost: t\r\n${AUTH}content-type: application/json\r\ncontent-length: ${sample.length}\r\n\r\n${sample}{garbage`,
    );
    const held = await conn.next();
    expect(held !== 'closed' && held.status, held !== 'closed' ? held.text : 'closed').to.equal(200);
    expect(JSON.parse((held as Answer).text)).to.deep.include({ agent: 'a', reward: 1, label: '7' });
    expectCoded(await conn.next(), 400, 'CORL_ERR_SERVE_MALFORMED');
    expect(await conn.next()).to.equal('closed');
  });

  it('a request too slow with its headers gets a coded 408', async () => {
    conn.write('GET /health HTTP/1.1\r\nhost: t\r\n');
    expectCoded(await conn.next(), 408, 'CORL_ERR_SERVE_CLIENT_TIMEOUT');
    expect(await conn.next()).to.equal('closed');
  });

  it('a body too slow (nothing answered yet) gets its own coded 408', async () => {
    conn.write(`POST /v1/samples HTTP/1.1\r\nhost: t\r\n${AUTH}content-length: 100\r\n\r\n{"a"`);
    expectCoded(await conn.next(), 408, 'CORL_ERR_SERVE_CLIENT_TIMEOUT');
    expect(await conn.next()).to.equal('closed');
  });
});
