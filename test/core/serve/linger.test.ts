// Early answers that close the connection reach a client still sending its body (issue 39): the
// service half-closes and reads the rest of the body away instead of closing a socket with unread
// bytes (which the kernel answers with a TCP reset, throwing away the answer in the client's
// buffers). Each client here writes its whole request before it reads a byte, as Python's
// http.client and curl do.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { boxed, post, ringServeConfig, startServer } from '../../fixtures/serve';

interface Outcome {
  /** The socket error the client saw (ECONNRESET, EPIPE), if any. */
  error?: string;
  status?: number;
  headers: Record<string, string>;
  body?: { error?: { code: string; where?: string } };
}

/** Send `head`, then `body` in full (chunks of 64 KiB), reading nothing until every byte is written. */
function sendAllThenRead(
  port: number,
  head: string,
  body: Buffer[],
  eachChunk?: (c: Buffer) => Buffer[],
): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    let got = Buffer.alloc(0);
    let error: string | undefined;
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code));
    socket.on('data', (d: Buffer) => (got = Buffer.concat([got, d])));
    socket.on('close', () => {
      const text = got.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return resolve({ error: error ?? 'no answer', headers: {} });
      const lines = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      resolve({
        ...(error ? { error } : {}),
        status: Number(lines[0]!.split(' ')[1]),
        headers,
        body: JSON.parse(text.slice(end + 4, end + 4 + length)) as Outcome['body'],
      });
    });
    const chunks = eachChunk ? body.flatMap(eachChunk) : body;
    let i = 0;
    const pump = (): void => {
      while (i < chunks.length) if (!socket.write(chunks[i++]!)) return void socket.once('drain', pump);
      socket.end(() => socket.resume());
    };
    socket.once('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

const CHUNK = Buffer.alloc(64 * 1024, 0x20);
/** 8 MiB of spaces in 64 KiB pieces. */
const EIGHT_MIB = new Array<Buffer>(128).fill(CHUNK);
const chunked = (c: Buffer): Buffer[] => [Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')];

function expectCoded(o: Outcome, status: number, code: string): void {
  expect(o.error, 'the client read the answer, not a reset').to.equal(undefined);
  expect(o.status).to.equal(status);
  expect(o.body?.error?.code).to.equal(code);
}

describe('serve: an early answer that closes the connection is read, not reset (issue 39)', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-linger-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it('a declared body over maxBodyBytes: 8 MiB sent in full, then the coded 413 read', async () => {
    server = await startServer(ringServeConfig({ maxBodyBytes: 1024 }), tmp.dir);
    const head = `POST /v1/samples HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${8 << 20}\r\n\r\n`;
    for (let k = 0; k < 3; k++) {
      const o = await sendAllThenRead(server.address.port, head, EIGHT_MIB);
      expectCoded(o, 413, 'CORL_ERR_SERVE_TOO_LARGE');
      expect(o.headers.connection).to.equal('close');
    }
  });

  it('a chunked body that grows past maxBodyBytes: the coded 413 read after the last chunk', async () => {
    server = await startServer(ringServeConfig({ maxBodyBytes: 1024 }), tmp.dir);
    const head = `POST /v1/groups HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
    const o = await sendAllThenRead(server.address.port, head, [
      ...EIGHT_MIB.flatMap(chunked),
      Buffer.from('0\r\n\r\n'),
    ]);
    expectCoded(o, 413, 'CORL_ERR_SERVE_TOO_LARGE');
  });

  it('a 404 whose body passes what an early answer drops: the coded 404 read, the connection closed', async () => {
    server = await startServer(ringServeConfig({ maxBodyBytes: 1024 }), tmp.dir);
    const head = `POST /v1/nothing HTTP/1.1\r\nhost: t\r\ncontent-length: ${8 << 20}\r\n\r\n`;
    expectCoded(await sendAllThenRead(server.address.port, head, EIGHT_MIB), 404, 'CORL_ERR_SERVE_NOT_FOUND');
  });

  it('over the connection caps with every place working: the coded 503 read by a client sending a large body', async () => {
    server = await startServer(
      ringServeConfig({ maxConnections: 1, maxBodyBytes: 16 << 20, exchange: { wait: 30 } }),
      tmp.dir,
    );
    // The one place holds a post of a waiting for its supervisor b; it is in progress once its
    // keys are in the journal (watched on disk: a request would need a place of its own).
    const waiting = post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('p0', ['1'])] });
    const journal = path.join(tmp.dir, 'journal.jsonl');
    while (!(fs.existsSync(journal) && fs.readFileSync(journal, 'utf8').includes('"p0"')))
      await new Promise((r) => setTimeout(r, 20));
    const head = `POST /v1/samples HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${8 << 20}\r\n\r\n`;
    const o = await sendAllThenRead(server.address.port, head, EIGHT_MIB);
    expectCoded(o, 503, 'CORL_ERR_SERVE_BUSY');
    expect(o.headers['retry-after']).to.equal('1');
    await server.close();
    server = undefined;
    expect((await waiting).status).to.equal(503);
  });
});
