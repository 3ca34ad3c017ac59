import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import type { RewardServer } from '../../../core/serve/server';
import { fixture, tempDir } from '../../fixtures/configs';
import { boxed, get, post, ringServeConfig, startServer } from '../../fixtures/serve';
import { writeTinyVerifier } from '../../fixtures/tiny-verifier';

describe('serve/server: POST /v1/groups (the cross-agent exchange)', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it("rewards each agent of a ring against its peer's plurality, once both have posted", async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    // a: 2, 3, 2 (own label 2); b: 3, 3, 2 (own label 3). Ring: a is supervised by b and b by a.
    const pa = post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g1', ['2', '3', '2'])] });
    const pb = post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g1', ['3', '3', '2'])] });
    const [ra, rb] = await Promise.all([pa, pb]);
    expect(ra.status).to.equal(200);
    expect(ra.body.groups[0]).to.deep.include({
      id: 'g1',
      rewards: [0, 1, 0],
      keys: ['2', '3', '2'],
      label: '3',
      ownLabel: '2',
      source: 'supervisors',
    });
    expect(rb.body.groups[0]).to.deep.include({ rewards: [0, 0, 1], label: '2', ownLabel: '3', source: 'supervisors' });
    expect(ra.body.metrics['reward/mean']).to.be.closeTo(1 / 3, 1e-12);
    expect(ra.body.metrics['label/peer_agreement']).to.equal(0);
    expect(ra.body.metrics['exchange/fallback_fraction']).to.equal(0);
    expect(ra.body.metrics['vote/majority_ratio']).to.be.closeTo(2 / 3, 1e-12);
    expect(ra.body).to.deep.include({ agent: 'a', step: 0 });
  });

  it('answers a retry of the same agent, step and group with the identical answer, and refuses changed completions', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    const g = boxed('u1', ['5', '5', '7', null]);
    const [first] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 3, groups: [g] }),
      post(server.url, '/v1/groups', { agent: 'b', step: 3, groups: [boxed('u1', ['7', '7', '5', '7'])] }),
    ]);
    const again = await post(server.url, '/v1/groups', { agent: 'a', step: 3, groups: [g] });
    expect(again.body).to.deep.equal(first.body);
    expect(first.body.groups[0].rewards).to.deep.equal([0, 0, 1, 0]);
    expect(server.metrics.replays.get()).to.equal(1);
    const changed = await post(server.url, '/v1/groups', {
      agent: 'a',
      step: 3,
      groups: [boxed('u1', ['5', '5', '5', '5'])],
    });
    expect(changed.status).to.equal(409);
    expect(changed.body.error.code).to.equal('CORL_ERR_SERVE_CONFLICT');
  });

  it("falls back to the agent's own vote when its supervisor stays silent, and keeps that answer", async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0.2 } }), tmp.dir);
    const r = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g', ['4', '4', '9'])] });
    expect(r.body.groups[0]).to.deep.include({ rewards: [1, 1, 0], label: '4', source: 'self' });
    expect(r.body.metrics['exchange/fallback_fraction']).to.equal(1);
    // The peer arrives late: it is rewarded against a's answers; a's stored answer does not change.
    const late = await post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g', ['9', '4', '9'])] });
    expect(late.body.groups[0]).to.deep.include({ rewards: [0, 1, 0], label: '4', source: 'supervisors' });
    const again = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g', ['4', '4', '9'])] });
    expect(again.body).to.deep.equal(r.body);
    expect(server.metrics.fallbacks.get({ kind: 'self' })).to.equal(1);
    expect(server.metrics.waits.get({ outcome: 'timeout' })).to.equal(1);
  });

  it('the zero fallback gives every completion 0 and no label', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0.1, fallback: 'zero' } }), tmp.dir);
    const r = await post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g', ['1', '1'])] });
    expect(r.body.groups[0]).to.deep.include({ rewards: [0, 0], label: null, source: 'zero' });
  });

  it("the error fallback answers 504, keeps the posted keys, and a later retry gets the peer's label", async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 5, fallback: 'error' } }), tmp.dir);
    const g = boxed('g', ['1', '2', '2']);
    const r = await post(server.url, '/v1/groups', { agent: 'a', step: 0, wait: 0.1, groups: [g] });
    expect(r.status).to.equal(504);
    expect(r.body.error.code).to.equal('CORL_ERR_SERVE_PEER_TIMEOUT');
    expect(r.body.error.message).to.contain('"b"');
    const rb = await post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g', ['1', '1', '2'])] });
    expect(rb.body.groups[0]).to.deep.include({ label: '2', rewards: [0, 0, 1] });
    const retry = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [g] });
    expect(retry.status).to.equal(200);
    expect(retry.body.groups[0]).to.deep.include({ label: '1', rewards: [1, 0, 0], source: 'supervisors' });
  });

  it('with several supervisors, scores against those that arrived when the wait runs out (partial)', async () => {
    const config = {
      ...ringServeConfig({ exchange: { wait: 0.3 } }, ['a', 'b', 'c']),
      topology: 'test:all-peers',
      plugins: [fixture('peers-topology.js')],
    };
    server = await startServer(config, tmp.dir);
    const pa = post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g', ['1', '2'])] });
    const rb = post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g', ['2', '2'])] });
    const [a, b] = await Promise.all([pa, rb]);
    expect(a.body.groups[0]).to.deep.include({ source: 'partial', label: '2', rewards: [0, 1] });
    expect(b.body.groups[0]).to.deep.include({ source: 'partial', label: '1', rewards: [0, 0] });
    expect(server.metrics.fallbacks.get({ kind: 'partial' })).to.equal(2);
  });

  it('a group with many requests in flight: each waits only for its own supervisors', async () => {
    server = await startServer(ringServeConfig({}, ['a', 'b', 'c']), tmp.dir);
    // Ring of three: a <- c, b <- a, c <- b.
    const posts = ['a', 'b', 'c'].map((agent, i) =>
      post(server!.url, '/v1/groups', {
        agent,
        step: 0,
        groups: [boxed('x', [String(i), String(i), '9']), boxed('y', ['5', String(i + 5)])],
      }),
    );
    const [a, b, c] = (await Promise.all(posts)) as [any, any, any];
    expect(a.body.groups.map((g: any) => g.label)).to.deep.equal(['2', '5']);
    expect(b.body.groups.map((g: any) => g.label)).to.deep.equal(['0', '5']);
    expect(c.body.groups.map((g: any) => g.label)).to.deep.equal(['1', '5']);
    expect(a.body.groups[1].rewards).to.deep.equal([1, 1]);
  });

  it('refuses steps older than keepSteps behind the slowest agent', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0, keepSteps: 2 } }), tmp.dir);
    for (const agent of ['a', 'b'])
      expect((await post(server.url, '/v1/groups', { agent, step: 5, groups: [boxed('g', ['1'])] })).status).to.equal(
        200,
      );
    expect(
      (await post(server.url, '/v1/groups', { agent: 'a', step: 4, groups: [boxed('g', ['1'])] })).status,
    ).to.equal(200);
    const old = await post(server.url, '/v1/groups', { agent: 'a', step: 3, groups: [boxed('g', ['1'])] });
    expect(old.status).to.equal(410);
    expect(old.body.error.code).to.equal('CORL_ERR_SERVE_STEP_EXPIRED');
  });

  it('a restarted service (same journal) answers retries identically and finishes waits begun before the restart', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 10 } }), tmp.dir);
    const ga = boxed('g', ['1', '2', '2']);
    const [first] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [ga] }),
      post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g', ['1', '1', '3'])] }),
    ]);
    // a posts step 1 and waits; the service stops under it.
    const g1 = boxed('h', ['8', '8', '6']);
    const waiting = post(server.url, '/v1/groups', { agent: 'a', step: 1, groups: [g1] });
    await new Promise((r) => setTimeout(r, 100));
    await server.close();
    const cut = await waiting;
    expect(cut.status).to.equal(503);
    expect(cut.body.error.code).to.equal('CORL_ERR_SERVE_UNAVAILABLE');

    server = await startServer(ringServeConfig({ exchange: { wait: 10 } }), tmp.dir);
    const again = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [ga] });
    expect(again.body).to.deep.equal(first.body);
    // b posts step 1 to the new service: a's keys from before the restart are its supervisor's.
    const rb = await post(server.url, '/v1/groups', { agent: 'b', step: 1, groups: [boxed('h', ['6', '6', '6'])] });
    expect(rb.body.groups[0]).to.deep.include({ label: '8', rewards: [0, 0, 0], source: 'supervisors' });
    const ra = await post(server.url, '/v1/groups', { agent: 'a', step: 1, groups: [g1] });
    expect(ra.body.groups[0]).to.deep.include({ label: '6', rewards: [0, 0, 1], source: 'supervisors' });
  });

  it('refuses to replay a journal written for another cohort', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    await post(server.url, '/v1/groups', { agent: 'a', step: 0, wait: 0, groups: [boxed('g', ['1'])] });
    await server.close();
    server = undefined;
    try {
      await startServer(ringServeConfig({}, ['a', 'c']), tmp.dir);
      expect.fail('started');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_SERVE_JOURNAL'), String(e)).to.equal(true);
      expect((e as Error).message)
        .to.contain('agents [a, c]')
        .and.contain('agents [a, b]');
    }
  });

  it('reward sources that read ground truth need a reference per group', async () => {
    server = await startServer({ ...ringServeConfig(), reward: 'corl:ground-truth' }, tmp.dir);
    const missing = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g', ['1'])] });
    expect(missing.status).to.equal(400);
    expect(missing.body.error.where).to.equal('groups[0].reference');
    const r = await post(server.url, '/v1/groups', {
      agent: 'a',
      step: 0,
      groups: [{ ...boxed('g', ['1', '2', '0.5']), reference: '\\frac{1}{2}' }],
    });
    expect(r.body.groups[0].rewards).to.deep.equal([0, 0, 1]);
  });
  it('GET /health: readsGroundTruth says whether to send references; supervised is it or trained on labels', async () => {
    let n = 0;
    const use = async (reward: unknown) => {
      const journal = path.join(tmp.dir, `journal-${n++}.jsonl`); // each service its own (identity)
      server = await startServer({ ...ringServeConfig(), reward }, tmp.dir, { journal });
      const h = (await get(server.url, '/health')).body;
      await server.close();
      server = undefined;
      return [h.readsGroundTruth, h.supervised];
    };
    expect(await use('corl:vote')).to.deep.equal([false, false]);
    expect(await use('corl:ground-truth')).to.deep.equal([true, true]);
    const checkpoint = path.join(tmp.dir, 'verifier');
    await writeTinyVerifier(checkpoint);
    // A learned verifier reads no reference (clients send none), but labels made it: supervised.
    expect(await use({ use: 'corl:learned-verifier', options: { checkpoint } })).to.deep.equal([false, true]);
  });
});

