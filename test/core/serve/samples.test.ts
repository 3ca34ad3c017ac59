import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeLine } from '../../../core/serve/journal';
import { parseSamplesRequest } from '../../../core/serve/samples';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir, writeConfig } from '../../fixtures/configs';
import { boxed, get, post, ringServeConfig, startServer } from '../../fixtures/serve';
import { metric, startService, type Service } from '../../integrations/serve-process';

const text = (a: string | null): string => (a === null ? 'I do not know.' : `so the answer is \\boxed{${a}}`);

/** One sample of agent `agent` for group `group` (size K), answer `a`. */
function sample(
  agent: string,
  group: string,
  K: number,
  a: string | null,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { agent, group, size: K, prompt: `problem ${group}`, completion: text(a), ...extra };
}

/**
 * The answer to the late third sample of rollout u (answer 3) after a's short group (2, 3) met b's
 * (3, 3, 2) in round 0: rewarded alone against b's vote 3, flagged late.
 */
function expectLateInRound0(late: { status: number; body: any }): void {
  expect(late.status, JSON.stringify(late.body)).to.equal(200);
  expect(late.body).to.deep.include({
    round: 0,
    reward: 1,
    key: '3',
    label: '3',
    source: 'supervisors',
    groupSize: 1,
  });
  expect(late.body.metrics['exchange/late']).to.equal(1);
}

