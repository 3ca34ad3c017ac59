// Which round a group without a step joins (docs/guide/serve.md "Rounds without a step"), through
// the real service: agents that skip a problem, over-sample it, retry it, and a restart between.
// Ring of two: a is rewarded against b's plurality and b against a's. Every number is derived by
// hand from the answers posted.
import { expect } from 'chai';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { get, post, ringServeConfig, startServer, type Answer } from '../../fixtures/serve';

const text = (a: string): string => `so the answer is \\boxed{${a}}`;

/** One request holding a whole group of `agent` for problem `id` (rollout tag `tag`), no step. */
function group(
  url: string,
  agent: string,
  tag: string,
  answers: string[],
  extra: Record<string, unknown> = {},
): Promise<Answer> {
  return post(url, '/v1/samples', {
    agent,
    ...extra,
    samples: answers.map((a, i) => ({
      group: 'p',
      size: answers.length,
      rollout: tag,
      requestId: `${agent}-${tag}-${i}`,
      prompt: 'problem p',
      completion: text(a),
    })),
  });
}

/** Round, source, label and each sample's reward of a group's answer. */
function summary(r: Answer): { round: number; source: string; label: string; rewards: number[] } {
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  const s = r.body.samples as { round: number; source: string; label: string; reward: number }[];
  return { round: s[0]!.round, source: s[0]!.source, label: s[0]!.label, rewards: s.map((x) => x.reward) };
}

/** What {@link summary} gives for an answered group: its round, the source of its label, the label and each reward. */
const answered = (round: number, source: string, label: string, rewards: number[]): ReturnType<typeof summary> => ({
  round,
  source,
  label,
  rewards,
});

