// A real `corl serve` (in this process, on a loopback port) fed generated requests: every route and
// unknown ones, any method, damaged and random bodies (JSON, not JSON, not UTF-8), odd headers and
// query parameters. Every answer is a status below 500 whose error, if any, is a coded JSON error
// without a stack; nothing hangs; the service stays up and its journal keeps every line it had.
import { expect } from 'chai';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { PATHS } from '../../core/serve/routes';
import type { RewardServer } from '../../core/serve/server';
import { tempDir } from '../fixtures/configs';
import { boxed, get, post, ringServeConfig, startServer } from '../fixtures/serve';
import { shown, STACK_LINE } from './assertions';
import { anyJson, damage, hostileJson } from './schema-arbitrary';
import { cases, FUZZ_SEED, FUZZ_TIMEOUT, summary, tick } from './settings';

const SUITE = 'serve';

/** Valid bodies of each POST route, together holding every body field the routes read: the starting points of the damage. */
const VALID: Record<string, readonly unknown[]> = {
  '/v1/groups': [
    { agent: 'a', step: 0, groups: [boxed('g1', ['2', '3', '2'])] },
    {
      agent: 1,
      step: 1,
      wait: 0.1,
      groups: [
        {
          id: 'g2',
          prompt: 'p',
          reference: '2',
          train: 2,
          testInputs: [['1']],
          completions: [
            { text: 'so \\boxed{2}', length: 2, finishReason: 'stop', entropies: [0.1, 0.2], meanLogprobs: [-1, -2] },
            'so \\boxed{3}',
            { text: 'x', finishReason: 'length' },
          ],
        },
      ],
    },
  ],
  '/v1/samples': [
    { agent: 'a', group: 's1', size: 2, prompt: 'problem s1', completion: 'so \\boxed{4}' },
    {
      agent: 'b',
      step: 0,
      wait: 0.1,
      samples: [
        {
          group: 7,
          size: 2,
          sample: 0,
          rollout: 'r1',
          requestId: 'q1',
          prompt: 'p7',
          reference: '4',
          completion: { text: 'so \\boxed{4}', length: 3 },
          testInputs: [['a']],
        },
      ],
    },
    { agent: 'a', defer: true, samples: [{ group: 'd1', size: 2, requestId: 'd-1', completion: 'so \\boxed{1}' }] },
  ],
  '/v1/samples/wait': [{ agent: 'a', requestIds: ['d-1', 'never'], received: ['d-1'], wait: 0.1 }],
  '/get_reward': [{ query: ['so the answer is \\boxed{4}'], prompts: ['problem r1'], labels: ['4'] }],
};
const VALID_BODIES = Object.values(VALID).flat();
/** Every path the service answers (from its route table, so a new route is fuzzed too), and unknown ones. */
const ROUTES = [...PATHS, '/', '/v1', '/v1/groups/', '/get_reward/x', '/%00', '/..%2f'];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND'];

interface Request {
  readonly method: string;
  readonly route: string;
  readonly query: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** Sent without a content-length (chunked). */
  readonly chunked: boolean;
}