describe('serve/samples: POST /v1/samples (one completion per request, the service forms the groups)', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-samples-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it('a pointwise source scores a keyed sample once: its retry replays (also after a restart), a changed one is 409', async () => {
    const config = {
      agents: [{ name: 'solo' }],
      topology: 'corl:self',
      reward: 'corl:ground-truth',
      serve: { port: 0 },
    };
    server = await startServer(config, tmp.dir);
    const one = (x: string, extra: Record<string, unknown>) =>
      post(server!.url, '/v1/samples', sample('solo', 'g1', 2, x, { reference: '2', ...extra }));
    const first = await one('2', { step: 0, sample: 0 });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.reward).to.equal(1);
    const again = await one('2', { step: 0, sample: 0 });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect(server.metrics.replays.get(), 'answered from the stored answer, not scored again').to.equal(1);
    const changed = await one('3', { step: 0, sample: 0 });
    expect(changed.status).to.equal(409);
    expect(changed.body.error.code).to.equal('CORL_ERR_SERVE_CONFLICT');
    // the same position at another step, and a request id without a step, are new samples
    expect((await one('3', { step: 1, sample: 0 })).body.reward).to.equal(0);
    const keyed = await one('2', { requestId: 'r-1' });
    expect(keyed.body.reward).to.equal(1);
    await server.close();
    server = await startServer(config, tmp.dir);
    const replayed = await one('2', { requestId: 'r-1' });
    expect(replayed.body).to.deep.equal(keyed.body);
    expect(server.metrics.replays.get(), 'replayed from the journal').to.equal(1);
    expect((await one('5', { requestId: 'r-1' })).status).to.equal(409);
  });

  it("with a step: a's samples, posted one by one, form its group; b posts the whole group; each is rewarded by the other's plurality", async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    // a: 2, 3, 2 (own label 2); b: 3, 3, 2 (label 3). Ring: a supervised by b, b by a.
    const pa = ['2', '3', '2'].map((x, i) =>
      post(
        server!.url,
        '/v1/samples',
        sample('a', 'g1', 3, x, { step: 0, sample: i, completion: { text: text(x), length: 10 + i } }),
      ),
    );
    const pb = post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g1', ['3', '3', '2'])] });
    const [ra, rb] = await Promise.all([Promise.all(pa), pb]);
    const ra1 = ra[1]!;
    expect(ra.map((r) => r.status)).to.deep.equal([200, 200, 200]);
    expect(ra.map((r) => r.body.reward)).to.deep.equal([0, 1, 0]);
    expect(ra1.body).to.deep.include({
      agent: 'a',
      group: 'g1',
      step: 0,
      sample: 1,
      key: '3',
      label: '3',
      ownLabel: '2',
    });
    expect(ra1.body).to.deep.include({ source: 'supervisors', groupSize: 3 });
    expect(rb.body.groups[0]).to.deep.include({ rewards: [0, 0, 1], label: '2', source: 'supervisors' });
    expect(server.metrics.sampleGroups.get({ outcome: 'complete' })).to.equal(1);
    // Token counts were given: nothing untokenized on /v1/samples; b's strings were counted.
    expect(server.metrics.untokenized.get({ route: '/v1/samples' })).to.equal(0);
    expect(server.metrics.untokenized.get({ route: '/v1/groups' })).to.equal(3);
  });

  it('a group split across two processes (batches of samples) meets as one group', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    const K = 4;
    const a = ['5', '5', '7', null];
    const b = ['7', '7', '5', '7'];
    const batch = (agent: string, xs: (string | null)[], from: number): Record<string, unknown> => ({
      agent,
      step: 2,
      samples: xs.map((x, i) => ({
        group: 'p',
        size: K,
        sample: from + i,
        completion: text(x),
        requestId: `${agent}-${from + i}`,
      })),
    });
    const [a0, a1, b0, b1] = await Promise.all([
      post(server.url, '/v1/samples', batch('a', a.slice(0, 1), 0)),
      post(server.url, '/v1/samples', batch('a', a.slice(1), 1)),
      post(server.url, '/v1/samples', batch('b', b.slice(0, 3), 0)),
      post(server.url, '/v1/samples', batch('b', b.slice(3), 3)),
    ]);
    expect([...a0.body.samples, ...a1.body.samples].map((s: any) => s.reward)).to.deep.equal([0, 0, 1, 0]);
    expect([...b0.body.samples, ...b1.body.samples].map((s: any) => s.reward)).to.deep.equal([0, 0, 1, 0]);
    expect(a1.body.samples.map((s: any) => s.requestId)).to.deep.equal(['a-1', 'a-2', 'a-3']);
    expect(b1.body.samples[0]).to.deep.include({ label: '5', groupSize: 4, step: 2 });
  });

  it('without a step: rounds per group id, rollout tags keep two rounds apart however their samples interleave', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    // Round 0 of a: 1,1,2 (tag u0); round 1 of a: 2,2,1 (tag u1), posted interleaved, u1 first.
    const order: [string, string][] = [
      ['u1', '2'],
      ['u0', '1'],
      ['u1', '2'],
      ['u0', '1'],
      ['u0', '2'],
      ['u1', '1'],
    ];
    const pa = order.map(([tag, x], i) =>
      post(server!.url, '/v1/samples', sample('a', 'q', 3, x, { rollout: tag, requestId: `a${i}` })),
    );
    // b posts its two rounds in order, untagged: 2,2,2 then 1,1,1.
    const pb = ['2', '2', '2'].map((x, i) =>
      post(server!.url, '/v1/samples', sample('b', 'q', 3, x, { requestId: `b${i}` })),
    );
    const rb0 = await Promise.all(pb);
    const pb1 = ['1', '1', '1'].map((x, i) =>
      post(server!.url, '/v1/samples', sample('b', 'q', 3, x, { requestId: `b${3 + i}` })),
    );
    const [ra, rb1] = await Promise.all([Promise.all(pa), Promise.all(pb1)]);
    // u1 completed first but u0 posted first... rounds follow completion: u0's group (1,1,2) and
    // u1's (2,2,1) each meet b's round with the same number.
    const roundOf = (tag: string): number => ra[order.findIndex(([t]) => t === tag)]!.body.round;
    const r0 = roundOf('u0');
    const r1 = roundOf('u1');
    expect([r0, r1].sort()).to.deep.equal([0, 1]);
    const bLabel = (round: number): string => (round === 0 ? '2' : '1');
    ra.forEach((r, i) => {
      const [tag, x] = order[i]!;
      const round = tag === 'u0' ? r0 : r1;
      expect(r.body.round, `sample ${i}`).to.equal(round);
      expect(r.body.label).to.equal(bLabel(round));
      expect(r.body.reward).to.equal(x === bLabel(round) ? 1 : 0);
    });
    expect(rb0.map((r) => r.body.round)).to.deep.equal([0, 0, 0]);
    expect(rb1.map((r) => r.body.round)).to.deep.equal([1, 1, 1]);
    // A fourth sample for a scored rollout is refused, not started as a new round.
    const extra = await post(server.url, '/v1/samples', sample('a', 'q', 3, '1', { rollout: 'u0', requestId: 'late' }));
    expect(extra.status).to.equal(422);
    expect(extra.body.error.code).to.equal('CORL_ERR_SERVE_GROUP_SIZE');
  });

  it("without a step, groups match by problem: an agent that skipped a problem meets its peer's current group; an unseen peer is a metric", async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0.3, fallback: 'self' } }), tmp.dir);
    const url = server.url;
    // Epoch 1: a samples p (1, 1, 1); b filtered p out and never posts it: a falls back to itself.
    const e1 = await Promise.all(
      ['1', '1', '1'].map((x) => post(url, '/v1/samples', sample('a', 'p', 3, x, { rollout: 'e1' }))),
    );
    for (const r of e1) {
      expect(r.body).to.deep.include({ round: 0, source: 'self', label: '1', reward: 1 });
      expect(r.body.metrics['exchange/peer_unseen']).to.equal(1);
    }
    expect(server.metrics.unseen.get()).to.equal(1);
    // Epoch 2: both sample p. a: 3, 2, 2 (own label 2); b: 3, 3, 2 (label 3). Counted per agent, b's
    // first post of p would be round 0 (a's epoch 1); matched by problem, both meet at round 1.
    const [ra, rb] = await Promise.all([
      Promise.all(['3', '2', '2'].map((x) => post(url, '/v1/samples', sample('a', 'p', 3, x, { rollout: 'e2' })))),
      Promise.all(['3', '3', '2'].map((x) => post(url, '/v1/samples', sample('b', 'p', 3, x, { rollout: 'f2' })))),
    ]);
    expect(ra.map((r) => [r.body.round, r.body.source, r.body.label, r.body.reward])).to.deep.equal([
      [1, 'supervisors', '3', 1],
      [1, 'supervisors', '3', 0],
      [1, 'supervisors', '3', 0],
    ]);
    expect(rb.map((r) => [r.body.round, r.body.source, r.body.label, r.body.reward])).to.deep.equal([
      [1, 'supervisors', '2', 0],
      [1, 'supervisors', '2', 0],
      [1, 'supervisors', '2', 1],
    ]);
    expect(server.metrics.unseen.get()).to.equal(1);
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).to.match(/^corl_serve_exchange_peer_unseen_total 1$/m);
  });

  it('is idempotent by request id: a retry while waiting joins, after scoring replays byte for byte, a changed retry is 409', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0.2 } }), tmp.dir);
    const s0 = sample('a', 'g', 2, '4', { step: 1, requestId: 'r0' });
    const first = post(server.url, '/v1/samples', s0);
    const retry = post(server.url, '/v1/samples', s0);
    const s1 = sample('a', 'g', 2, '9', { step: 1, requestId: 'r1' });
    const [f, r, other] = await Promise.all([first, retry, post(server.url, '/v1/samples', s1)]);
    expect(f.body).to.deep.equal(r.body);
    expect(f.body).to.deep.include({ reward: 1, label: '4', source: 'self' }); // tie 4/9: "…{4}" sorts first
    expect(other.body.reward).to.equal(0);
    const later = await post(server.url, '/v1/samples', s0);
    expect(later.body).to.deep.equal(f.body);
    expect(server.metrics.replays.get()).to.equal(2);
    const changed = await post(server.url, '/v1/samples', { ...s0, completion: text('5') });
    expect(changed.status).to.equal(409);
    expect(changed.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_CONFLICT' });
    // A third sample for the scored two-sample group: refused, nothing changes.
    const third = await post(server.url, '/v1/samples', sample('a', 'g', 2, '4', { step: 1, requestId: 'r2' }));
    expect(third.status).to.equal(422);
    expect(third.body.error.code).to.equal('CORL_ERR_SERVE_GROUP_SIZE');
  });

  it('a late sample of a group scored short (samples.wait ran out) is rewarded as its group was, never 422', async () => {
    server = await startServer(ringServeConfig({ samples: { wait: 0.3 } }), tmp.dir);
    // b: 3, 3, 2 (label 3) for a; a posts 2 of its 3 samples (2, 3): scored short against 3.
    const pb = post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g1', ['3', '3', '2'])] });
    const early = await Promise.all(
      ['2', '3'].map((x, i) => post(server!.url, '/v1/samples', sample('a', 'g1', 3, x, { step: 0, sample: i }))),
    );
    expect(early.map((r) => [r.body.reward, r.body.groupSize, r.body.label])).to.deep.equal([
      [0, 2, '3'],
      [1, 2, '3'],
    ]);
    // The third arrives after: rewarded against b's label, flagged late; its retry gets the same.
    for (const x of ['3', '3']) {
      const late = await post(server.url, '/v1/samples', sample('a', 'g1', 3, x, { step: 0, sample: 2 }));
      expect(late.status, JSON.stringify(late.body)).to.equal(200);
      expect(late.body).to.deep.include({ reward: 1, key: '3', label: '3', source: 'supervisors', sample: 2 });
      expect(late.body.metrics['exchange/late']).to.equal(1);
    }
    expect((await pb).body.groups[0].rewards).to.deep.equal([0, 0, 1]); // a's short group ties 2/3: to 2
    // The retry (same position) was replayed from the stored late answer, not scored again.
    expect(server.metrics.sampleGroups.get({ outcome: 'late' })).to.equal(1);
  });

  it('without a step, a late sample of a rollout scored short is rewarded in its round as a stepped one is, not 422', async () => {
    server = await startServer(ringServeConfig({ samples: { wait: 0.3 }, exchange: { wait: 30 } }), tmp.dir);
    // b (3, 3, 2; vote 3) and a's 2 of 3 samples (2, 3; rollout u) meet in round 0: a's short group against 3.
    const pb = Promise.all(
      ['3', '3', '2'].map((x, i) =>
        post(server!.url, '/v1/samples', sample('b', 'q', 3, x, { rollout: 'v', requestId: `b${i}` })),
      ),
    );
    const early = await Promise.all(
      ['2', '3'].map((x, i) =>
        post(server!.url, '/v1/samples', sample('a', 'q', 3, x, { rollout: 'u', requestId: `a${i}` })),
      ),
    );
    expect(early.map((r) => [r.body.round, r.body.reward, r.body.groupSize, r.body.label])).to.deep.equal([
      [0, 0, 2, '3'],
      [0, 1, 2, '3'],
    ]);
    // The third sample of rollout u comes after: rewarded against b's vote in round 0, flagged late; its retry replays.
    for (let k = 0; k < 2; k++) {
      expectLateInRound0(
        await post(server.url, '/v1/samples', sample('a', 'q', 3, '3', { rollout: 'u', requestId: 'a2' })),
      );
    }
    expect(server.metrics.sampleGroups.get({ outcome: 'late' })).to.equal(1);
    // One more than the declared size: 422, as with a step.
    const extra = await post(server.url, '/v1/samples', sample('a', 'q', 3, '3', { rollout: 'u', requestId: 'a3' }));
    expect(extra.status).to.equal(422);
    expect(extra.body.error.code).to.equal('CORL_ERR_SERVE_GROUP_SIZE');
    expect((await pb).map((r) => r.body.reward)).to.deep.equal([0, 0, 1]); // a's short group 2, 3 ties: to 2
  });

  it('late samples are journaled: a keyed retry replays (also after a restart), a changed one is 409, past the size 422', async () => {
    const config = ringServeConfig({ samples: { wait: 0.3 } });
    server = await startServer(config, tmp.dir);
    // b: 3, 3, 2 (label 3); a posts 1 of its 3 samples (2): scored short against 3, reward 0.
    const pb = post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g1', ['3', '3', '2'])] });
    const early = await post(server.url, '/v1/samples', sample('a', 'g1', 3, '2', { step: 0, requestId: 'e0' }));
    expect([early.body.reward, early.body.groupSize]).to.deep.equal([0, 1]);
    await pb;
    const late = sample('a', 'g1', 3, '3', { step: 0, requestId: 'L1' });
    const first = await post(server.url, '/v1/samples', late);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body).to.deep.include({ reward: 1, key: '3', label: '3', requestId: 'L1' });
    expect((await post(server.url, '/v1/samples', late)).body).to.deep.equal(first.body);
    const changed = await post(server.url, '/v1/samples', { ...late, completion: text('2') });
    expect(changed.status).to.equal(409);
    expect(changed.body.error.code).to.equal('CORL_ERR_SERVE_CONFLICT');
    // The group holds 1 scored + 1 late of 3: one more late sample fits, the next is refused.
    const second = await post(server.url, '/v1/samples', sample('a', 'g1', 3, '2', { step: 0, requestId: 'L2' }));
    expect([second.status, second.body.reward]).to.deep.equal([200, 0]);
    const past = await post(server.url, '/v1/samples', sample('a', 'g1', 3, '3', { step: 0, requestId: 'L3' }));
    expect(past.status).to.equal(422);
    expect(past.body.error.code).to.equal('CORL_ERR_SERVE_GROUP_SIZE');
    expect(server.metrics.sampleGroups.get({ outcome: 'late' })).to.equal(2);
    await server.close();
    // After a restart the journal answers: the same body, 409 for a changed one, 422 past the size.
    server = await startServer(config, tmp.dir);
    expect((await post(server.url, '/v1/samples', late)).body).to.deep.equal(first.body);
    expect((await post(server.url, '/v1/samples', { ...late, completion: text('2') })).status).to.equal(409);
    expect(
      (await post(server.url, '/v1/samples', sample('a', 'g1', 3, '3', { step: 0, requestId: 'L3' }))).status,
    ).to.equal(422);
    expect(server.metrics.sampleGroups.get({ outcome: 'late' })).to.equal(0);
  });

  it("late answers are bounded per agent (samples.maxPending): an agent at its bound lets its oldest go, never another's", async () => {
    server = await startServer(
      ringServeConfig({ samples: { wait: 0.2, maxPending: 2 }, exchange: { wait: 0.1, fallback: 'self' } }),
      tmp.dir,
    );
    // Each group of size 2 gets 1 sample ('4', self label 4), then its late one ('4': reward 1).
    const shortThenLate = async (agent: string, g: string): Promise<Record<string, unknown>> => {
      const e = await post(server!.url, '/v1/samples', sample(agent, g, 2, '4', { step: 0, requestId: `${g}-0` }));
      expect([e.body.groupSize, e.body.source]).to.deep.equal([1, 'self']);
      const l = sample(agent, g, 2, '4', { step: 0, requestId: `${g}-1` });
      const r = await post(server!.url, '/v1/samples', l);
      expect([r.status, r.body.reward], JSON.stringify(r.body)).to.deep.equal([200, 1]);
      return l;
    };
    const [h1, h2, h3] = [
      await shortThenLate('a', 'h1'),
      await shortThenLate('a', 'h2'),
      await shortThenLate('a', 'h3'),
    ];
    // a holds its 2 newest late answers: h2, h3 changed are 409; h1 was let go, so its changed retry is a new late sample (reward 0).
    for (const l of [h2!, h3!])
      expect((await post(server.url, '/v1/samples', { ...l, completion: text('5') })).status).to.equal(409);
    const again = await post(server.url, '/v1/samples', { ...h1!, completion: text('5') });
    expect([again.status, again.body.reward]).to.deep.equal([200, 0]);
    // b is untouched by a's bound: its late answer is stored and guarded.
    const k1 = await shortThenLate('b', 'k1');
    expect((await post(server.url, '/v1/samples', { ...k1, completion: text('5') })).status).to.equal(409);
  });

  it('a late sample after the self fallback is rewarded against its own group; after zero, 0', async () => {
    for (const [fallback, reward, label] of [
      ['self', 1, '4'],
      ['zero', 0, null],
    ] as const) {
      server = await startServer(
        ringServeConfig({ samples: { wait: 0.2 }, exchange: { wait: 0.2, fallback } }),
        fs.mkdtempSync(`${tmp.dir}/`),
      );
      // a alone: 4, 4 of 3, scored short on its own vote (self) or zero.
      const early = await Promise.all(
        ['4', '4'].map((x, i) => post(server!.url, '/v1/samples', sample('a', 'g', 3, x, { step: 0, sample: i }))),
      );
      expect(early.map((r) => r.body.source)).to.deep.equal([fallback, fallback]);
      const late = await post(server.url, '/v1/samples', sample('a', 'g', 3, '4', { step: 0, sample: 2 }));
      expect(late.status, JSON.stringify(late.body)).to.equal(200);
      expect(late.body).to.deep.include({ reward, label, source: fallback });
      await server.close();
      server = undefined;
    }
  });

  it('ties never depend on posting or arrival order, in /v1/groups and /v1/samples alike', async () => {
    // b's answers tie 6/9 (two each); a is rewarded against b's label whatever order b used.
    const labels: string[] = [];
    for (const [i, order] of [
      ['6', '9', '9', '6'],
      ['9', '6', '6', '9'],
      ['9', '9', '6', '6'],
    ].entries()) {
      server = await startServer(ringServeConfig(), tmp.dir + `/${i}`);
      const viaGroups = i % 2 === 0;
      const bPosts = viaGroups
        ? [post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('t', order)] })]
        : order.map((x, k) =>
            post(server!.url, '/v1/samples', sample('b', 't', 4, x, { step: 0, requestId: `b${k}` })),
          );
      const [ra] = await Promise.all([
        post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('t', ['6', '9', '1', '1'])] }),
        ...bPosts,
      ]);
      labels.push(ra.body.groups[0].label);
      // a's own tie 1/… is not a tie; its rewards come back in the order a posted them.
      expect(ra.body.groups[0].rewards).to.deep.equal([1, 0, 0, 0]);
      expect(ra.body.groups[0].keys).to.deep.equal(['6', '9', '1', '1']);
      await server.close();
      server = undefined;
    }
    expect(labels).to.deep.equal(['6', '6', '6']);
  });

  it('a group still short of its declared size after serve.samples.wait is scored with the samples that came', async () => {
    server = await startServer(ringServeConfig({ samples: { wait: 0.2 }, exchange: { wait: 0.1 } }), tmp.dir);
    const [r0, r1] = await Promise.all([
      post(server.url, '/v1/samples', sample('a', 'g', 4, '3', { step: 0, requestId: 'x0' })),
      post(server.url, '/v1/samples', sample('a', 'g', 4, '3', { step: 0, requestId: 'x1' })),
    ]);
    expect(r0.body).to.deep.include({ reward: 1, groupSize: 2, source: 'self' });
    expect(r1.body.reward).to.equal(1);
    expect(server.metrics.sampleGroups.get({ outcome: 'partial' })).to.equal(1);
    const late = await post(server.url, '/v1/samples', sample('a', 'g', 4, '3', { step: 0, requestId: 'x2' }));
    expect(late.status).to.equal(200);
    expect(late.body).to.deep.include({ reward: 1, source: 'self', label: '3' });
    const m = await get(server.url, '/metrics');
    expect(m.body).to.contain('corl_serve_sample_groups_total{outcome="partial"} 1');
    expect(m.body).to.contain('corl_serve_pending_samples 0');
  });

  it('a restart on the same journal: a retry by request id of a scored sample gets its answer again', async () => {
    const config = ringServeConfig({ exchange: { wait: 0.2 } });
    server = await startServer(config, tmp.dir);
    const mine = ['8', '8', '1'].map((x, i) => sample('a', 'r', 3, x, { requestId: `id-${i}` }));
    const theirs = ['1', '1', '8'].map((x, i) => sample('b', 'r', 3, x, { requestId: `jd-${i}` }));
    const before = await Promise.all([...mine, ...theirs].map((s) => post(server!.url, '/v1/samples', s)));
    await server.close();
    server = await startServer(config, tmp.dir);
    const after = await Promise.all([mine[2]!, theirs[0]!].map((s) => post(server!.url, '/v1/samples', s)));
    expect(after[0]!.body).to.deep.equal(before[2]!.body);
    expect(after[1]!.body).to.deep.equal(before[3]!.body);
    expect(before[2]!.body).to.deep.include({ round: 0, reward: 1, label: '1' });
    // The next posts of the group are its next round.
    const next = await Promise.all(
      ['2', '2', '2'].map((x, i) => post(server!.url, '/v1/samples', sample('a', 'r', 3, x, { requestId: `n-${i}` }))),
    );
    expect(next.map((r) => r.body.round)).to.deep.equal([1, 1, 1]);
    expect(fs.existsSync(`${tmp.dir}/journal.jsonl`)).to.equal(true);
  });

  it('refuses bad samples with a coded error naming the field, and a full service with 503', async () => {
    server = await startServer(ringServeConfig({ groupSize: 3, samples: { maxPending: 2 } }), tmp.dir);
    const bad = async (body: unknown): Promise<[number, string, string]> => {
      const r = await post(server!.url, '/v1/samples', body);
      return [r.status, r.body.error.code, r.body.error.where];
    };
    expect(await bad({ agent: 'a', size: 3, completion: 'x' })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'group',
    ]);
    expect(await bad({ agent: 'a', group: 'g', size: 0, completion: 'x' })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'size',
    ]);
    expect(await bad({ agent: 'a', group: 'g', size: 3, sample: 3, completion: 'x' })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'sample',
    ]);
    expect(await bad({ agent: 'a', group: 'g', size: 3 })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'completion',
    ]);
    expect(await bad({ agent: 'a', group: 'g', size: 4, completion: 'x' })).to.deep.equal([
      422,
      'CORL_ERR_SERVE_GROUP_SIZE',
      'size',
    ]);
    expect(await bad({ agent: 'c', group: 'g', size: 3, completion: 'x' })).to.deep.equal([
      422,
      'CORL_ERR_SERVE_UNKNOWN_AGENT',
      'agent',
    ]);
    expect(await bad({ agent: 'a', step: -1, group: 'g', size: 3, completion: 'x' })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'step',
    ]);
    expect(await bad({ agent: 'a', step: 99, group: 'g', size: 3, completion: 'x' })).to.deep.equal([
      422,
      'CORL_ERR_SERVE_STEP_AHEAD',
      'step',
    ]);
    expect(await bad({ agent: 'a', group: 'g', size: 3, requestId: 'r'.repeat(257), completion: 'x' })).to.deep.equal([
      413,
      'CORL_ERR_SERVE_LIMIT',
      'requestId',
    ]);
    expect(
      await bad({ agent: 'a', group: 'g', size: 3, completion: { text: 'x', length: 2, entropies: [0.1, 0.2, 0.3] } }),
    ).to.deep.equal([400, 'CORL_ERR_SERVE_BAD_REQUEST', 'completion.entropies']);
    expect(await bad({ agent: 'a', samples: [{ group: 'g', size: 3, completion: { text: 1 } }] })).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'samples[0].completion.text',
    ]);
    // Two samples wait (the cap); a third is refused with 503 and changes nothing.
    const waiting = [0, 1].map((i) =>
      post(server!.url, '/v1/samples', sample('a', `w${i}`, 3, '1', { requestId: `w${i}` })),
    );
    while ((await get(server.url, '/health')).body.samples.pending < 2) await new Promise((r) => setTimeout(r, 10));
    expect(await bad(sample('a', 'w2', 3, '1'))).to.deep.equal([503, 'CORL_ERR_SERVE_BUSY', 'samples']);
    // The refused sample left no group behind (its wait would fire on nothing).
    expect((await get(server.url, '/health')).body.samples.pending).to.equal(2);
    await server.close();
    const closed = await Promise.all(waiting);
    expect(closed.map((r) => r.body.error.code)).to.deep.equal([
      'CORL_ERR_SERVE_UNAVAILABLE',
      'CORL_ERR_SERVE_UNAVAILABLE',
    ]);
    server = undefined;
  });

  it('with agent tokens, a sample is posted only as the agent whose token it carries', async () => {
    const tokens = { a: 'token-of-agent-a-0123456789', b: 'token-of-agent-b-0123456789' };
    fs.writeFileSync(`${tmp.dir}/tokens.json`, JSON.stringify(tokens), { mode: 0o600 });
    server = await startServer(ringServeConfig({ tokens: 'tokens.json', exchange: { wait: 0.1 } }), tmp.dir);
    const as = (t: string) => ({ authorization: `Bearer ${t}` });
    const forged = await post(server.url, '/v1/samples', sample('b', 'g', 1, '1', { step: 0 }), as(tokens.a));
    expect([forged.status, forged.body.error.code]).to.deep.equal([403, 'CORL_ERR_SERVE_FORBIDDEN']);
    const none = await post(server.url, '/v1/samples', sample('a', 'g', 1, '1', { step: 0 }));
    expect(none.status).to.equal(401);
    const own = await post(server.url, '/v1/samples', sample('a', 'g', 1, '1', { step: 0 }), as(tokens.a));
    expect(own.body).to.deep.include({ agent: 'a', reward: 1, source: 'self' });
  });

  it('one group is one prompt: a group id shared by two prompts (an answer column used as the id) is refused, naming the field (issue 39)', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    const first = post(
      server.url,
      '/v1/samples',
      sample('a', '42', 2, '42', { step: 0, sample: 0, prompt: 'What is 40 + 2?' }),
    );
    const other = await post(
      server.url,
      '/v1/samples',
      sample('a', '42', 2, '42', { step: 0, sample: 1, prompt: 'What is 6 * 7?' }),
    );
    expect(other.status).to.equal(400);
    expect(other.body.error).to.deep.include({ code: 'CORL_ERR_SERVE_BAD_REQUEST', where: 'prompt' });
    // in a batch, the field of the refused sample; the group still forms from the right prompt
    const batch = await post(server.url, '/v1/samples', {
      agent: 'a',
      step: 0,
      samples: [{ group: '42', size: 2, prompt: 'What is 6 * 7?', completion: text('42'), sample: 1 }],
    });
    expect(batch.status).to.equal(400);
    expect(batch.body.error.where).to.equal('samples[0].prompt');
    const same = post(
      server.url,
      '/v1/samples',
      sample('a', '42', 2, '41', { step: 0, sample: 1, prompt: 'What is 40 + 2?' }),
    );
    const peer = post(server.url, '/v1/groups', {
      agent: 'b',
      step: 0,
      groups: [{ id: '42', prompt: 'What is 40 + 2?', completions: [text('42'), text('42')] }],
    });
    const [r0, r1] = await Promise.all([first, same, peer]);
    expect([r0!.status, r1!.status]).to.deep.equal([200, 200]);
    expect([r0!.body.reward, r1!.body.reward]).to.deep.equal([1, 0]);
  });

  it('a refused sample leaves nothing behind: after samples.wait the service still answers', async () => {
    server = await startServer(
      ringServeConfig({ samples: { wait: 2, maxPending: 1 }, exchange: { wait: 0.1 } }),
      tmp.dir,
    );
    const first = post(server.url, '/v1/samples', sample('a', 'x', 2, '1', { requestId: 'x0' }));
    while ((await get(server.url, '/health')).body.samples.pending < 1) await new Promise((r) => setTimeout(r, 5));
    const busy = await post(server.url, '/v1/samples', sample('a', 'y', 2, '1', { requestId: 'y0' }));
    expect(busy.status).to.equal(503);
    const sized = await post(server.url, '/v1/samples', sample('a', 'x', 3, '1', { requestId: 'x1' }));
    expect(sized.status).to.equal(422);
    expect((await first).body).to.deep.include({ groupSize: 1, source: 'self', reward: 1 });
    // Past the refused samples' would-be waits too (they were posted just after the first).
    await new Promise((r) => setTimeout(r, 300));
    const health = await get(server.url, '/health');
    expect([health.status, health.body.samples.pending]).to.deep.equal([200, 0]);
    expect(server.metrics.sampleGroups.get({ outcome: 'partial' })).to.equal(1);
  });

  it('a sample without an id whose client goes away leaves its group: a re-sent copy is not counted twice', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 0.1 } }), tmp.dir);
    const ctrl = new AbortController();
    const gone = fetch(`${server.url}/v1/samples`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sample('a', 'c', 2, '1')),
      signal: ctrl.signal,
    }).catch((e: Error) => e.name);
    while ((await get(server.url, '/health')).body.samples.pending < 1) await new Promise((r) => setTimeout(r, 5));
    ctrl.abort();
    expect(await gone).to.equal('AbortError');
    while ((await get(server.url, '/health')).body.samples.pending > 0) await new Promise((r) => setTimeout(r, 5));
    const [x, y] = await Promise.all([
      post(server.url, '/v1/samples', sample('a', 'c', 2, '1')),
      post(server.url, '/v1/samples', sample('a', 'c', 2, '3')),
    ]);
    expect([x.body.groupSize, y.body.groupSize]).to.deep.equal([2, 2]);
    expect([x.body.round, y.body.round]).to.deep.equal([0, 0]);
  });

  it('parses token counts and per-token statistics: their count is the length unless one is given', () => {
    const req = parseSamplesRequest(
      { agent: 'a', group: 7, size: 2, completion: { text: 'x', entropies: [0.5, 1], meanLogprobs: [-3, -4] } },
      { maxCompletions: 8, maxSamples: 8 },
    );
    expect(req.single).to.equal(true);
    expect(req.samples[0]).to.deep.include({ group: '7', size: 2, prompt: '' });
    expect(req.samples[0]!.completion).to.deep.equal({
      text: 'x',
      length: 2,
      entropies: [0.5, 1],
      meanLogprobs: [-3, -4],
    });
    expect(() =>
      parseSamplesRequest(
        { agent: 'a', group: 'g', size: 2, completion: { text: 'x', meanLogprobs: [1, 'a'] } },
        { maxCompletions: 8, maxSamples: 8 },
      ),
    ).to.throw(/completion\.meanLogprobs\[1\]/);
  });
});

