// Waiting structures of POST /v1/samples(/wait) bounded per agent and in all, against the real
// server: two agents behind one address (every client here is 127.0.0.1), one of them at its
// bound, the other still served; a wait over the bound of all agents takes the place of the agent
// holding the most; retries that close never pile up on a sample still forming its group.
import { expect } from 'chai';
import type { RewardServer } from '../../../../core/serve/server';
import { tempDir } from '../../../fixtures/configs';
import { get, post, ringServeConfig, startServer } from '../../../fixtures/serve';

const text = (a: string): string => `so the answer is \\boxed{${a}}`;
const s = (group: string, K: number, a: string, requestId: string) => ({
  group,
  size: K,
  completion: text(a),
  requestId,
});

/** A gauge's value in GET /metrics. */
async function gauge(base: string, name: string): Promise<number> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec((await get(base, '/metrics')).body as string);
  return Number(m?.[1]);
}

/** Poll until a gauge reaches `value` (the server parks a request a moment after it is sent). */
async function until(base: string, name: string, value: number): Promise<void> {
  while ((await gauge(base, name)) !== value) await new Promise((r) => setTimeout(r, 5));
}

/** A wait request that can be closed by the client. */
function openWait(base: string, body: unknown): { answer: Promise<{ status: number; body: any }>; close(): void } {
  const ctrl = new AbortController();
  const answer = fetch(`${base}/v1/samples/wait`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: ctrl.signal,
  }).then(async (r) => ({ status: r.status, body: JSON.parse(await r.text()) }));
  return { answer, close: () => ctrl.abort() };
}