describe('serve/server: bad requests get a coded 4xx and never take the service down', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer;
  before(async () => {
    tmp = tempDir('corl-serve-bad-');
    server = await startServer(ringServeConfig({ groupSize: 3, maxBodyBytes: 4096, exchange: { wait: 0 } }), tmp.dir);
  });
  after(async () => {
    await server.close();
    tmp.cleanup();
  });

  const cases: [string, unknown, number, string, string?][] = [
    ['malformed JSON', '{"agent": "a", ', 400, 'CORL_ERR_SERVE_BAD_JSON', 'body'],
    ['an empty body', '', 400, 'CORL_ERR_SERVE_BAD_JSON', 'body'],
    ['a JSON array', '[1, 2]', 400, 'CORL_ERR_SERVE_BAD_REQUEST'],
    [
      'a numeric step as text',
      { agent: 'a', step: '1', groups: [boxed('g', ['1', '1', '1'])] },
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'step',
    ],
    [
      'a negative step',
      { agent: 'a', step: -1, groups: [boxed('g', ['1', '1', '1'])] },
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'step',
    ],
    [
      'completions that are numbers',
      { agent: 'a', step: 0, groups: [{ id: 'g', completions: [1, 2, 3] }] },
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'groups[0].completions[0]',
    ],
    [
      'a missing group id',
      { agent: 'a', step: 0, groups: [{ completions: ['x', 'y', 'z'] }] },
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'groups[0].id',
    ],
    [
      'a duplicate group id',
      { agent: 'a', step: 0, groups: [boxed('g', ['1', '1', '1']), boxed('g', ['1', '1', '1'])] },
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'groups[1].id',
    ],
    [
      'a bad finishReason',
      { agent: 'a', step: 0, groups: [{ id: 'g', completions: [{ text: 'a', finishReason: 'eos' }, 'b', 'c'] }] },
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'groups[0].completions[0].finishReason',
    ],
    [
      'an unknown agent',
      { agent: 'zed', step: 0, groups: [boxed('g', ['1', '1', '1'])] },
      422,
      'CORL_ERR_SERVE_UNKNOWN_AGENT',
      'agent',
    ],
    [
      'an agent index out of range',
      { agent: 2, step: 0, groups: [boxed('g', ['1', '1', '1'])] },
      422,
      'CORL_ERR_SERVE_UNKNOWN_AGENT',
      'agent',
    ],
    [
      'a group of the wrong size',
      { agent: 'a', step: 0, groups: [boxed('g', ['1', '1'])] },
      422,
      'CORL_ERR_SERVE_GROUP_SIZE',
      'groups[0].completions',
    ],
    [
      'a body over the size limit',
      { agent: 'a', step: 0, groups: [{ id: 'g', completions: ['x'.repeat(5000), 'y', 'z'] }] },
      413,
      'CORL_ERR_SERVE_TOO_LARGE',
    ],
  ];
  for (const [what, body, status, code, where] of cases) {
    it(`${what}: HTTP ${status} ${code}`, async () => {
      const r = await post(server.url, '/v1/groups', body);
      expect(r.status).to.equal(status);
      expect(r.body.error.code).to.equal(code);
      expect(r.body.error.message).to.match(/expected .*, got /);
      if (where) expect(r.body.error.where).to.equal(where);
    });
  }

  it('get_reward lists of different lengths: 422 naming the list', async () => {
    const r = await post(server.url, '/get_reward', { query: ['a', 'b'], prompts: ['a'] });
    expect(r.status).to.equal(422);
    expect(r.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_GROUP_SIZE', where: 'prompts' });
    const t = await post(server.url, '/get_reward', { query: 'just text' });
    expect(t.status).to.equal(400);
    expect(t.body.error.where).to.equal('query');
  });

  it('unknown routes are 404 and wrong methods 405', async () => {
    expect((await get(server.url, '/v2/nothing')).status).to.equal(404);
    const m = await get(server.url, '/v1/groups');
    expect(m.status).to.equal(405);
    expect(m.body.error.code).to.equal('CORL_ERR_SERVE_NOT_FOUND');
    expect((await post(server.url, '/health', {})).status).to.equal(405);
  });

  it('a raw malformed HTTP request gets 400 and the service keeps answering', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const s = net.connect(server.address.port, '127.0.0.1', () => s.write('NOT HTTP AT ALL\r\n\r\n'));
      let data = '';
      s.on('data', (d) => {
        data += d;
      });
      s.on('end', () => resolve(data));
      s.on('error', reject);
    });
    expect(reply).to.match(/^HTTP\/1.1 400/);
    const h = await get(server.url, '/health');
    expect(h.status).to.equal(200);
    expect(h.body).to.deep.include({ status: 'ok', agents: ['a', 'b'], topology: 'corl:ring', reward: 'corl:vote' });
    expect(h.body.supervisors).to.deep.equal({ a: ['b'], b: ['a'] });
  });

  it('a body that is not UTF-8 is refused: two ids of different bytes never decode to one (issue 30)', async () => {
    const body = (id: number[]): Buffer =>
      Buffer.concat([
        Buffer.from('{"agent":"a","step":0,"wait":0,"groups":[{"id":"u'),
        Buffer.from(id),
        Buffer.from('","completions":["\\\\boxed{1}"]}]}'),
      ]);
    for (const bytes of [body([0xff, 0xfe]), body([0xfe, 0xff]), body([0xc3])]) {
      const res = await fetch(`${server.url}/v1/groups`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: bytes,
      });
      const answer = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status).to.equal(400);
      expect(answer.error.code).to.equal('CORL_ERR_SERVE_BAD_JSON');
      expect(answer.error.message).to.contain('not UTF-8');
    }
    // The same body in valid UTF-8 (U+00FF U+00FE) is a group like any other.
    const ok = await post(server.url, '/v1/groups', {
      agent: 'a',
      step: 0,
      wait: 0,
      groups: [boxed('u\u00ff\u00fe', ['1', '1', '1'])],
    });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });

  it('GET /metrics counts requests by route and status in Prometheus text', async () => {
    const m = await get(server.url, '/metrics');
    expect(m.status).to.equal(200);
    expect(m.headers.get('content-type')).to.contain('text/plain');
    expect(m.body).to.contain('# TYPE corl_serve_requests_total counter');
    expect(m.body).to.match(/corl_serve_requests_total\{route="\/v1\/groups",status="400"\} \d+/);
    expect(m.body).to.match(/corl_serve_requests_total\{route="\/v1\/groups",status="422"\} 3/);
    expect(m.body).to.contain('corl_serve_request_duration_seconds_bucket{route="/v1/groups",le="+Inf"}');
    expect(m.body).to.contain('# TYPE corl_serve_exchange_fallbacks_total counter');
  });
});