/** Until the service holds `n` (round, group) slots: a group that opened a round has stored its keys. */
async function slotsReach(url: string, n: number): Promise<void> {
  for (;;) {
    const m = /^corl_serve_get_reward_slots (\d+)$/m.exec((await get(url, '/metrics')).body as string);
    if (Number(m?.[1]) >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Until the journal holds `n` records (keys stored before a shutdown survive it). */
async function written(url: string, n: number): Promise<void> {
  while (((await get(url, '/health')).body.journal.written as number) < n) await new Promise((r) => setTimeout(r, 10));
}

describe('serve/exchange: rounds without a step, matched by problem through the service', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-rounds-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  for (const first of ['a', 'b'] as const)
    it(`a skips p once (dynamic filtering), b samples it twice: the second time they meet, ${first} posting first`, async () => {
      server = await startServer(ringServeConfig({ exchange: { wait: 30, fallback: 'self' } }), tmp.dir);
      const url = server.url;
      // Epoch 1: only b samples p (1, 1, 2): its own vote, 1; a holds p nowhere: unseen.
      const e1 = await group(url, 'b', 'b1', ['1', '1', '2'], { wait: 0.2 });
      expect(summary(e1)).to.deep.equal(answered(0, 'self', '1', [1, 1, 0]));
      expect(e1.body.samples[0].metrics['exchange/peer_unseen']).to.equal(1);
      // Epoch 2: a 3, 2, 2 (its vote 2); b 3, 3, 2 (its vote 3). The first opens round 1 and waits;
      // the second joins it, never b's answered round 0 (a's group would take b's epoch-1 vote, 1).
      const answers = { a: ['3', '2', '2'], b: ['3', '3', '2'] };
      const second = first === 'a' ? 'b' : 'a';
      const one = group(url, first, `${first}2`, answers[first]);
      await slotsReach(url, 2);
      const [r1, r2] = await Promise.all([one, group(url, second, `${second}2`, answers[second])]);
      const out = first === 'a' ? { a: r1, b: r2 } : { a: r2, b: r1 };
      expect(summary(out.a)).to.deep.equal(answered(1, 'supervisors', '3', [1, 0, 0]));
      expect(summary(out.b)).to.deep.equal(answered(1, 'supervisors', '2', [0, 0, 1]));
      expect(server.metrics.unseen.get()).to.equal(1);
    });

  it('a round an agent left unanswered and moved past is not joined: its peer meets the group that waits now', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 30, fallback: 'error' } }), tmp.dir);
    const url = server.url;
    // a's first group of p (1, 1, 1) gives up after 0.2 s: 504, its keys stay in round 0, unanswered.
    const gaveUp = await group(url, 'a', 'r1', ['1', '1', '1'], { wait: 0.2 });
    expect(gaveUp.status).to.equal(504);
    expect(gaveUp.body.error.code).to.equal('CORL_ERR_SERVE_PEER_TIMEOUT');
    // a moves on: a new group of p (2, 2, 2) opens round 1 and waits there.
    const current = group(url, 'a', 'r2', ['2', '2', '2']);
    await slotsReach(url, 2);
    // b (2, 2, 3) joins round 1, not stale round 0 (which would give it a's abandoned vote, 1: 0, 0, 0).
    const rb = await group(url, 'b', 's1', ['2', '2', '3']);
    expect(summary(rb)).to.deep.equal(answered(1, 'supervisors', '2', [1, 1, 0]));
    expect(summary(await current)).to.deep.equal(answered(1, 'supervisors', '2', [1, 1, 1]));
  });

  it("over-sampling: b's groups meet a's waiting ones oldest first; a leftover answered round is never taken later", async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 30, fallback: 'self' } }), tmp.dir);
    const url = server.url;
    // a samples p twice at once: u0 (1, 1, 1) opens round 0, u1 (2, 2, 2) round 1; both wait.
    const u0 = group(url, 'a', 'u0', ['1', '1', '1']);
    await slotsReach(url, 1);
    const u1 = group(url, 'a', 'u1', ['2', '2', '2']);
    await slotsReach(url, 2);
    // b's first group (1, 2, 2; vote 2) meets u0, its second (2, 2, 3; vote 2) meets u1.
    expect(summary(await group(url, 'b', 'g1', ['1', '2', '2']))).to.deep.equal(
      answered(0, 'supervisors', '1', [1, 0, 0]),
    );
    expect(summary(await u0)).to.deep.equal(answered(0, 'supervisors', '2', [0, 0, 0]));
    expect(summary(await group(url, 'b', 'g2', ['2', '2', '3']))).to.deep.equal(
      answered(1, 'supervisors', '2', [1, 1, 0]),
    );
    expect(summary(await u1)).to.deep.equal(answered(1, 'supervisors', '2', [1, 1, 1]));
    // a's third (3, 3, 3) is one b never matches: round 2, its own vote; a plain fallback (b holds p).
    const u2 = await group(url, 'a', 'u2', ['3', '3', '3'], { wait: 0.2 });
    expect(summary(u2)).to.deep.equal(answered(2, 'self', '3', [1, 1, 1]));
    expect(u2.body.samples[0].metrics['exchange/peer_unseen']).to.equal(0);
    // Next epoch b posts p first (3, 3, 1): it opens round 3 rather than taking u2's leftover vote
    // (3: 1, 1, 0); a's group (1, 1, 3) then joins it.
    const g3 = group(url, 'b', 'g3', ['3', '3', '1']);
    await slotsReach(url, 4);
    expect(summary(await group(url, 'a', 'u3', ['1', '1', '3']))).to.deep.equal(
      answered(3, 'supervisors', '3', [0, 0, 1]),
    );
    expect(summary(await g3)).to.deep.equal(answered(3, 'supervisors', '1', [0, 0, 1]));
    expect(server.metrics.unseen.get()).to.equal(0);
  });

  it('a retry resumes its own round: a peer that came between the 504 and the retry rewards it', async () => {
    server = await startServer(ringServeConfig({ exchange: { wait: 30, fallback: 'error' } }), tmp.dir);
    const url = server.url;
    expect((await group(url, 'a', 'r', ['4', '4', '5'], { wait: 0.2 })).status).to.equal(504);
    // b (5, 5, 4) joins round 0, where a's group waits for its retry, and is answered at once by a's vote 4.
    expect(summary(await group(url, 'b', 's', ['5', '5', '4']))).to.deep.equal(
      answered(0, 'supervisors', '4', [0, 0, 1]),
    );
    // a's retry (same request ids, same completions) resumes round 0 and gets b's vote, 5.
    expect(summary(await group(url, 'a', 'r', ['4', '4', '5']))).to.deep.equal(
      answered(0, 'supervisors', '5', [0, 0, 1]),
    );
    expect(server.metrics.sampleGroups.get({ outcome: 'complete' })).to.equal(3);
  });

  it('a restart in the middle: the group that waited is met by a peer that comes first after it, then resumed', async () => {
    const config = ringServeConfig({ exchange: { wait: 30, fallback: 'self' } });
    server = await startServer(config, tmp.dir);
    // a's group (6, 6, 7) waits in round 0; its keys are journaled; the service stops: 503.
    const cut = group(server.url, 'a', 'r', ['6', '6', '7']);
    await written(server.url, 1);
    await server.close();
    server = undefined;
    expect((await cut).status).to.equal(503);
    server = await startServer(config, tmp.dir);
    const url = server.url;
    // b (7, 7, 6) comes first: a's newest unanswered round of p waits for its retry, so b joins round 0.
    expect(summary(await group(url, 'b', 's', ['7', '7', '6']))).to.deep.equal(
      answered(0, 'supervisors', '6', [0, 0, 1]),
    );
    // a's retry resumes round 0, where b's keys reward it (b's vote 7).
    expect(summary(await group(url, 'a', 'r', ['6', '6', '7']))).to.deep.equal(
      answered(0, 'supervisors', '7', [0, 0, 1]),
    );
  });
});