const bodies: fc.Arbitrary<Buffer> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .constantFrom(...VALID_BODIES)
      .chain((v) => damage(v, hostileJson))
      .map((v) => Buffer.from(JSON.stringify(v) ?? '')),
  },
  { weight: 1, arbitrary: fc.constantFrom(...VALID_BODIES).map((v) => Buffer.from(JSON.stringify(v))) },
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
      // numbers beyond a double, duplicate and prototype keys, text no JSON.stringify writes
      Buffer.from('{"agent": "a", "step": 1e400, "groups": []}'),
      Buffer.from('{"agent": "a", "step": 0.0000000000000000000001e22, "groups": []}'),
      Buffer.from('{"agent": "a", "agent": "b", "requestIds": ["x"], "requestIds": 5}'),
      Buffer.from('{"__proto__": {"agent": "a"}, "constructor": {"prototype": 1}, "query": ["x"]}'),
      Buffer.from('{"query": ["\\ud800"], "prompts": ["\\udfff"]}'),
      Buffer.from([0x7b, 0x22, 0x71, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]),
      Buffer.from('{"agent":"a","requestIds":[' + '"i",'.repeat(70_000) + '"i"]}'),
      Buffer.from('\ufeff\ufeff{}', 'utf16le'),
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
  chunked: fc.boolean(),
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
        headers: r.chunked ? r.headers : { ...r.headers, 'content-length': r.body.length },
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
        maxBodyBytes: 65536,
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
    await answersCorrectly(server.url);
  });

  it('slow bodies are cut with 408 while other clients are answered correctly (6 cases)', async () => {
    await server?.close();
    server = await startServer(
      ringServeConfig({ exchange: { wait: 5 }, timeouts: { body: 1, headers: 1 } }),
      path.join(tmp.dir),
      { journal: path.join(tmp.dir, 'slow.jsonl') },
    );
    const base = new URL(server.url);
    const slow = fc.record({
      route: fc.constantFrom(...PATHS.filter((p) => p !== '/health' && p !== '/metrics')),
      sent: fc.nat({ max: 40 }),
      // Far beyond what a trickle (a byte per 200 ms) sends before the 1 s timeout: a body that
      // completed would be a request like any other (41 of 39 sent once got its coded 400).
      declared: fc.integer({ min: 1000, max: 1_000_000 }),
      trickle: fc.boolean(),
    });
    const samples = fc.sample(slow, { seed: FUZZ_SEED, numRuns: cases(SUITE, 6).numRuns });
    const cut = samples.map((c) => {
      tick(SUITE);
      return slowRequest(base, c.route, c.sent, c.declared, c.trickle);
    });
    // meanwhile the service answers a round correctly
    await answersCorrectly(server.url);
    for (const [i, r] of (await Promise.all(cut)).entries())
      expect(r, shown(samples[i])).to.match(/^(HTTP\/1\.1 408|closed)/);
    await answersCorrectly(server.url);
  });
});

/** A request whose body never completes: `sent` bytes of `declared`, then silence (or one byte a while). Resolves to the status line, or "closed". */
function slowRequest(base: URL, route: string, sent: number, declared: number, trickle: boolean): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(base.port), base.hostname);
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(
        `POST ${route} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n`,
      );
      socket.write('{'.padEnd(sent, ' '));
      if (trickle) timer = setInterval(() => socket.write(' '), 200);
    });
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    const done = (): void => {
      clearInterval(timer);
      resolve(text.split('\r\n')[0] || 'closed');
    };
    socket.on('close', done);
    socket.on('error', () => undefined);
    // a hang: the service never cut it
    setTimeout(() => socket.destroy(), 20_000).unref();
  });
}

/** A fresh round of both agents at the window's floor gets exactly the rewards a ring vote gives. */
async function answersCorrectly(url: string): Promise<void> {
  const health = await get(url, '/health');
  expect(health.status).to.equal(200);
  const step = Math.min(...(Object.values(health.body.exchange.steps) as number[]));
  const id = `after-fuzz-${step}-${rounds++}`;
  const [a, b] = await Promise.all([
    post(url, '/v1/groups', { agent: 'a', step, groups: [boxed(id, ['2', '3', '2'])] }),
    post(url, '/v1/groups', { agent: 'b', step, groups: [boxed(id, ['3', '3', '2'])] }),
  ]);
  expect([a.status, b.status], JSON.stringify([a.body, b.body])).to.deep.equal([200, 200]);
  expect(a.body.groups[0]).to.deep.include({ rewards: [0, 1, 0], label: '3', source: 'supervisors' });
  expect(b.body.groups[0]).to.deep.include({ rewards: [0, 0, 1], label: '2', source: 'supervisors' });
}
let rounds = 0;