describe('serve/routes/samples-wait: every waiting structure bounded per agent and in all', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-samples-bounds-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it('agent a at its serve.samples.maxWaits bound gets 503; agent b on the same address is still served', async () => {
    server = await startServer(
      ringServeConfig({ samples: { maxWaits: 2, poll: 30 }, exchange: { wait: 30 } }),
      tmp.dir,
    );
    const url = server.url;
    await post(url, '/v1/samples', { agent: 'a', defer: true, samples: [s('g', 1, '1', 'a1')] });
    const w1 = openWait(url, { agent: 'a', requestIds: ['a1'] });
    const w2 = openWait(url, { agent: 'a', requestIds: ['a1'] });
    await until(url, 'corl_serve_parked_waits', 2);
    const third = await post(url, '/v1/samples/wait', { agent: 'a', requestIds: ['a1'] });
    expect([third.status, third.body.error.code, third.body.error.where]).to.deep.equal([
      503,
      'CORL_ERR_SERVE_BUSY',
      'requestIds',
    ]);
    expect(third.body.error.message).to.contain('serve.samples.maxWaits');
    // b, behind the same address, parks its own wait and gets its answer when its group is scored.
    await post(url, '/v1/samples', { agent: 'b', defer: true, samples: [s('h', 1, '1', 'b1')] });
    const wb = openWait(url, { agent: 'b', requestIds: ['b1'] });
    await until(url, 'corl_serve_parked_waits', 3);
    expect((await get(url, '/health')).body.samples).to.deep.include({ maxWaits: 2, waits: 3 });
    // a's keys for h arrive: b's answer is 1 (a's label "1" supervises b in the two-agent ring).
    await post(url, '/v1/samples', { agent: 'a', ...s('h', 1, '1', 'ah') });
    const b = await wb.answer;
    expect([b.status, b.body.samples.map((x: any) => [x.requestId, x.reward, x.label])]).to.deep.equal([
      200,
      [['b1', 1, '1']],
    ]);
    // a's waits held on meanwhile; b's keys for g answer them.
    await post(url, '/v1/samples', { agent: 'b', ...s('g', 1, '1', 'bg') });
    const [a1, a2] = await Promise.all([w1.answer, w2.answer]);
    expect([a1, a2].map((x) => x.body.samples.map((y: any) => [y.requestId, y.reward]))).to.deep.equal([
      [['a1', 1]],
      [['a1', 1]],
    ]);
    expect(await gauge(url, 'corl_serve_parked_waits')).to.equal(0);
  });

  it('over the bound of all agents a wait takes the place of the agent holding the most, never of its own share', async () => {
    // maxConnectionsPerPeer 9: at most 4 parked waits in all (half, rounded down); each agent may hold 4.
    server = await startServer(
      ringServeConfig({ maxConnectionsPerPeer: 9, samples: { maxWaits: 4, poll: 30 }, exchange: { wait: 30 } }),
      tmp.dir,
    );
    const url = server.url;
    await post(url, '/v1/samples', { agent: 'a', defer: true, samples: [s('g', 1, '1', 'a1')] });
    await post(url, '/v1/samples', { agent: 'b', defer: true, samples: [s('h', 1, '2', 'b1')] });
    const a = [0, 1, 2, 3].map(() => openWait(url, { agent: 'a', requestIds: ['a1'] }));
    await until(url, 'corl_serve_parked_waits', 4);
    // b holds none: a's oldest wait is answered at once with what it has (nothing yet) ...
    const b1 = openWait(url, { agent: 'b', requestIds: ['b1'] });
    const early = await a[0]!.answer;
    expect([early.status, early.body]).to.deep.equal([
      200,
      { agent: 'a', samples: [], errors: [], unknown: [], pending: 1 },
    ]);
    await until(url, 'corl_serve_parked_waits', 4);
    // ... a, holding 3 of 4, cannot take b's place back: 503, its other waits untouched.
    const back = await post(url, '/v1/samples/wait', { agent: 'a', requestIds: ['a1'] });
    expect([back.status, back.body.error.code]).to.deep.equal([503, 'CORL_ERR_SERVE_BUSY']);
    // b (1) against a (3): a gives up one more; then 2 and 2, and b's next wait is refused.
    const b2 = openWait(url, { agent: 'b', requestIds: ['b1'] });
    expect((await a[1]!.answer).body.samples).to.deep.equal([]);
    await until(url, 'corl_serve_parked_waits', 4);
    const b3 = await post(url, '/v1/samples/wait', { agent: 'b', requestIds: ['b1'] });
    expect([b3.status, b3.body.error.code]).to.deep.equal([503, 'CORL_ERR_SERVE_BUSY']);
    expect(await gauge(url, 'corl_serve_waits_answered_early_total')).to.equal(2);
    expect((await get(url, '/health')).body.samples.waits).to.equal(4);
    // The rest still get their answers: a's and b's groups meet (ring: each scored by the other's label).
    await post(url, '/v1/samples', { agent: 'b', ...s('g', 1, '1', 'bg') });
    for (const w of [a[2]!, a[3]!]) expect((await w.answer).body.samples.map((x: any) => x.reward)).to.deep.equal([1]);
    await post(url, '/v1/samples', { agent: 'a', ...s('h', 1, '3', 'ah') });
    for (const w of [b1, b2]) expect((await w.answer).body.samples.map((x: any) => x.label)).to.deep.equal(['3']);
  });

  it('a waiting sample re-sent and closed any number of times holds one waiter per open request', async () => {
    server = await startServer(ringServeConfig({ samples: { wait: 30 }, exchange: { wait: 30 } }), tmp.dir);
    const url = server.url;
    const first = fetch(`${url}/v1/samples`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'a', ...s('g', 2, '1', 'r1') }),
    }).then(async (r) => ({ status: r.status, body: JSON.parse(await r.text()) }));
    await until(url, 'corl_serve_sample_waiters', 1);
    for (let i = 0; i < 20; i++) {
      const ctrl = new AbortController();
      const retry = fetch(`${url}/v1/samples`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'a', ...s('g', 2, '1', 'r1') }),
        signal: ctrl.signal,
      }).catch((e: Error) => e.name);
      await until(url, 'corl_serve_sample_waiters', 2);
      ctrl.abort();
      expect(await retry).to.equal('AbortError');
      await until(url, 'corl_serve_sample_waiters', 1);
    }
    expect(await gauge(url, 'corl_serve_pending_samples')).to.equal(1);
    // The group completes; the first request gets its answer (b's label supervises a).
    await Promise.all([
      post(url, '/v1/samples', { agent: 'a', ...s('g', 2, '2', 'r2') }),
      post(url, '/v1/samples', { agent: 'b', ...s('g', 1, '2', 'q1') }),
    ]);
    const answer = await first;
    expect([answer.status, answer.body.requestId, answer.body.reward, answer.body.label]).to.deep.equal([
      200,
      'r1',
      0,
      '2',
    ]);
    expect(await gauge(url, 'corl_serve_sample_waiters')).to.equal(0);
  });

  it('deferred samples of one agent are held within samples.maxPending, waiting or answered; another agent is served', async () => {
    server = await startServer(ringServeConfig({ samples: { maxPending: 2 }, exchange: { wait: 30 } }), tmp.dir);
    const url = server.url;
    // Groups of one sample are scored at once and wait for the peer (the mailbox holds them unanswered).
    const a = await post(url, '/v1/samples', {
      agent: 'a',
      defer: true,
      samples: [s('g1', 1, '1', 'a1'), s('g2', 1, '1', 'a2')],
    });
    expect(a.body.samples.map((x: any) => x.status)).to.deep.equal(['pending', 'pending']);
    const full = await post(url, '/v1/samples', { agent: 'a', defer: true, samples: [s('g3', 1, '1', 'a3')] });
    expect(full.body.samples[0].error).to.deep.include({ code: 'CORL_ERR_SERVE_BUSY', status: 503 });
    expect(full.body.samples[0].error.message).to.contain('held without an answer');
    expect(await gauge(url, 'corl_serve_pending_samples')).to.equal(0);
    const b = await post(url, '/v1/samples', {
      agent: 'b',
      defer: true,
      samples: [s('g1', 1, '2', 'b1'), s('g2', 1, '2', 'b2')],
    });
    expect(b.body.samples.map((x: any) => x.status)).to.deep.equal(['pending', 'pending']);
    // Now a's two are answered: one more of a lets the oldest answered go (posted again, it is replayed).
    const w = await post(url, '/v1/samples/wait', { agent: 'a', requestIds: ['a1', 'a2'] });
    expect(w.body.samples.map((x: any) => [x.requestId, x.label])).to.deep.equal([
      ['a1', '2'],
      ['a2', '2'],
    ]);
    const a3 = await post(url, '/v1/samples', { agent: 'a', defer: true, samples: [s('g3', 1, '1', 'a3')] });
    expect(a3.body.samples).to.deep.equal([{ requestId: 'a3', status: 'pending' }]);
    expect((await get(url, '/health')).body.samples.deferred).to.equal(4);
    const again = await post(url, '/v1/samples/wait', { agent: 'a', requestIds: ['a1', 'a2'], wait: 0 });
    expect([again.body.unknown, again.body.samples.map((x: any) => x.requestId)]).to.deep.equal([['a1'], ['a2']]);
    const replay = await post(url, '/v1/samples', { agent: 'a', ...s('g1', 1, '1', 'a1') });
    expect([replay.body.requestId, replay.body.label]).to.deep.equal(['a1', '2']);
  });
});
