// TTRL's vote-on-more split through the real service: a POST /v1/groups group with `train` = N
// votes over all its M completions and is rewarded on the first N as posted. Worked by hand.
import { expect } from 'chai';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { boxed, post, ringServeConfig, startServer } from '../../fixtures/serve';

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

/** One POST /v1/samples sample of a boxed answer. */
function sample(group: string, size: number, answer: string, i: number, train?: boolean): Record<string, unknown> {
  return {
    group,
    size,
    sample: i,
    requestId: `${group}-${i}`,
    prompt: `problem ${group}`,
    completion: `so the answer is \\boxed{${answer}}`,
    reference: '2',
    ...(train === undefined ? {} : { train }),
  };
}

describe('serve: vote-only samples on POST /v1/samples and POST /get_reward', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-vote-only-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it('/v1/samples: the vote is over all M, the N trained samples get rewards, the others null', async () => {
    server = await startServer(SOLO, tmp.dir);
    // M = 5: trained 3 3 2, vote-only 2 2. All five vote "2" (the first three alone would vote "3"):
    // the trained get 0 0 1; reference 2, so the label is right and each trained reward is the one
    // ground truth gives (reward/accuracy 1); the vote-only get no reward and no reward/accuracy.
    const answers = ['3', '3', '2', '2', '2'];
    const body = (flip = false): unknown => ({
      agent: 'solo',
      step: 0,
      samples: answers.map((a, i) => sample('g1', 5, a, i, i < 3 ? undefined : flip)),
    });
    const r = await post(server.url, '/v1/samples', body());
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const got = r.body.samples as { reward: number | null; train?: boolean; label: string; metrics: any }[];
    expect(got.map((s) => s.reward)).to.deep.equal([0, 0, 1, null, null]);
    expect(got.map((s) => s.train)).to.deep.equal([undefined, undefined, undefined, false, false]);
    expect(got.map((s) => s.label)).to.deep.equal(['2', '2', '2', '2', '2']);
    expect(got.map((s) => s.metrics['label/accuracy'])).to.deep.equal([1, 1, 1, 1, 1]);
    expect(got.map((s) => s.metrics['reward/accuracy'])).to.deep.equal([1, 1, 1, undefined, undefined]);
    // A retry is the same; the same request ids posted as trained are another sample: 409.
    const again = await post(server.url, '/v1/samples', body());
    expect(again.body).to.deep.equal(r.body);
    const flipped = await post(server.url, '/v1/samples', body(true));
    expect(flipped.status).to.equal(409);
    expect(flipped.body.error.code).to.equal('CORL_ERR_SERVE_CONFLICT');
    const bad = await post(server.url, '/v1/samples', {
      agent: 'solo',
      step: 1,
      ...sample('g2', 2, '1', 0, 'no' as never),
    });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.where).to.equal('train');
  });

  it('/v1/samples in a ring: each agent is rewarded against its peer vote over all M', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    // M = 5, N = 2. b: trained 1 1, vote-only 7 7 7; its five vote "7" (its two alone "1"). a:
    // trained 7 1, vote-only 1 1 1; its five vote "1". a against "7": 1 0; b against "1": 1 1.
    const of = (agent: string, trained: string[], votes: string[]): Promise<any> =>
      post(server!.url, '/v1/samples', {
        agent,
        step: 0,
        samples: [...trained, ...votes].map((a, i) => ({
          ...sample('g1', 5, a, i, i < trained.length ? true : false),
          requestId: `${agent}-${i}`,
        })),
      });
    const [a, b] = await Promise.all([of('a', ['7', '1'], ['1', '1', '1']), of('b', ['1', '1'], ['7', '7', '7'])]);
    expect(a.body.samples.map((s: any) => s.reward)).to.deep.equal([1, 0, null, null, null]);
    expect(a.body.samples[0].label).to.equal('7');
    expect(b.body.samples.map((s: any) => s.reward)).to.deep.equal([1, 1, null, null, null]);
    expect(b.body.samples[0].label).to.equal('1');
  });

  it('/get_reward: train per query, the vote over the whole group, null for the vote-only', async () => {
    server = await startServer({ ...SOLO, serve: { port: 0, getReward: { groupSize: 5 } } }, tmp.dir);
    const answers = ['3', '3', '2', '2', '2'];
    const body = {
      query: answers.map((a) => `problem p so the answer is \\boxed{${a}}`),
      prompts: answers.map(() => 'problem p'),
      labels: answers.map(() => '2'),
      train: [true, true, true, false, false],
    };
    const r = await post(server.url, '/get_reward', body);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    // The barrier sorts a group's members by text; every answer stays with its own query.
    expect(r.body.rewards).to.deep.equal([0, 0, 1, null, null]);
    expect(r.body.scores).to.deep.equal([0, 0, 1, null, null]);
    expect(r.body.extra_logs['label/accuracy']).to.deep.equal([1, 1, 1, 1, 1]);
    for (const [train, where] of [
      [[true], 'train'],
      [[true, true, true, 'no', false], 'train[3]'],
    ] as const) {
      const e = await post(server.url, '/get_reward', { ...body, train });
      expect(e.status).to.be.oneOf([400, 422]);
      expect(e.body.error.where).to.equal(where);
    }
  });
});
