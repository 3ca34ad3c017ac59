// Idempotent retries by request id (issue 30, item 4): one computation per (agent, key), shared
// while it runs, replayed after, also across a restart; a key reused for another body is refused.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JournalRecord } from '../../../core/serve/journal';
import { ReplyLedger, requestId } from '../../../core/serve/ledger';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { get, post, startServer } from '../../fixtures/serve';

const H1 = 'A'.repeat(27);
const H2 = 'B'.repeat(27);

describe('serve/ledger', () => {
  it('computes once per agent and key, shares the computation while it runs, replays the stored reply after', async () => {
    const appended: JournalRecord[] = [];
    const ledger = new ReplyLedger(
      ['a', 'b'],
      { append: async (r) => void appended.push(...r) },
      { count: 2, bytes: 1e9 },
    );
    let calls = 0;
    let release!: (v: unknown) => void;
    const compute = () => {
      calls++;
      return new Promise((r) => (release = r));
    };
    const first = ledger.run(0, 'k1', H1, compute);
    const retry = ledger.run(0, 'k1', H1, compute);
    const otherAgent = ledger.run(1, 'k1', H1, async () => ({ other: true }));
    release({ reward: 1 });
    expect(await first).to.deep.equal({ reward: 1 });
    expect(await retry).to.deep.equal({ reward: 1 });
    expect(await otherAgent).to.deep.equal({ other: true });
    expect(await ledger.run(0, 'k1', H1, compute)).to.deep.equal({ reward: 1 });
    expect(calls).to.equal(1);
    expect(() => ledger.run(0, 'k1', H2, compute)).to.throw(/CORL_ERR_SERVE_CONFLICT|different one/);
    expect(appended.map((r) => `${r.a}:${r.g}:${r.s}`).sort()).to.deep.equal(['a:k1:0', 'b:k1:0']);
  });

  it('forgets a failed computation (a retry computes again) and keeps the newest `keep` keys per agent', async () => {
    const ledger = new ReplyLedger(['a'], { append: async () => undefined }, { count: 2, bytes: 1e9 });
    let n = 0;
    await ledger.run(0, 'bad', H1, async () => Promise.reject(new Error('boom'))).catch(() => undefined);
    expect(await ledger.run(0, 'bad', H1, async () => ++n)).to.equal(1);
    await ledger.run(0, 'k2', H1, async () => ++n);
    await ledger.run(0, 'k3', H1, async () => ++n);
    expect(ledger.size).to.equal(2);
    expect(await ledger.run(0, 'bad', H1, async () => ++n)).to.equal(4); // forgotten: computed anew
  });

  it('holds at most `keep.bytes` of replies per agent: a few large replies push out older ones, in memory and in the journal', async () => {
    const records: JournalRecord[] = [];
    const ledger = new ReplyLedger(
      ['a', 'b'],
      { append: async (r) => void records.push(...r) },
      { count: 100, bytes: 2500 },
    );
    const big = (i: number) => ({ rewards: [i], pad: 'x'.repeat(1000) }); // 1,024 bytes as JSON
    expect(JSON.stringify(big(1)).length).to.equal(1024);
    for (let i = 1; i <= 5; i++) await ledger.run(0, `k${i}`, H1, async () => big(i));
    await ledger.run(1, 'k1', H1, async () => big(9));
    // a: 1,024 + 1,024 ≤ 2,500 < 3 × 1,024: its newest two stay; b is counted apart
    expect(ledger.snapshot().map((r) => `${r.a}:${r.g}`)).to.deep.equal(['a:k4', 'a:k5', 'b:k1']);
    expect(await ledger.run(0, 'k1', H1, async () => 'anew')).to.equal('anew'); // let go: a new request
    // A reply over the bound alone is still kept and replayed (one is always kept) ...
    const one = new ReplyLedger(['a'], { append: async () => undefined }, { count: 100, bytes: 1000 });
    await one.run(0, 'huge', H1, async () => big(7));
    expect(await one.run(0, 'huge', H1, async () => 'anew')).to.deep.equal(big(7));
    // ... and a restart rebuilds the same bound from the records
    const two = new ReplyLedger(['a', 'b'], { append: async () => undefined }, { count: 100, bytes: 2500 });
    for (const r of records) two.restore(r);
    expect(two.snapshot()).to.deep.equal(ledger.snapshot());
  });

  it('rebuilds from its records; a fingerprint-only ledger recomputes (the route answers identically anyway)', async () => {
    const records: JournalRecord[] = [];
    const one = new ReplyLedger(['a'], { append: async (r) => void records.push(...r) }, { count: 8, bytes: 1e9 });
    await one.run(0, 'k', H1, async () => ({ rewards: [1] }));
    await one.run(0, 'j', H2, async () => ({ rewards: [0] }));
    const two = new ReplyLedger(['a'], { append: async () => undefined }, { count: 8, bytes: 1e9 });
    for (const r of records) two.restore(r);
    expect(two.snapshot()).to.deep.equal(one.snapshot());
    expect(await two.run(0, 'k', H1, async () => 'recomputed')).to.deep.equal({ rewards: [1] });
    const ids = new ReplyLedger(
      ['a'],
      { append: async () => expect.fail('journaled') },
      { count: 8, bytes: 1e9 },
      false,
    );
    expect(await ids.run(0, 'k', H1, async () => 1)).to.equal(1);
    expect(await ids.run(0, 'k', H1, async () => 2)).to.equal(2);
    expect(() => ids.run(0, 'k', H2, async () => 3)).to.throw(/different one/);
    expect(ids.snapshot()).to.deep.equal([]);
  });

  it('takes 1 to 200 printable characters as a request id', () => {
    expect(requestId(undefined)).to.equal(undefined);
    expect(requestId('0f3c-9a')).to.equal('0f3c-9a');
    for (const bad of ['', 'has space', 'x'.repeat(201), 'é'])
      expect(() => requestId(bad), JSON.stringify(bad)).to.throw(/Idempotency-Key/);
  });
});

