// The attacks a hostile client can make with one request, against the real server: none may change
// what later requests get, and none may make a restart lose journaled labels.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { encodeLine } from '../../../core/serve/journal';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { boxed, get, post, ringServeConfig, startServer } from '../../fixtures/serve';
import { startService } from '../../integrations/serve-process';

/** A gauge or counter of GET /metrics. */
async function metric(server: RewardServer, series: string): Promise<number> {
  const text = (await get(server.url, '/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** Everything a refused request must leave as it was. */
async function state(server: RewardServer, dir: string): Promise<unknown> {
  return {
    newest: await metric(server, 'corl_serve_exchange_newest_step'),
    slots: await metric(server, 'corl_serve_exchange_slots'),
    records: await metric(server, 'corl_serve_journal_records_total'),
    journal: fs.readFileSync(path.join(dir, 'journal.jsonl'), 'utf8'),
  };
}

describe('serve: hostile steps (the step window)', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-hostile-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  const config = ringServeConfig({ exchange: { wait: 5, keepSteps: 4 } });
  // Step s: a answers 1, 1, 2 (plurality 1); b answers s+1 twice and 1 once (plurality s+1).
  const groupA = (s: number, id = `p${s}`) => boxed(id, ['1', '1', '2']);
  const groupB = (s: number, id = `p${s}`) => boxed(id, [String(s + 1), String(s + 1), '1']);
  const eq = (x: string, y: string): number => (x === y ? 1 : 0);
  // a is rewarded against b's plurality (s+1), b against a's (1).
  const rewardsA = (s: number) => ['1', '1', '2'].map((x) => eq(x, String(s + 1)));
  const rewardsB = (s: number) => [String(s + 1), String(s + 1), '1'].map((x) => eq(x, '1'));
  async function realStep(s: number): Promise<[any, any]> {
    const [a, b] = await Promise.all([
      post(server!.url, '/v1/groups', { agent: 'a', step: s, groups: [groupA(s)] }),
      post(server!.url, '/v1/groups', { agent: 'b', step: s, groups: [groupB(s)] }),
    ]);
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    expect(a.body.groups[0]).to.deep.include({ label: String(s + 1), source: 'supervisors', rewards: rewardsA(s) });
    expect(b.body.groups[0]).to.deep.include({ label: '1', source: 'supervisors', rewards: rewardsB(s) });
    return [a.body, b.body];
  }

  it('2^53-1, 1e21, negative, fractional and textual steps are refused with a coded 4xx and change nothing; real steps go on, also after a restart', async () => {
    server = await startServer(config, tmp.dir);
    const first = await realStep(0);
    // a waits at step 1 for b while the attacks come in: its slot must survive them.
    const waiting = post(server.url, '/v1/groups', { agent: 'a', step: 1, groups: [groupA(1)] });
    await new Promise((r) => setTimeout(r, 100));
    const before = await state(server, tmp.dir);
    const attacks: [unknown, number, string][] = [
      [Number.MAX_SAFE_INTEGER, 422, 'CORL_ERR_SERVE_STEP_AHEAD'],
      [1e21, 400, 'CORL_ERR_SERVE_BAD_REQUEST'],
      [2 ** 53, 400, 'CORL_ERR_SERVE_BAD_REQUEST'],
      [-1, 400, 'CORL_ERR_SERVE_BAD_REQUEST'],
      [1.5, 400, 'CORL_ERR_SERVE_BAD_REQUEST'],
      ['2', 400, 'CORL_ERR_SERVE_BAD_REQUEST'],
      [10, 422, 'CORL_ERR_SERVE_STEP_AHEAD'], // newest is 1, window 8
    ];
    for (const agent of ['a', 'b']) {
      for (const [step, status, code] of attacks) {
        const r = await post(server.url, '/v1/groups', { agent, step, groups: [boxed('evil', ['9'])] });
        expect(r.status, `${agent} step ${step}`).to.equal(status);
        expect(r.body.error.code).to.equal(code);
        expect(r.body.error.where).to.equal('step');
      }
    }
    // The same with raw JSON text (a number JSON.stringify would not write).
    const raw = await post(
      server.url,
      '/v1/groups',
      '{"agent":"a","step":9007199254740993,"groups":[{"id":"evil","completions":["x"]}]}',
    );
    expect(raw.status).to.equal(400);
    expect(await state(server, tmp.dir)).to.deep.equal(before);
    const health = (await get(server.url, '/health')).body;
    expect(health.exchange.newestStep).to.equal(1);

    // b reaches step 1: a's waiting request gets b's label; every later real step works.
    const [, b1] = await Promise.all([
      waiting,
      post(server.url, '/v1/groups', { agent: 'b', step: 1, groups: [groupB(1)] }),
    ]);
    expect(b1.body.groups[0]).to.deep.include({ label: '1', source: 'supervisors' });
    expect((await waiting).body.groups[0]).to.deep.include({ label: '2', source: 'supervisors', rewards: rewardsA(1) });
    await realStep(2);

    // Restart: the journal holds every label; retries replay them; steps go on.
    await server.close();
    server = await startServer(config, tmp.dir);
    const again = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [groupA(0)] });
    expect(again.body).to.deep.equal(first[0]);
    expect((await post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [groupB(0)] })).body).to.deep.equal(
      first[1],
    );
    expect((await get(server.url, '/health')).body.exchange.newestStep).to.equal(2);
    await realStep(3);
    expect(
      (
        await post(server.url, '/v1/groups', {
          agent: 'a',
          step: Number.MAX_SAFE_INTEGER,
          groups: [boxed('evil', ['9'])],
        })
      ).status,
    ).to.equal(422);
  });

  it("posts inside maxStepsAhead cannot walk the window: another agent's steps, and the retry of its acknowledged answer, are untouched (issue 30)", async () => {
    // Before: nine posts of one agent at steps 8, 16, ..., 72 made every real step 0-8 answer 410,
    // the retry of an acknowledged answer included.
    server = await startServer(ringServeConfig({ exchange: { wait: 5 } }), tmp.dir);
    const [a0] = await realStep(0);
    const walked = [];
    for (let k = 1; k <= 9; k++)
      walked.push(
        (await post(server.url, '/v1/groups', { agent: 'b', step: 8 * k, groups: [boxed('x', ['1'])] })).status,
      );
    expect(walked).to.deep.equal([200, 422, 422, 422, 422, 422, 422, 422, 422]);
    expect((await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [groupA(0)] })).body).to.deep.equal(a0);
    for (let s = 1; s <= 8; s++) {
      const r = await post(server.url, '/v1/groups', {
        agent: 'a',
        step: s,
        groups: [boxed(`solo${s}`, ['1'])],
        wait: 0,
      });
      expect(r.status, `step ${s}`).to.equal(200);
    }
    expect((await get(server.url, '/health')).body.exchange.steps).to.deep.equal({ a: 8, b: 8 });
  });

  it('the first step of an empty exchange must be within the window of serve.exchange.startStep', async () => {
    server = await startServer(config, tmp.dir);
    const far = await post(server.url, '/v1/groups', { agent: 'a', step: 500, groups: [groupA(500)] });
    expect(far.status).to.equal(422);
    expect(far.body.error.message).to.contain('at most 8').and.contain('is at step 0');
    expect(fs.readFileSync(path.join(tmp.dir, 'journal.jsonl'), 'utf8').split('\n')).to.have.length(2); // the header alone
    await server.close();
    server = await startServer(ringServeConfig({ exchange: { wait: 5, keepSteps: 4, startStep: 500 } }), tmp.dir);
    await realStep(500);
    expect((await post(server.url, '/v1/groups', { agent: 'a', step: 495, groups: [groupA(495)] })).status).to.equal(
      410,
    ); // 4 steps kept
  });

  it('a post may run at most maxStepsAhead beyond the slowest agent; one agent alone moves nothing', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0, maxStepsAhead: 3 } }), tmp.dir);
    const at = async (agent: string, step: number) =>
      (await post(server!.url, '/v1/groups', { agent, step, groups: [boxed('g', ['1'])] })).status;
    expect(await at('a', 4)).to.equal(422);
    expect(await at('a', 3)).to.equal(200);
    expect(await at('a', 4)).to.equal(422); // b is still at 0
    expect(await at('b', 2)).to.equal(200);
    expect(await at('a', 5)).to.equal(200);
    expect(await at('a', 6)).to.equal(422);
    expect(await at('b', 0)).to.equal(200); // behind is fine while kept
    expect(await metric(server, 'corl_serve_exchange_newest_step')).to.equal(5);
    expect((await get(server.url, '/health')).body.exchange.steps).to.deep.equal({ a: 5, b: 2 });
  });

  it('a restart after hostile steps keeps every label: the compaction counts back from the real newest step', async () => {
    server = await startServer(config, tmp.dir);
    const steps = [];
    for (let s = 0; s < 3; s++) steps.push(await realStep(s));
    for (const step of [Number.MAX_SAFE_INTEGER, 1e21, 4096])
      await post(server.url, '/v1/groups', { agent: 'b', step, groups: [boxed('evil', ['9'])] });
    await server.close();
    server = await startServer(config, tmp.dir);
    const journal = fs.readFileSync(path.join(tmp.dir, 'journal.jsonl'), 'utf8');
    expect(journal).to.not.contain('evil');
    for (let s = 0; s < 3; s++) {
      const r = await post(server.url, '/v1/groups', { agent: 'a', step: s, groups: [groupA(s)] });
      expect(r.body, `step ${s}`).to.deep.equal(steps[s]![0]);
    }
    expect(server.metrics.replays.get()).to.equal(3);
  });
});

