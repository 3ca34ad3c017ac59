// POST /v1/samples with defer, and POST /v1/samples/wait, against the real server: answers come
// by request id, many samples per request, each as soon as its own group is scored; lost answers
// come again until acknowledged; one agent at its bound never refuses another; keyed retries of
// samples without ids replay instead of counting again.
import { expect } from 'chai';
import type { RewardServer } from '../../../../core/serve/server';
import { tempDir } from '../../../fixtures/configs';
import { get, post, ringServeConfig, startServer } from '../../../fixtures/serve';

const text = (a: string): string => `so the answer is \\boxed{${a}}`;
const s = (group: string, K: number, a: string, requestId?: string, extra: Record<string, unknown> = {}) => ({
  group,
  size: K,
  completion: text(a),
  ...(requestId !== undefined ? { requestId } : {}),
  ...extra,
});

describe('serve/routes/samples-wait: deferred samples, collected many per request', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-samples-wait-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it('answers each sample by id as soon as its own group is scored, never held back by another group', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 30 } }), tmp.dir);
    // a posts g1 (2 samples) and g2 (2 samples) deferred in one request; b posts only g1's group.
    const acc = await post(server.url, '/v1/samples', {
      agent: 'a',
      defer: true,
      samples: [s('g1', 2, '1', 'a1'), s('g1', 2, '2', 'a2'), s('g2', 2, '3', 'a3'), s('g2', 2, '3', 'a4')],
    });
    expect(acc.status).to.equal(200);
    expect(acc.body.samples).to.deep.equal(
      ['a1', 'a2', 'a3', 'a4'].map((requestId) => ({ requestId, status: 'pending' })),
    );
    const waiting = post(server.url, '/v1/samples/wait', { agent: 'a', requestIds: ['a1', 'a2', 'a3', 'a4'] });
    await post(server.url, '/v1/samples', { agent: 'b', samples: [s('g1', 2, '2', 'b1'), s('g1', 2, '2', 'b2')] });
    const w = await waiting;
    expect(w.status).to.equal(200);
    // g1 is scored against b's label 2; g2 still waits for b (exchange.wait 30 s).
    expect(w.body.samples.map((x: any) => [x.requestId, x.reward, x.label, x.groupSize])).to.deep.equal([
      ['a1', 0, '2', 2],
      ['a2', 1, '2', 2],
    ]);
    expect([w.body.pending, w.body.unknown, w.body.errors]).to.deep.equal([2, [], []]);
    // Not acknowledged: asked again, the answers come again (an answer lost on its way is not lost).
    const again = await post(server.url, '/v1/samples/wait', { agent: 'a', requestIds: ['a1', 'a3'], wait: 0 });
    expect(again.body.samples.map((x: any) => x.requestId)).to.deep.equal(['a1']);
    // Acknowledged: forgotten (unknown: the client would post it again and get its stored answer).
    const acked = await post(server.url, '/v1/samples/wait', {
      agent: 'a',
      requestIds: ['a1'],
      received: ['a1', 'a2'],
      wait: 0,
    });
    expect(acked.body).to.deep.include({ samples: [], unknown: ['a1'], pending: 0 });
    const replay = await post(server.url, '/v1/samples', { agent: 'a', defer: true, samples: [s('g1', 2, '1', 'a1')] });
    expect(replay.body.samples).to.deep.equal([{ requestId: 'a1', status: 'pending' }]);
    const stored = await post(server.url, '/v1/samples/wait', { agent: 'a', requestIds: ['a1'], wait: 0 });
    expect(stored.body.samples.map((x: any) => [x.requestId, x.reward, x.round])).to.deep.equal([['a1', 0, 0]]);
    // a's 2 and b's 2, once each however often they were collected, and the replay's answer.
    expect(server.metrics.completions.get({ route: '/v1/samples' })).to.equal(5);
  });

  it('a refused sample gets its own coded error; the others of its request are accepted', async () => {
    server = await startServer(ringServeConfig({ groupSize: 2 }), tmp.dir);
    const r = await post(server.url, '/v1/samples', {
      agent: 'a',
      defer: true,
      samples: [s('g', 2, '1', 'x1'), s('g', 3, '1', 'x2'), s('g', 2, '2', 'x1')],
    });
    expect(r.status).to.equal(200);
    expect(r.body.samples[0]).to.deep.equal({ requestId: 'x1', status: 'pending' });
    expect(r.body.samples[1].error).to.deep.include({
      code: 'CORL_ERR_SERVE_GROUP_SIZE',
      status: 422,
      where: 'samples[1].size',
    });
    expect(r.body.samples[2].error).to.deep.include({ code: 'CORL_ERR_SERVE_CONFLICT', status: 409 });
  });

  it('refuses malformed bodies with a coded error naming the field', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    const bad = async (route: string, body: unknown): Promise<[number, string, string]> => {
      const r = await post(server!.url, route, body);
      return [r.status, r.body.error.code, r.body.error.where];
    };
    expect(await bad('/v1/samples', { agent: 'a', defer: true, samples: [s('g', 2, '1')] })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'samples[0].requestId',
    ]);
    expect(await bad('/v1/samples', { agent: 'a', defer: 'yes', samples: [s('g', 2, '1', 'r')] })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'defer',
    ]);
    expect(await bad('/v1/samples', { agent: 'a', ...s('g', 2, '1', '#0') })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'requestId',
    ]);
    expect(await bad('/v1/samples/wait', { agent: 'a', requestIds: 'r' })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'requestIds',
    ]);
    expect(await bad('/v1/samples/wait', { agent: 'a', requestIds: [''] })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'requestIds[0]',
    ]);
    expect(await bad('/v1/samples/wait', { agent: 'a', requestIds: ['r'], received: [1] })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'received[0]',
    ]);
    expect(await bad('/v1/samples/wait', { agent: 'z', requestIds: ['r'] })).to.deep.equal([
      422,
      'CORL_ERR_SERVE_UNKNOWN_AGENT',
      'agent',
    ]);
  });

  it('a wait with nothing ready is answered after serve.samples.poll with none; closing it early takes nothing', async () => {
    server = await startServer(ringServeConfig({ samples: { poll: 0.2 }, exchange: { wait: 30 } }), tmp.dir);
    await post(server.url, '/v1/samples', { agent: 'a', defer: true, samples: [s('g', 1, '1', 'p1')] });
    const w = await post(server.url, '/v1/samples/wait', { agent: 'a', requestIds: ['p1'], wait: 600 });
    expect(w.body).to.deep.include({ samples: [], errors: [], unknown: [], pending: 1 });
    const ctrl = new AbortController();
    const gone = fetch(`${server.url}/v1/samples/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'a', requestIds: ['p1'] }),
      signal: ctrl.signal,
    }).catch((e: Error) => e.name);
    while ((await get(server.url, '/metrics')).body.includes('corl_serve_parked_waits 0'))
      await new Promise((r) => setTimeout(r, 5));
    ctrl.abort();
    expect(await gone).to.equal('AbortError');
    // b's group arrives: a's answer is held for the next wait.
    await post(server.url, '/v1/samples', { agent: 'b', ...s('g', 1, '1', 'q1') });
    const next = await post(server.url, '/v1/samples/wait', { agent: 'a', requestIds: ['p1'] });
    expect(next.body.samples.map((x: any) => [x.requestId, x.reward, x.source])).to.deep.equal([
      ['p1', 1, 'supervisors'],
    ]);
  });

  it('one agent at its samples.maxPending bound never refuses another agent', async () => {
    server = await startServer(ringServeConfig({ samples: { maxPending: 3 }, exchange: { wait: 30 } }), tmp.dir);
    // a fills its own bound with groups that never complete (size 2, one sample each) ...
    const a = await post(server.url, '/v1/samples', {
      agent: 'a',
      defer: true,
      samples: ['g1', 'g2', 'g3'].map((g, i) => s(g, 2, '1', `a${i}`)),
    });
    expect(a.body.samples.map((x: any) => x.status)).to.deep.equal(['pending', 'pending', 'pending']);
    const more = await post(server.url, '/v1/samples', { agent: 'a', defer: true, samples: [s('g4', 2, '1', 'a4')] });
    expect(more.body.samples[0].error).to.deep.include({ code: 'CORL_ERR_SERVE_BUSY', status: 503 });
    const plain = await post(server.url, '/v1/samples', { agent: 'a', ...s('g5', 2, '1', 'a5') });
    expect([plain.status, plain.body.error.code]).to.deep.equal([503, 'CORL_ERR_SERVE_BUSY']);
    // ... and b, with its own bound, is still served: its groups complete and wait for a's answers.
    const b = await post(server.url, '/v1/samples', {
      agent: 'b',
      defer: true,
      samples: [s('g1', 2, '1', 'b1'), s('g1', 2, '1', 'b2'), s('h', 2, '2', 'b3')],
    });
    expect(b.body.samples.map((x: any) => x.status)).to.deep.equal(['pending', 'pending', 'pending']);
    expect((await get(server.url, '/health')).body.samples).to.deep.include({ pending: 4, deferred: 6 });
  });

  it('a keyed retry of samples without ids is the same samples, with or without a step (not a new round)', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 30 } }), tmp.dir);
    const key = { 'idempotency-key': 'k-1' };
    const body = { agent: 'a', samples: [s('q', 2, '1'), s('q', 2, '2')] };
    const [first, peerAnswer] = await Promise.all([
      post(server.url, '/v1/samples', body, key),
      post(server.url, '/v1/samples', { agent: 'b', samples: [s('q', 2, '1'), s('q', 2, '1')] }),
    ]);
    expect(peerAnswer.status).to.equal(200);
    expect(first.body.samples.map((x: any) => [x.round, x.reward])).to.deep.equal([
      [0, 1],
      [0, 0],
    ]);
    const retry = await post(server.url, '/v1/samples', body, key);
    expect(retry.body).to.deep.equal(first.body);
    expect(server.metrics.sampleGroups.get({ outcome: 'complete' })).to.equal(2);
    const other = await post(server.url, '/v1/samples', { agent: 'a', samples: [s('q', 2, '3'), s('q', 2, '2')] }, key);
    expect([other.status, other.body.error.code]).to.deep.equal([409, 'CORL_ERR_SERVE_CONFLICT']);
    // With a step and no positions, likewise.
    const stepped = { agent: 'a', step: 4, samples: [s('r', 1, '1')] };
    const k2 = { 'idempotency-key': 'k-2' };
    const s1 = await post(server.url, '/v1/samples', { ...stepped, wait: 0 }, k2);
    const s2 = await post(server.url, '/v1/samples', { ...stepped, wait: 0 }, k2);
    expect(s2.body).to.deep.equal(s1.body);
  });
});