describe('serve/ledger: through the service', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-ledger-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });
  const config = {
    agents: [{ name: 'a' }],
    topology: 'corl:self',
    reward: 'corl:vote',
    serve: { port: 0, getReward: { groupSize: 3, wait: 20 } },
  };
  const sample = (a: string) => ({ query: [`P: so \\boxed{${a}}`], prompts: ['P: '] });
  async function metric(series: string): Promise<number> {
    const line = ((await get(server!.url, '/metrics')).body as string).split('\n').find((l) => l.startsWith(series));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }
  /** Poll a gauge until it reads `value` (a request in flight on a loaded machine takes a moment). */
  async function until(series: string, value: number): Promise<void> {
    for (let k = 0; k < 200 && (await metric(series)) !== value; k++) await new Promise((r) => setTimeout(r, 25));
    expect(await metric(series), series).to.equal(value);
  }
  /** A POST whose sample reaches the barrier, and whose client then gives up (closes the connection). */
  async function abandoned(body: unknown, headers: Record<string, string>): Promise<void> {
    const ctrl = new AbortController();
    const sent = fetch(server!.url + '/get_reward', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: ctrl.signal,
    }).catch(() => undefined);
    await until('corl_serve_barrier_pending_samples', 1);
    ctrl.abort();
    await sent;
  }

  it('a keyed /get_reward sample retried while it waits, and after, is one sample; the reply survives a restart', async () => {
    server = await startServer(config, tmp.dir);
    const key = { 'idempotency-key': 'req-1' };
    await abandoned(sample('5'), key); // the client timed out; its sample waits at the barrier
    await new Promise((r) => setTimeout(r, 100));
    expect(await metric('corl_serve_barrier_pending_samples')).to.equal(1);
    const retry = post(server.url, '/get_reward', sample('5'), key);
    const others = ['4', '4'].map((a) => post(server!.url, '/get_reward', sample(a)));
    const [r, o1, o2] = await Promise.all([retry, ...others]);
    // The group is 5, 4, 4 (one 5, not two): label 4.
    expect(r.body.rewards).to.deep.equal([0]);
    expect([o1!.body.rewards, o2!.body.rewards]).to.deep.equal([[1], [1]]);
    expect(await metric('corl_serve_completions_scored_total{route="/get_reward"}')).to.equal(3);
    const again = await post(server.url, '/get_reward', sample('5'), key);
    expect(again.body).to.deep.equal(r.body);
    const reused = await post(server.url, '/get_reward', sample('4'), key);
    expect(reused.status).to.equal(409);
    expect(reused.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_CONFLICT', where: 'Idempotency-Key' });
    await server.close();
    server = await startServer(config, tmp.dir);
    const after = await post(server.url, '/get_reward', sample('5'), key);
    expect(after.body).to.deep.equal(r.body);
    expect(await metric('corl_serve_barrier_pending_samples')).to.equal(0);
    expect(fs.readFileSync(path.join(tmp.dir, 'journal.jsonl'), 'utf8')).to.contain('"t":"reply"');
  });

  it('an unkeyed sample whose client leaves before its group is complete leaves the barrier (never counted)', async () => {
    server = await startServer(config, tmp.dir);
    await abandoned(sample('5'), {});
    await until('corl_serve_barrier_pending_samples', 0);
    const answers = await Promise.all(['5', '4', '4'].map((a) => post(server!.url, '/get_reward', sample(a))));
    expect(answers.map((x) => x.body.rewards[0])).to.deep.equal([0, 1, 1]);
    expect(await metric('corl_serve_completions_scored_total{route="/get_reward"}')).to.equal(3);
    expect(await metric('corl_serve_requests_total{route="/get_reward",status="499"}')).to.equal(1);
  });
});
