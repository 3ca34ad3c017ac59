// A real `corl serve` (in this process, on a loopback port) fed generated requests: every route and
// unknown ones, any method, damaged and random bodies (JSON, not JSON, not UTF-8), odd headers and
// query parameters. Every answer is a status below 500 whose error, if any, is a coded JSON error
// without a stack; nothing hangs; the service stays up and its journal keeps every line it had.
import { expect } from 'chai';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { RewardServer } from '../../core/serve/server';
import { tempDir } from '../fixtures/configs';
import { boxed, get, post, ringServeConfig, startServer } from '../fixtures/serve';
import { shown, STACK_LINE } from './assertions';
import { anyJson, damage } from './schema-arbitrary';
import { cases, FUZZ_TIMEOUT, summary, tick } from './settings';

const SUITE = 'serve';

/** Valid bodies of each route, the starting points of the damage. */
const VALID: Record<string, unknown> = {
  '/v1/groups': { agent: 'a', step: 0, groups: [boxed('g1', ['2', '3', '2'])] },
  '/v1/samples': { agent: 'a', group: 's1', size: 2, prompt: 'problem s1', completion: 'so \\boxed{4}' },
  '/get_reward': { query: ['so the answer is \\boxed{4}'], prompts: ['problem r1'] },
};
const ROUTES = [
  ...Object.keys(VALID),
  '/health',
  '/metrics',
  '/',
  '/v1',
  '/v1/groups/',
  '/get_reward/x',
  '/%00',
  '/..%2f',
];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND'];

interface Request {
  readonly method: string;
  readonly route: string;
  readonly query: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

const bodies: fc.Arbitrary<Buffer> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .constantFrom(...Object.values(VALID))
      .chain((v) => damage(v))
      .map((v) => Buffer.from(JSON.stringify(v) ?? '')),
  },
  { weight: 1, arbitrary: fc.constantFrom(...Object.values(VALID)).map((v) => Buffer.from(JSON.stringify(v))) },
  { weight: 2, arbitrary: anyJson.map((v) => Buffer.from(JSON.stringify(v) ?? 'undefined')) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 64 }).map((s) => Buffer.from(s)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      Buffer.alloc(0),
      Buffer.from('{"query": ["' + 'x'.repeat(70_000) + '"]}'),
      Buffer.from('['.repeat(10_000)),
      Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
      Buffer.from('{"agent": "a", "step": 0, "groups": [' + '{},'.repeat(2000) + '{}]}'),
    ),
  },
);

const headerValue = fc.oneof(
  fc.constantFrom('application/json', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data', ''),
  fc.string({ maxLength: 20 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
);

const requests: fc.Arbitrary<Request> = fc.record({
  method: fc.oneof(
    { weight: 4, arbitrary: fc.constant('POST') },
    { weight: 2, arbitrary: fc.constantFrom(...METHODS) },
  ),
  route: fc.constantFrom(...ROUTES),
  query: fc.oneof(
    fc.constant(''),
    fc.constantFrom(
      '?agent=a',
      '?agent=b',
      '?agent=zz',
      '?agent=7',
      '?agent=-1',
      '?agent=',
      '?token=x',
      '?step=1e9',
      '?agent=a&agent=b',
      '?%ff',
    ),
  ),
  headers: fc.record(
    {
      'content-type': headerValue,
      authorization: fc.constantFrom('Bearer x', 'Bearer ', 'Basic Zm9vOmJhcg==', 'bearer'),
      'idempotency-key': fc.oneof(
        fc.constantFrom('k1', 'k2', ''),
        fc.string({ maxLength: 300 }).filter((s) => /^[\x21-\x7e]*$/.test(s)),
      ),
      'content-encoding': fc.constantFrom('gzip', 'identity', 'br'),
      accept: headerValue,
    },
    { requiredKeys: [] },
  ),
  body: bodies,
});

/** Send one request with node:http (any method, exact bytes); resolves to the status and the text. */
function send(base: URL, r: Request): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: r.method,
        path: r.route + r.query,
        headers: { ...r.headers, 'content-length': r.body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(20_000, () => req.destroy(new Error(`no answer within 20 s (a hang) for ${shown(described(r))}`)));
    req.on('error', reject);
    req.end(r.body);
  });
}

function described(r: Request): Record<string, unknown> {
  return { ...r, body: r.body.length > 300 ? `${r.body.length} bytes` : r.body.toString('utf8') };
}

describe('fuzz: corl serve answers every request with a status and a coded error, never a crash', function () {
  this.timeout(FUZZ_TIMEOUT);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  before(() => (tmp = tempDir('corl-fuzz-serve-')));
  after(async () => {
    await server?.close();
    tmp.cleanup();
    process.stdout.write(summary(SUITE));
  });

  it('generated requests to every route (250 cases); the service stays up and its journal keeps its lines', async () => {
    server = await startServer(
      ringServeConfig({
        exchange: { wait: 0.2, fallback: 'self' },
        getReward: { wait: 0.2 },
        samples: { wait: 0.2 },
        timeouts: { body: 2, headers: 2 },
      }),
      tmp.dir,
    );
    // A round both agents post, so the journal has lines the fuzz must not lose.
    const [a, b] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('j1', ['2', '3', '2'])] }),
      post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('j1', ['3', '3', '2'])] }),
    ]);
    expect([a.status, b.status]).to.deep.equal([200, 200]);
    const journal = path.join(tmp.dir, 'journal.jsonl');
    const before = fs.readFileSync(journal, 'utf8');
    expect(before.length, 'the journal has lines').to.be.greaterThan(0);
    const base = new URL(server.url);
    await fc.assert(
      fc.asyncProperty(requests, async (r) => {
        tick(SUITE);
        const { status, text } = await send(base, r);
        const what = shown(described(r));
        expect(status, `${what} → ${text.slice(0, 400)}`).to.be.within(200, 499);
        expect(text, `a stack in the answer to ${what}`).to.not.match(STACK_LINE);
        if (status >= 400 && r.method !== 'HEAD') {
          let answer: { error?: { code?: unknown } } = {};
          try {
            answer = JSON.parse(text) as typeof answer;
          } catch {
            expect.fail(`${what} → ${status} with a body that is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
          }
          expect(String(answer.error?.code), `${what} → ${text.slice(0, 400)}`).to.match(/^CORL_ERR_[A-Z0-9_]+$/);
        }
      }),
      cases(SUITE, 250),
    );
    expect((await get(server.url, '/health')).status, 'the service is up after the fuzz').to.equal(200);
    expect(fs.readFileSync(journal, 'utf8').startsWith(before), 'the journal keeps every line it had').to.equal(true);
  });
});
