import { expect } from 'chai';
import { responseOf } from '../../../core/serve/barrier';
import { DEFAULT_STRIP_TOKENS } from '../../../core/config/serve-schema';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { get, post, ringServeConfig, startServer } from '../../fixtures/serve';

describe('serve/barrier: the response part of an OpenRLHF query', () => {
  it('drops the prompt prefix and trailing special tokens (repeatedly, with whitespace between)', () => {
    expect(
      responseOf(
        '<|im_start|>user\nQ<|im_end|>\nA: \\boxed{3}<|im_end|>\n<|endoftext|>',
        '<|im_start|>user\nQ<|im_end|>\n',
        DEFAULT_STRIP_TOKENS,
      ),
    ).to.equal('A: \\boxed{3}');
  });
  it('keeps the whole query when it does not start with the prompt', () => {
    expect(responseOf('decoded differently \\boxed{1}</s>', 'Q', DEFAULT_STRIP_TOKENS)).to.equal(
      'decoded differently \\boxed{1}',
    );
    expect(responseOf('x', undefined, [])).to.equal('x');
  });
});

describe('serve/barrier: POST /get_reward samples waiting at the barrier, bounded per agent (real server)', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-barrier-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  /** Until /health reports `n` samples at the barrier (a keyed request's samples stay after it goes away). */
  async function pendingIs(n: number): Promise<void> {
    for (;;) {
      if ((await get(server!.url, '/health')).body.getReward.pending === n) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('keyed requests that went away stay within getReward.maxPending of their agent; another agent is still served', async () => {
    server = await startServer(
      ringServeConfig({ getReward: { groupSize: 4, wait: 60, maxPending: 3 }, exchange: { wait: 60 } }),
      tmp.dir,
    );
    // a sends three keyed samples of distinct prompts, each of a group that never completes, and goes away
    for (let i = 0; i < 3; i++) {
      const gone = new AbortController();
      const sent = fetch(`${server.url}/get_reward?agent=a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `a-${i}` },
        body: JSON.stringify({ query: [`p${i} \\boxed{1}`], prompts: [`p${i}`] }),
        signal: gone.signal,
      }).catch(() => undefined);
      await pendingIs(i + 1);
      gone.abort();
      await sent;
    }
    await pendingIs(3);
    // at its bound: one more sample, or a request of two, is refused whole and joins nothing
    const more = await post(server.url, '/get_reward?agent=a', { query: ['p9 \\boxed{1}'], prompts: ['p9'] });
    expect([more.status, more.body.error.code]).to.deep.equal([503, 'CORL_ERR_SERVE_BUSY']);
    expect(more.body.error.message).to.contain('serve.getReward.maxPending');
    expect(more.body.error.stack).to.equal(undefined);
    expect((await get(server.url, '/health')).body.getReward).to.deep.include({ pending: 3, maxPending: 3 });
    // b has a bound of its own: its sample waits at the barrier (the server is shut down under it)
    const b = post(server.url, '/get_reward?agent=b', { query: ['p0 \\boxed{1}'], prompts: ['p0'] });
    await pendingIs(4);
    await server.close();
    server = undefined;
    expect((await b).status).to.equal(503);
  });

  it('a keyed request scored and retried: replayed, and nothing is left waiting at the barrier', async () => {
    server = await startServer(
      ringServeConfig({ getReward: { groupSize: 2, wait: 60, maxPending: 2 }, exchange: { wait: 0 } }),
      tmp.dir,
    );
    const body = { query: ['q \\boxed{1}', 'q \\boxed{2}'], prompts: ['q', 'q'] };
    const first = await post(server.url, '/get_reward?agent=a', body, { 'idempotency-key': 'k' });
    expect(first.status).to.equal(200);
    expect((await get(server.url, '/health')).body.getReward.pending).to.equal(0);
    const retry = await post(server.url, '/get_reward?agent=a', body, { 'idempotency-key': 'k' });
    expect(retry.body).to.deep.equal(first.body);
  });
});
