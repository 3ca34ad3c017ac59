// TTRL's vote-on-more split through the real service: a POST /v1/groups group with `train` = N
// votes over all its M completions and is rewarded on the first N as posted. Worked by hand.
import { expect } from 'chai';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { boxed, post, startServer } from '../../fixtures/serve';

const SOLO = { agents: [{ name: 'solo' }], topology: 'corl:self', reward: 'corl:vote', serve: { port: 0 } };

describe('serve: POST /v1/groups with train (vote over M, reward N)', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-vote-on-more-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it('labels by all M completions and rewards the first N as posted', async () => {
    server = await startServer(SOLO, tmp.dir);
    // M = 5 answers 3, 3, 2, 2, 2: the vote over all five is "2", over the first three "3".
    const group = { ...boxed('g1', ['3', '3', '2', '2', '2']), train: 3 };
    const r = await post(server.url, '/v1/groups', { agent: 'solo', step: 0, groups: [group] });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const [g] = r.body.groups;
    expect(g.label).to.equal('2');
    expect(g.rewards).to.deep.equal([0, 0, 1]);
    expect(g.voted).to.equal(5);
    expect(g.keys).to.deep.equal(['3', '3', '2', '2', '2']);
    // The reply's metrics are over the three rewarded completions: mean 1/3.
    expect(r.body.metrics['reward/mean']).to.be.closeTo(1 / 3, 1e-12);
    // Without train, the same first three vote by themselves: label "3".
    const alone = await post(server.url, '/v1/groups', {
      agent: 'solo',
      step: 0,
      groups: [boxed('g2', ['3', '3', '2'])],
    });
    expect(alone.body.groups[0].label).to.equal('3');
    expect(alone.body.groups[0].rewards).to.deep.equal([1, 1, 0]);
    expect(alone.body.groups[0]).to.not.have.property('voted');
  });

  it('a retry with an Idempotency-Key gets the same trained answer; another train is a conflict', async () => {
    server = await startServer(SOLO, tmp.dir);
    const body = (train: number): unknown => ({
      agent: 'solo',
      step: 0,
      groups: [{ ...boxed('g1', ['4', '1', '1', '4', '4']), train }],
    });
    const first = await post(server.url, '/v1/groups', body(2), { 'idempotency-key': 'k1' });
    expect(first.body.groups[0].rewards).to.deep.equal([1, 0]);
    const again = await post(server.url, '/v1/groups', body(2), { 'idempotency-key': 'k1' });
    expect(again.body).to.deep.equal(first.body);
    const other = await post(server.url, '/v1/groups', body(4), { 'idempotency-key': 'k1' });
    expect(other.status).to.equal(409);
  });

  for (const [train, says] of [
    [6, 'an integer from 2 to 5'],
    [1, 'an integer from 2 to 5'],
    [2.5, 'an integer from 2 to 5'],
    ['3', 'an integer from 2 to 5'],
  ] as const) {
    it(`refuses train ${JSON.stringify(train)} for 5 completions with 400 naming the field`, async () => {
      server = await startServer(SOLO, tmp.dir);
      const r = await post(server.url, '/v1/groups', {
        agent: 'solo',
        step: 0,
        groups: [{ ...boxed('g1', ['1', '1', '2', '2', '2']), train }],
      });
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('CORL_ERR_SERVE_BAD_REQUEST');
      expect(r.body.error.where).to.equal('groups[0].train');
      expect(r.body.error.message).to.contain(says);
    });
  }
});