describe('serve/server: bearer token, binding', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-serve-auth-');
  });
  afterEach(() => tmp.cleanup());

  it('with a token, every route but /health needs "Authorization: Bearer <token>"', async () => {
    const server = await startServer(ringServeConfig({ exchange: { wait: 0 } }), tmp.dir, { token: 's3cret' });
    try {
      const body = { agent: 'a', step: 0, groups: [boxed('g', ['1'])] };
      const none = await post(server.url, '/v1/groups', body);
      expect(none.status).to.equal(401);
      expect(none.body.error.code).to.equal('CORL_ERR_SERVE_UNAUTHORIZED');
      expect(none.headers.get('www-authenticate')).to.equal('Bearer');
      expect((await post(server.url, '/v1/groups', body, { authorization: 'Bearer wrong!' })).status).to.equal(401);
      expect((await get(server.url, '/metrics')).status).to.equal(401);
      expect((await get(server.url, '/health')).body.auth).to.equal('shared');
      expect((await post(server.url, '/v1/groups', body, { authorization: 'Bearer s3cret' })).status).to.equal(200);
    } finally {
      await server.close();
    }
  });

  it('refuses a non-loopback address without a token, and a port in use, with CORL_ERR_SERVE_BIND', async () => {
    for (const run of [
      () => startServer(ringServeConfig(), tmp.dir, { host: '0.0.0.0' }),
      async () => {
        const a = await startServer(ringServeConfig(), tmp.dir);
        try {
          await startServer(ringServeConfig(), tmp.dir, {
            port: a.address.port,
            journal: path.join(tmp.dir, 'other.jsonl'),
          });
        } finally {
          await a.close();
        }
      },
    ]) {
      try {
        await run();
        expect.fail('started');
      } catch (e) {
        expect(isCorlError(e, 'CORL_ERR_SERVE_BIND'), String(e)).to.equal(true);
      }
    }
    expect(fs.existsSync(path.join(tmp.dir, 'journal.jsonl'))).to.equal(true);
  });
});