describe('serve: caps on groups per step, completions per group, id length', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-caps-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it("a step holds at most maxGroupsPerStep distinct ids per agent: one agent's junk never fills another's step", async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0, keepSteps: 2, maxGroupsPerStep: 5 } }), tmp.dir);
    const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => boxed(`g${from + i}`, ['1']));
    expect((await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: ids(0, 4) })).status).to.equal(200);
    // b posts the same ids (they share slots) plus one new: fits.
    expect((await post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: ids(0, 5) })).status).to.equal(200);
    expect((await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: ids(4, 1) })).status).to.equal(200);
    const before = await state(server, tmp.dir);
    const full = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [...ids(3, 2), ...ids(100, 1)] });
    expect(full.status).to.equal(422);
    expect(full.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_STEP_FULL', where: 'groups' });
    expect(full.body.error.message).to.contain('of agent "a"').and.contain('5 held and 1 new');
    const tooMany = await post(server.url, '/v1/groups', { agent: 'a', step: 1, groups: ids(0, 6) });
    expect(tooMany.status).to.equal(413);
    expect(tooMany.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_LIMIT', where: 'groups' });
    expect(await state(server, tmp.dir)).to.deep.equal(before);
    // a fills step 1 with junk; b's real ids at step 1 still go in.
    expect((await post(server.url, '/v1/groups', { agent: 'a', step: 1, groups: ids(500, 5) })).status).to.equal(200);
    expect((await post(server.url, '/v1/groups', { agent: 'a', step: 1, groups: ids(600, 1) })).status).to.equal(422);
    expect((await post(server.url, '/v1/groups', { agent: 'b', step: 1, groups: ids(700, 5) })).status).to.equal(200);
    // A flood of distinct ids over many steps: the slots stay within agents x keepSteps x maxGroupsPerStep
    // (plus the steps run ahead of the slower agent).
    for (let step = 2; step <= 7; step++) {
      for (const agent of ['a', 'b']) {
        const statuses = [];
        for (let k = 0; k < 7; k++)
          statuses.push(
            (
              await post(server.url, '/v1/groups', {
                agent,
                step,
                groups: ids(10000 * step + 100 * k + (agent === 'a' ? 0 : 1), 1),
              })
            ).status,
          );
        expect(statuses, `${agent} at step ${step}`).to.deep.equal([200, 200, 200, 200, 200, 422, 422]);
      }
    }
    expect(await metric(server, 'corl_serve_exchange_slots')).to.equal(2 * 2 * 5);
    expect((await get(server.url, '/health')).status).to.equal(200);
  });

  it("an agent holds at most serve.exchange.maxHeldKeyChars of answer keys: a flood of long distinct answers is refused, another agent's posts go on, a restart keeps the count (issue 30)", async () => {
    // Before: counts capped each key and the ids per step, not the text held: one agent could hold ~1 GiB a step.
    const config = ringServeConfig({ exchange: { wait: 0, keepSteps: 1, maxHeldKeyChars: 2048 } });
    server = await startServer(config, tmp.dir);
    const long = (tag: string) => [`${tag}-x`.padEnd(500, '7'), `${tag}-y`.padEnd(500, '7')]; // 1,000 characters of keys
    const send = (agent: string, step: number, id: string, answers = long(`${agent}${step}${id}`)) =>
      post(server!.url, '/v1/groups', { agent, step, groups: [boxed(id, answers)] });
    expect((await send('a', 0, 'p0')).status).to.equal(200);
    expect((await send('a', 0, 'p1')).status).to.equal(200); // 2,000 held
    const before = await state(server, tmp.dir);
    const full = await send('a', 0, 'p2');
    expect(full.status).to.equal(422);
    expect(full.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_KEYS_FULL', where: 'groups' });
    expect(full.body.error.message).to.contain('agent "a"').and.contain('2000 held and 1000 new');
    expect(await state(server, tmp.dir)).to.deep.equal(before); // nothing stored, nothing journaled
    // The retry of a stored group adds nothing and is answered; b has a budget of its own.
    expect((await send('a', 0, 'p0')).status).to.equal(200);
    expect((await send('b', 0, 'p0')).status).to.equal(200);
    expect((await send('b', 0, 'p1')).status).to.equal(200);
    // A restart rebuilds the count from the journal: still full.
    await server.close();
    server = await startServer(config, tmp.dir);
    expect((await send('a', 0, 'p2')).body.error?.code).to.equal('CORL_ERR_SERVE_KEYS_FULL');
    // Once the cohort moves on, step 0 leaves the window and its keys with it.
    for (const step of [1, 2])
      for (const agent of ['a', 'b']) expect((await send(agent, step, 'q', ['1'])).status).to.equal(200);
    expect((await send('a', 2, 'p2')).status).to.equal(200);
    expect((await send('a', 2, 'p3')).status).to.equal(200); // 2,000 and a few of "1"
    expect((await send('a', 2, 'p4')).status).to.equal(422);
  });

  it('an answer key of 100 kB is kept, voted, answered and journaled as its digest (serve.maxKeyChars)', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 5 }, maxKeyChars: 100 }), tmp.dir);
    const huge = 'ab'.repeat(50_000);
    const other = 'ab'.repeat(49_999) + 'ac';
    const [a, b] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g', [huge, huge, other, '1'])] }),
      post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g', [huge, other, huge])] }),
    ]);
    expect(a.status).to.equal(200);
    const [k1, k2, k3, k4] = a.body.groups[0].keys as string[];
    expect(k1).to.match(/^sha256:[A-Za-z0-9_-]{43}$/);
    expect(k2).to.equal(k1);
    expect(k3)
      .to.match(/^sha256:/)
      .and.not.equal(k1); // a different long answer: a different digest
    expect(k4).to.equal('1');
    // a is rewarded against b's plurality (huge, twice): the digests vote like the answers would.
    expect(a.body.groups[0]).to.deep.include({ label: k1, rewards: [1, 1, 0, 0] });
    expect(b.body.groups[0]).to.deep.include({ label: k1, rewards: [1, 0, 1] });
    expect(JSON.stringify(a.body).length + JSON.stringify(b.body).length).to.be.below(3000);
    expect(fs.statSync(path.join(tmp.dir, 'journal.jsonl')).size).to.be.below(5000);
  });

  it('more completions than serve.maxCompletions, or an id over 1024 characters: 413 naming the field', async () => {
    server = await startServer(ringServeConfig({ maxCompletions: 4, exchange: { wait: 0 } }), tmp.dir);
    const five = await post(server.url, '/v1/groups', {
      agent: 'a',
      step: 0,
      groups: [boxed('g', ['1', '1']), boxed('h', ['1', '2', '3', '4', '5'])],
    });
    expect(five.status).to.equal(413);
    expect(five.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_LIMIT', where: 'groups[1].completions' });
    const long = await post(server.url, '/v1/groups', {
      agent: 'a',
      step: 0,
      groups: [boxed('x'.repeat(1025), ['1'])],
    });
    expect(long.status).to.equal(413);
    expect(long.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_LIMIT', where: 'groups[0].id' });
    expect(
      (
        await post(server.url, '/v1/groups', {
          agent: 'a',
          step: 0,
          groups: [boxed('x'.repeat(1024), ['1', '2', '3', '4'])],
        })
      ).status,
    ).to.equal(200);
    expect(await metric(server, 'corl_serve_exchange_slots')).to.equal(1);
  });

  it('POST /get_reward with ever new prompts holds at most agents x getReward.keepGroups groups, in memory and after a restart (issue 30)', async () => {
    // Before: keepRounds bounded the rounds of each prompt, not the prompts: every label stayed.
    const config = ringServeConfig({
      exchange: { wait: 0 },
      getReward: { groupSize: 1, wait: 0, keepGroups: 10 },
    });
    server = await startServer(config, tmp.dir);
    for (let i = 0; i < 200; i += 20)
      await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          post(server!.url, `/get_reward?agent=${k % 2 ? 'a' : 'b'}`, {
            query: ['\\boxed{1}'],
            prompts: [`prompt-${i + k}`],
          }),
        ),
      );
    expect(await metric(server, 'corl_serve_get_reward_slots')).to.equal(20);
    await server.close();
    server = await startServer(config, tmp.dir);
    expect(await metric(server, 'corl_serve_get_reward_slots')).to.equal(20);
    const lines = fs.readFileSync(path.join(tmp.dir, 'journal.jsonl'), 'utf8').trim().split('\n');
    expect(lines).to.have.length(1 + 20 * 2); // the header, then keys and answer of each group held
  });

  it('the journal stays bounded while the service runs (compacted as it grows); kill -9 under load loses no acknowledged reply (issue 30)', async function () {
    this.timeout(0); // a child process under load: no wall-clock bound on it
    // Before: the journal grew with every distinct label until a restart (and a restart needed a full copy).
    const config = ringServeConfig({
      exchange: { wait: 0 },
      getReward: { groupSize: 1, wait: 0, keepGroups: 10 },
      keepReplies: 20,
      journalGrowth: 0.01, // 10 KiB
    });
    const file = path.join(tmp.dir, 'serve.json');
    fs.writeFileSync(file, JSON.stringify({ ...config, name: 'serve-test' }));
    const journal = path.join(tmp.dir, 'journal.jsonl');
    const service = await startService(file, journal);
    const send = (url: string, i: number) =>
      fetch(`${url}/get_reward?agent=${i % 2 ? 'a' : 'b'}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `req-${i}` },
        body: JSON.stringify({ query: [`\\boxed{${i % 3}}`], prompts: [`prompt-${i}`] }),
      });
    const acked = new Map<number, unknown>();
    let largest = 0;
    for (let i = 0; i < 200; i += 10) {
      const batch = Array.from({ length: 10 }, (_, k) => i + k);
      const replies = await Promise.all(batch.map((n) => send(service.url, n)));
      for (const [k, r] of replies.entries()) {
        expect(r.status).to.equal(200);
        acked.set(batch[k]!, await r.json());
      }
      largest = Math.max(largest, fs.statSync(journal).size);
    }
    // 200 requests of 3 records each would be about 200 KB; held: 2 x 10 groups and 2 x 20 replies.
    expect(largest).to.be.below(60_000);
    // kill -9 while 10 more requests are in flight: whatever was acknowledged must survive.
    const flying = Array.from({ length: 10 }, (_, k) =>
      send(service.url, 200 + k).then(
        async (r) => (r.status === 200 ? acked.set(200 + k, await r.json()) : undefined),
        () => undefined,
      ),
    );
    await new Promise((r) => setTimeout(r, 5));
    await service.stop('SIGKILL');
    await Promise.all(flying);
    server = await startServer(config, tmp.dir);
    // Every acknowledged request still within keepReplies of its agent is re-answered identically.
    const newest = [...acked.keys()].sort((x, y) => y - x).slice(0, 10);
    for (const i of newest) {
      const again = await send(server.url, i);
      expect(again.status, `request ${i}`).to.equal(200);
      expect(await again.json(), `request ${i}`).to.deep.equal(acked.get(i));
    }
    expect(await metric(server, 'corl_serve_idempotent_replays_total')).to.equal(newest.length);
  });

  it("one client's slow symbolic comparisons do not hold another client's (issue 30)", async function () {
    this.timeout(120000);
    // Before: two answers \sum_{k=1}^{10^9} k^n stalled another client's symbolic request 12.8 s.
    const config = {
      name: 'serve-symbolic',
      agents: [{ name: 'a' }, { name: 'b' }],
      topology: 'corl:self',
      reward: 'corl:vote',
      equivalence: { use: 'corl:math', options: { workers: 1 } },
      serve: { port: 0, exchange: { wait: 0 } },
    };
    server = await startServer(config, tmp.dir);
    const sums = [2, 3, 5, 7].map((n) => `\\sum_{k=1}^{10^{9}} k^{${n}}`);
    let attackDone = false;
    const attack = post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('s', sums)] }).then((r) => {
      attackDone = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    const victim = await post(server.url, '/v1/groups', {
      agent: 'b',
      step: 0,
      groups: [boxed('v', ['\\sqrt[3]{8}', '2', '2'])],
    });
    expect(victim.status).to.equal(200);
    expect(victim.body.groups[0].rewards).to.deep.equal([1, 1, 1]); // the cube root is 2: one comparison
    // Answered while the attacker's comparisons (each to its 2 s limit) still ran: the victim's lane
    // got a worker of its own instead of waiting behind them.
    expect(attackDone).to.equal(false);
    expect((await attack).status).to.equal(200);
  });

  it('the serve config refuses a headers timeout longer than the body timeout', async () => {
    try {
      server = await startServer(ringServeConfig({ timeouts: { headers: 30, body: 10 } }), tmp.dir);
      expect.fail('started');
    } catch (e) {
      expect((e as Error).message).to.contain('serve.timeouts.headers');
    }
  });
});

describe('serve: slow clients and nonsensical journal records', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-slow-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it('200 unfinished bodies do not starve GET /health, and the body timeout cuts them with 408', async () => {
    server = await startServer(ringServeConfig({ timeouts: { headers: 1, body: 1.5, idle: 5 } }), tmp.dir);
    const url = new URL(server.url);
    const sockets: net.Socket[] = [];
    const answers: Promise<string>[] = [];
    for (let i = 0; i < 200; i++) {
      const s = net.connect(Number(url.port), url.hostname);
      sockets.push(s);
      answers.push(
        new Promise((resolve) => {
          let t = '';
          s.on('data', (d) => {
            t += d;
          });
          s.on('close', () => resolve(t));
          s.on('error', () => resolve(t));
        }),
      );
      s.write(
        'POST /v1/groups HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"agent":',
      );
    }
    const health = await get(server.url, '/health');
    expect(health.status).to.equal(200);
    const texts = await Promise.all(answers);
    expect(texts.filter((t) => t.startsWith('HTTP/1.1 408'))).to.have.length(200);
    expect(await metric(server, 'corl_serve_client_errors_total{reason="timeout"}')).to.equal(200);
    expect((await get(server.url, '/health')).status).to.equal(200);
  });

  it('a well-formed record that means nothing (unknown agent) is refused at restore naming the line, and the file is left as it was', async () => {
    const config = ringServeConfig({ exchange: { wait: 0 } });
    server = await startServer(config, tmp.dir);
    expect(
      (await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g', ['1', '2'])] })).status,
    ).to.equal(200);
    await server.close();
    server = undefined;
    const file = path.join(tmp.dir, 'journal.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const no = lines.findIndex((l) => l.includes('"t":"keys"'));
    expect(no).to.equal(1);
    const forged = JSON.parse(lines[no]!) as Record<string, unknown>;
    delete forged.c;
    lines[no] = encodeLine(JSON.parse(JSON.stringify(forged).replace('"a":"a"', '"a":"zed"'))).trimEnd();
    fs.writeFileSync(file, lines.join('\n'));
    const before = fs.readFileSync(file, 'utf8');
    try {
      server = await startServer(config, tmp.dir);
      expect.fail('started');
    } catch (e) {
      expect((e as { code?: string }).code).to.equal('CORL_ERR_SERVE_JOURNAL_RECORD');
      expect((e as Error).message).to.contain(`line ${no + 1}`);
    }
    expect(fs.readFileSync(file, 'utf8')).to.equal(before);
  });
});

describe('serve: a vote over many distinct long answers (in-process comparisons)', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => (tmp = tempDir('corl-serve-votes-')));
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  // K distinct answers of about 1 kB each: the vote compares K²/2 pairs, every one settled in-process
  // by corl:math's fast checks (about 2 s of one core per group of 256 on the 2-core machine).
  const heavy = (groups: number, step: number) => ({
    agent: 'a',
    step,
    wait: 0,
    groups: Array.from({ length: groups }, (_, g) =>
      boxed(
        `heavy-${g}`,
        Array.from({ length: 256 }, (_, k) => `${g}-${k}-${'x'.repeat(990)}`),
      ),
    ),
  });

  it('other clients are answered while it runs; its client going away ends it (499) (issue 30)', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0 } }), tmp.dir);
    const order: string[] = [];
    const gone = new AbortController();
    const attack = fetch(`${server.url}/v1/groups`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(heavy(32, 0)),
      signal: gone.signal,
    }).then(
      () => order.push('attack answered'),
      () => order.push('attack gone'),
    );
    // Once the attack's work has begun, another agent's small group and a probe get their answers.
    await new Promise((r) => setTimeout(r, 200));
    const victim = await post(server.url, '/v1/groups', {
      agent: 'b',
      step: 0,
      wait: 0,
      groups: [boxed('q', ['4', '4'])],
    });
    order.push('victim answered');
    expect(victim.status, JSON.stringify(victim.body)).to.equal(200);
    expect(victim.body.groups[0]).to.deep.include({ label: '4', rewards: [1, 1] });
    expect((await get(server.url, '/health')).status).to.equal(200);
    gone.abort();
    await attack;
    expect(order).to.deep.equal(['victim answered', 'attack gone']);
    // The attacker's request ended with its connection, counted as 499 (once the handler has seen it).
    const gone499 = /corl_serve_requests_total\{route="\/v1\/groups",status="499"\} 1/;
    let text = '';
    for (let i = 0; i < 600 && !gone499.test(text); i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = (await get(server.url, '/metrics')).body as string;
    }
    expect(text).to.match(gone499);
  });

  it('serve.timeouts.work stops the in-process comparisons too: a coded 503, then the service goes on', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0 }, timeouts: { work: 1 } }), tmp.dir);
    const r = await post(server.url, '/v1/groups', heavy(32, 0));
    expect(r.status, JSON.stringify(r.body)).to.equal(503);
    expect(r.body.error.code).to.equal('CORL_ERR_SERVE_WORK_TIMEOUT');
    expect(r.body.error.message).to.not.match(/\n\s+at /);
    const next = await post(server.url, '/v1/groups', { agent: 'b', step: 0, wait: 0, groups: [boxed('q', ['4'])] });
    expect(next.status, JSON.stringify(next.body)).to.equal(200);
  });
});
