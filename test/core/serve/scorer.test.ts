// Label-free diagnostics (issue 38 item 4): where the trainer's data carries a reference and the reward
// is label-free, the service grades each group's pseudo-label and rewards against it (TTRL's
// label/accuracy and reward/accuracy) through the grading equivalence; the reward never sees it
// (test/plugins/rewards/python/labels.test.ts holds the label-isolation checks of these routes).
import { expect } from 'chai';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { boxed, get, post, ringServeConfig, startServer } from '../../fixtures/serve';

const text = (a: string): string => `so the answer is \\boxed{${a}}`;

describe('serve/scorer: label-free diagnostics against the references trainers send', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-grades-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  // g1 (reference 2): a 5,2,3,5 (own label 5), b 3,3,2 (label 3). a is rewarded against 3: rewards
  // 0,0,1,0, truth 0,1,0,0, so rewards right 1,0,0,1 (in posted order; scored in text order 2,3,5,5);
  // label 3 is wrong. b against 5: rewards 0,0,0, truth 0,0,1: right 1,1,0; label wrong.
  // g2 (reference 7): a 7,7,1 and b 7,7,1: each label 7 right, every reward right.
  // g3 has no reference: graded nothing.
  const groups = {
    a: [
      { ...boxed('g1', ['5', '2', '3', '5']), reference: '2' },
      { ...boxed('g2', ['7', '7', '1']), reference: '7' },
      boxed('g3', ['4', '4']),
    ],
    b: [
      { ...boxed('g1', ['3', '3', '2']), reference: '2' },
      { ...boxed('g2', ['7', '7', '1']), reference: '7' },
      boxed('g3', ['4', '4']),
    ],
  };

  it('POST /v1/groups: each group carries labelRight and rewardRight, the request label/accuracy and reward/accuracy', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    const [ra, rb] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: groups.a }),
      post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: groups.b }),
    ]);
    expect(ra.status, JSON.stringify(ra.body)).to.equal(200);
    const [a1, a2, a3] = ra.body.groups;
    expect(a1).to.deep.include({ rewards: [0, 0, 1, 0], label: '3', labelRight: 0, rewardRight: [1, 0, 0, 1] });
    expect(a2).to.deep.include({ rewards: [1, 1, 0], label: '7', labelRight: 1, rewardRight: [1, 1, 1] });
    expect(a3).to.deep.include({ rewards: [1, 1], label: '4' });
    expect(a3).to.not.have.any.keys('labelRight', 'rewardRight');
    expect(ra.body.metrics['label/accuracy']).to.equal(0.5);
    expect(ra.body.metrics['reward/accuracy']).to.be.closeTo(5 / 7, 1e-12);
    expect(rb.body.groups[0]).to.deep.include({ label: '5', labelRight: 0, rewardRight: [1, 1, 0] });
    expect(rb.body.metrics['label/accuracy']).to.equal(0.5);
    expect(rb.body.metrics['reward/accuracy']).to.be.closeTo(5 / 6, 1e-12);

    // The same figures as Prometheus counters per agent (accuracy = right / graded).
    const m = server.metrics;
    const counts = (agent: string) =>
      [m.labelsGraded, m.labelsRight, m.rewardsGraded, m.rewardsRight].map((c) => c.get({ agent }));
    expect(counts('a')).to.deep.equal([2, 1, 7, 5]);
    expect(counts('b')).to.deep.equal([2, 1, 6, 5]);
    const text = (await get(server.url, '/metrics')).body as string;
    expect(text).to.contain('corl_serve_labels_right_total{agent="a"} 1\n');
    expect(text).to.contain('corl_serve_rewards_graded_total{agent="b"} 6\n');

    // A restarted service replays the journaled answers, diagnostics included.
    await server.close();
    server = await startServer(ringServeConfig(), tmp.dir);
    const again = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: groups.a });
    expect(again.body).to.deep.equal(ra.body);
  });

  it('POST /v1/samples: each sample reports its own group figures', async () => {
    server = await startServer(ringServeConfig(), tmp.dir);
    const answers = ['5', '2', '3', '5'];
    const pa = answers.map((x, i) =>
      post(server!.url, '/v1/samples', {
        agent: 'a',
        group: 'g1',
        size: 4,
        step: 0,
        sample: i,
        prompt: 'problem g1',
        completion: text(x),
        reference: '2',
      }),
    );
    const pb = post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [groups.b[0]] });
    const [ra] = await Promise.all([Promise.all(pa), pb]);
    expect(ra.map((r) => r.body.reward)).to.deep.equal([0, 0, 1, 0]);
    expect(ra.map((r) => r.body.metrics['label/accuracy'])).to.deep.equal([0, 0, 0, 0]);
    expect(ra.map((r) => r.body.metrics['reward/accuracy'])).to.deep.equal([1, 0, 0, 1]);
  });

  it("POST /get_reward: OpenRLHF's labels column is graded, per sample in extra_logs", async () => {
    server = await startServer(
      { ...ringServeConfig({ getReward: { groupSize: 4 } }, ['a']), topology: 'corl:self' },
      tmp.dir,
    );
    // Self-vote over 2,2,3,4 is 2; the reference 3: label wrong, rewards 1,1,0,0 against truth 0,0,1,0.
    const r = await post(server.url, '/get_reward', {
      query: ['2', '2', '3', '4'].map((x) => `problem g9 ${text(x)}`),
      prompts: ['problem g9', 'problem g9', 'problem g9', 'problem g9'],
      labels: ['3', '3', '3', '3'],
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.rewards).to.deep.equal([1, 1, 0, 0]);
    expect(r.body.extra_logs['label/accuracy']).to.deep.equal([0, 0, 0, 0]);
    expect(r.body.extra_logs['reward/accuracy']).to.deep.equal([0, 0, 0, 1]);
  });

  it('a reward that reads ground truth reports no diagnostics: its rewards are the truth', async () => {
    server = await startServer({ ...ringServeConfig(), reward: 'corl:ground-truth', labelFree: false }, tmp.dir);
    const r = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [groups.a[0]] });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.groups[0].rewards).to.deep.equal([0, 1, 0, 0]);
    expect(r.body.groups[0]).to.not.have.any.keys('labelRight', 'rewardRight');
    expect(r.body.metrics).to.not.have.any.keys('label/accuracy');
  });
});