describe('serve/server: POST /get_reward (OpenRLHF)', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-gr-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it('a pointwise source (ground truth) answers each sample at once, against its label', async () => {
    server = await startServer(
      { agents: [{ name: 'solo' }], topology: 'corl:self', reward: 'corl:ground-truth', serve: { port: 0 } },
      tmp.dir,
    );
    const r = await post(server.url, '/get_reward', {
      query: ['Q1: 1+1? The answer is \\boxed{2}<|im_end|>', 'Q2: half? \\boxed{0.5}</s>', 'Q3 \\boxed{7}'],
      prompts: ['Q1: 1+1?', 'Q2: half?', 'Q3'],
      labels: ['2', '\\frac{1}{2}', '8'],
    });
    expect(r.status).to.equal(200);
    expect(r.body.rewards).to.deep.equal([1, 1, 0]);
    expect(r.body.scores).to.deep.equal([1, 1, 0]);
    expect(r.body.extra_logs).to.be.an('object');
    const nolabels = await post(server.url, '/get_reward', { query: ['x \\boxed{1}'] });
    expect(nolabels.status).to.equal(400);
    expect(nolabels.body.error.where).to.equal('labels[0]');
  });

  it('a group source collects the K samples of a prompt (sent one per request) before voting', async () => {
    server = await startServer(
      {
        agents: [{ name: 'solo' }],
        topology: 'corl:self',
        reward: 'corl:vote',
        serve: { port: 0, getReward: { groupSize: 3 } },
      },
      tmp.dir,
    );
    const prompt = 'What is 2+2? ';
    const send = (answer: string): Promise<any> =>
      post(server!.url, '/get_reward', { query: [`${prompt}It is \\boxed{${answer}}`], prompts: [prompt] });
    const [x, y, z] = await Promise.all([send('4'), send('5'), send('4')]);
    expect([x.body.rewards[0], y.body.rewards[0], z.body.rewards[0]]).to.deep.equal([1, 0, 1]);
    expect(x.body.extra_logs['label/labeled']).to.deep.equal([1]);
  });

  it('a group that stays incomplete is scored as it is after getReward.wait', async () => {
    server = await startServer(
      {
        agents: [{ name: 'solo' }],
        topology: 'corl:self',
        reward: 'corl:vote',
        serve: { port: 0, getReward: { groupSize: 4, wait: 0.2 } },
      },
      tmp.dir,
    );
    const r = await post(server.url, '/get_reward', {
      query: ['p \\boxed{3}', 'p \\boxed{3}', 'p \\boxed{1}'],
      prompts: ['p', 'p', 'p'],
    });
    expect(r.body.rewards).to.deep.equal([1, 1, 0]);
    expect(server.metrics.barrierPartial.get()).to.equal(1);
  });

  it('refuses getReward.groupBy "label" under a label-free reward: groups keyed by the answer column would tell it which prompts share an answer (issue 39)', async () => {
    // Before: two prompts with the label "42" met in one group, and peers matched across them.
    for (const reward of ['corl:vote', { use: 'test:spy', options: { name: 'label-id' } }]) {
      const config = {
        ...ringServeConfig({ getReward: { groupSize: 2, groupBy: 'label' } }),
        reward,
        plugins: [fixture('spy-reward.js')],
      };
      let caught: unknown;
      try {
        server = await startServer(config, tmp.dir);
      } catch (e) {
        caught = e;
      }
      if (!isCorlError(caught)) throw new Error(`expected a CorlError, got ${String(caught)}`);
      expect(caught.code).to.equal('CORL_ERR_CONFIG_INVALID');
      expect(caught.where).to.equal('serve.getReward.groupBy');
      expect(caught.message).to.include('is label-free');
      server = undefined;
    }
  });

  it('keeps at most getReward.keepRounds rounds of each prompt: a long run stays bounded, recent retries still replay', async () => {
    server = await startServer(ringServeConfig({ getReward: { groupSize: 2, keepRounds: 2 } }), tmp.dir);
    const send = (agent: string, prompt: string, answers: string[]): Promise<any> =>
      post(server!.url, `/get_reward?agent=${agent}`, {
        query: answers.map((a) => `${prompt} \\boxed{${a}}`),
        prompts: answers.map(() => prompt),
      });
    const slots = async (): Promise<number> => {
      const text = await (await fetch(`${server!.url}/metrics`)).text();
      return Number(/^corl_serve_get_reward_slots (\d+)/m.exec(text)![1]);
    };
    // Five epochs over two problems: rounds 0–4 of each, two slots per round per problem at most kept.
    for (let epoch = 0; epoch < 5; epoch++) {
      for (const label of ['p1', 'p2']) {
        const [a, b] = await Promise.all([send('a', label, ['1', '1']), send('b', label, ['1', '2'])]);
        expect(a.body.rewards, `epoch ${epoch} ${label}`).to.deep.equal([1, 1]);
        expect(b.body.rewards, `epoch ${epoch} ${label}`).to.deep.equal([1, 0]);
      }
    }
    expect(await slots()).to.equal(4); // 2 problems × 2 rounds, not 2 × 5
    const journal = fs.readFileSync(path.join(tmp.dir, 'journal.jsonl'), 'utf8');
    expect(journal.split('\n').filter((l) => l.includes('"get_reward"')).length).to.be.greaterThan(0);
    // A restart compacts the journal to the kept rounds and resumes the round count where it was.
    await server.close();
    server = await startServer(ringServeConfig({ getReward: { groupSize: 2, keepRounds: 2 } }), tmp.dir);
    const kept = fs
      .readFileSync(path.join(tmp.dir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"get_reward"'))
      .map((l) => JSON.parse(l));
    expect([...new Set(kept.map((r: { s: number }) => r.s))].sort()).to.deep.equal([3, 4]);
    expect(await slots()).to.equal(4);
    const [a, b] = await Promise.all([send('a', 'p1', ['2', '2']), send('b', 'p1', ['2', '2'])]);
    expect(a.body.rewards).to.deep.equal([1, 1]); // round 5: a fresh vote, not a replay of round 4
    expect(b.body.rewards).to.deep.equal([1, 1]);
  });
});