describe('serve/samples: a stepless rollout after a restart of `corl serve` (its tag journaled with the answer)', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  const services: Service[] = [];
  beforeEach(() => {
    tmp = tempDir('corl-samples-restart-');
  });
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop('SIGKILL');
    tmp.cleanup();
  });

  async function serve(): Promise<Service> {
    const config = writeConfig(
      tmp.dir,
      'serve.json',
      ringServeConfig({ samples: { wait: 0.3 }, exchange: { wait: 30 } }),
    );
    const s = await startService(config, path.join(tmp.dir, 'journal.jsonl'));
    services.push(s);
    return s;
  }

  it('a late sample of a rollout scored short, and one past a full rollout, find their round after a kill -9', async () => {
    let s = await serve();
    // Round 0 of q: b's rollout v (3, 3, 2; vote 3) and a's rollout u, 2 of its 3 samples (2, 3):
    // samples.wait runs out, a's short group is rewarded against b's vote 3.
    const [early, full] = await Promise.all([
      Promise.all(
        ['2', '3'].map((x, i) =>
          post(s.url, '/v1/samples', sample('a', 'q', 3, x, { rollout: 'u', requestId: `a${i}` })),
        ),
      ),
      Promise.all(
        ['3', '3', '2'].map((x, i) =>
          post(s.url, '/v1/samples', sample('b', 'q', 3, x, { rollout: 'v', requestId: `b${i}` })),
        ),
      ),
    ]);
    expect(early.map((r) => [r.body.round, r.body.reward, r.body.groupSize, r.body.label])).to.deep.equal([
      [0, 0, 2, '3'],
      [0, 1, 2, '3'],
    ]);
    // a's 2, 3 tie; by text order the label is 2: b's 3, 3, 2 get 0, 0, 1.
    expect(full.map((r) => r.body.reward)).to.deep.equal([0, 0, 1]);
    await s.stop('SIGKILL');
    s = await serve();
    // The third sample of rollout u: rewarded alone in round 0 against b's vote, flagged late (before
    // the fix it opened a group of its own in round 1, waiting for samples that never come).
    const late = await post(s.url, '/v1/samples', sample('a', 'q', 3, '3', { rollout: 'u', requestId: 'a2' }));
    expectLateInRound0(late);
    // One more of u is past its size, and one more of b's full rollout v too: 422, nothing opened.
    for (const [agent, rollout] of [
      ['a', 'u'],
      ['b', 'v'],
    ] as const) {
      const extra = await post(s.url, '/v1/samples', sample(agent, 'q', 3, '3', { rollout, requestId: `${agent}-x` }));
      expect(extra.status, `${agent} ${JSON.stringify(extra.body)}`).to.equal(422);
      expect(extra.body.error.code).to.equal('CORL_ERR_SERVE_GROUP_SIZE');
      expect(extra.body.error.message).to.contain(`(rollout "${rollout}")`);
    }
    expect(await metric(s.url, 'corl_serve_pending_samples')).to.equal(0);
    // And again after a second restart, its retry replays the late answer.
    await s.stop('SIGTERM');
    s = await serve();
    const again = await post(s.url, '/v1/samples', sample('a', 'q', 3, '3', { rollout: 'u', requestId: 'a2' }));
    expect(again.body).to.deep.equal(late.body);
    // A new rollout of q is a new group: it opens round 1 (and waits for b there).
    const next = await post(s.url, '/v1/samples', {
      agent: 'a',
      wait: 0,
      samples: [sample('a', 'q', 1, '3', { rollout: 'u2', requestId: 'n0' })],
    });
    expect(next.body.samples[0]).to.deep.include({ round: 1, source: 'self' });
  });

  it('a journaled rollout tag that is not one is refused at restore, naming the line and the field', async () => {
    const config = ringServeConfig({ samples: { wait: 0.3 }, exchange: { wait: 0 } });
    const server: RewardServer = await startServer(config, tmp.dir);
    const r = await post(server.url, '/v1/samples', sample('a', 'q', 1, '3', { rollout: 'u', requestId: 'a0' }));
    expect(r.body).to.deep.include({ round: 0, source: 'self' });
    await server.close();
    const file = path.join(tmp.dir, 'journal.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const no = lines.findIndex((l) => l.includes('"t":"answer"'));
    const record = JSON.parse(lines[no]!) as { r: { rollout?: unknown }; c?: unknown };
    expect(record.r.rollout, 'the tag is journaled with the answer').to.equal('u');
    for (const forged of [5, '', 'x'.repeat(257)]) {
      delete record.c;
      record.r.rollout = forged;
      lines[no] = encodeLine(record).trimEnd();
      fs.writeFileSync(file, lines.join('\n'));
      const e = await startServer(config, tmp.dir).then(
        (s) => s.close().then(() => undefined),
        (err: unknown) => err as { code?: string; message?: string },
      );
      expect(e?.code, String(forged)).to.equal('CORL_ERR_SERVE_JOURNAL_RECORD');
      expect(e?.message)
        .to.contain(`line ${no + 1}`)
        .and.contain('"r.rollout"');
    }
  });
});
