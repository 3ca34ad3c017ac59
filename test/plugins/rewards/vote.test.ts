import { expect } from 'chai';
import type { RewardContext } from '../../../core/contracts/reward-source';
import { groundTruthReward } from '../../../plugins/rewards/ground-truth';
import { voteReward } from '../../../plugins/rewards/vote';
import { mathEquivalence } from '../../../plugins/answers/math';

const equivalence = mathEquivalence.create({ tolerance: 1e-4 }, {} as any) as any;

function ctx(
  own: (string | null)[],
  supervisors: { agent: number; keys: (string | null)[] }[],
  agent = 0,
  reference?: string,
): RewardContext {
  return {
    problem: { id: 'p', prompt: 'q' },
    prompt: 'q',
    agent,
    agents: 3,
    step: 0,
    completions: own.map((key) => ({ text: '', answer: key, key, length: 1, finishReason: 'stop' as const })),
    own: { agent, keys: own },
    supervisors,
    equivalence,
    ...(reference !== undefined ? { reference: { answer: reference } } : {}),
  };
}

const vote = (options = {}) => voteReward.create({ threshold: 0, rule: 'pool', ...options } as any, {} as any) as any;

describe('plugins/rewards/vote (corl:vote)', () => {
  it("ring: rewards agreement with the peer's plurality, not one's own", async () => {
    const r = await vote().score(ctx(['3', '3', '5', null], [{ agent: 1, keys: ['5', '5', '3', '2'] }]));
    expect(r.label).to.equal('5');
    expect(r.ownLabel).to.equal('3');
    expect(r.rewards).to.deep.equal([0, 0, 1, 0]);
    expect(r.metrics['vote/majority_ratio']).to.equal(0.5);
    expect(r.metrics['vote/own_labeled']).to.equal(1);
    expect(r.metrics['vote/both_labeled']).to.equal(1);
    const none = await vote().score(ctx([null, null], [{ agent: 1, keys: ['5'] }]));
    expect(none.metrics).to.include({ 'vote/own_labeled': 0, 'vote/both_labeled': 0 });
  });
  it("self (TTRL): rewards agreement with one's own plurality", async () => {
    const r = await vote().score(ctx(['3', '3', '5', null], [{ agent: 0, keys: ['3', '3', '5', null] }]));
    expect(r.label).to.equal('3');
    expect(r.rewards).to.deep.equal([1, 1, 0, 0]);
  });
  it('equivalent answers vote together and are rewarded together', async () => {
    const r = await vote().score(ctx(['0.5', '\\frac{1}{2}', '2'], [{ agent: 1, keys: ['2', '\\frac{1}{2}', '0.5'] }]));
    expect(r.label).to.equal('\\frac{1}{2}');
    expect(r.rewards).to.deep.equal([1, 1, 0]);
  });
  it('no label (no answers, or under the threshold) gives every completion 0', async () => {
    expect((await vote().score(ctx(['1', '2'], [{ agent: 1, keys: [null, null] }]))).rewards).to.deep.equal([0, 0]);
    const r = await vote({ threshold: 0.75 }).score(ctx(['1', '2'], [{ agent: 1, keys: ['1', '1', '2', '3'] }]));
    expect(r.label).to.equal(null);
    expect(r.rewards).to.deep.equal([0, 0]);
  });
  it('pool vs teacher with two supervisors', async () => {
    const sup = [
      { agent: 1, keys: ['7', '7', '8'] },
      { agent: 2, keys: ['8', '8', '8'] },
    ];
    expect((await vote({ rule: 'pool' }).score(ctx(['7'], sup))).label).to.equal('8');
    expect((await vote({ rule: 'teacher' }).score(ctx(['7'], sup))).label).to.equal('7');
  });
  it("majority: a label that a strict majority of supervisors' own labels share", async () => {
    const sup = (...groups: (string | null)[][]) => groups.map((keys, i) => ({ agent: i + 1, keys }));
    // labels 5, 5, 7: two of three agree
    let r = await vote({ rule: 'majority' }).score(
      ctx(['5', '7', '5'], sup(['5', '5', '1'], ['5', '2', '5'], ['7', '7', '7'])),
    );
    expect(r.label).to.equal('5');
    expect(r.rewards).to.deep.equal([1, 0, 1]);
    expect(r.metrics['vote/majority_ratio']).to.be.closeTo(2 / 3, 1e-12);
    // labels 5, 7: a tie is no label, so every reward is 0
    r = await vote({ rule: 'majority' }).score(ctx(['5', '7'], sup(['5', '5'], ['7', '7'])));
    expect(r.label).to.equal(null);
    expect(r.rewards).to.deep.equal([0, 0]);
    // labels 5, 5, 7, 7: two against two, no label; pool would pick a winner
    const four = sup(['5', '5'], ['5'], ['7', '7', '7'], ['7']);
    expect((await vote({ rule: 'majority' }).score(ctx(['5'], four))).label).to.equal(null);
    expect((await vote({ rule: 'pool' }).score(ctx(['5'], four))).label).to.equal('7');
    // an unlabelled supervisor still counts in the denominator: 5, none, 7 has no strict majority... 5, 5, none has
    expect((await vote({ rule: 'majority' }).score(ctx(['5'], sup(['5'], [null], ['7'])))).label).to.equal(null);
    expect((await vote({ rule: 'majority' }).score(ctx(['5'], sup(['5'], ['5'], [null])))).label).to.equal('5');
    // labels are compared by equivalence
    expect(
      (await vote({ rule: 'majority' }).score(ctx(['0.5'], sup(['0.5'], ['\\frac{1}{2}'], ['3'])))).label,
    ).to.equal('0.5');
  });
  it('self + peers and union of peers pool differently', async () => {
    const own = ['9', '9', '9', '9'];
    const peers = [
      { agent: 1, keys: ['4', '4', '9'] },
      { agent: 2, keys: ['4', '1'] },
    ];
    expect((await vote({ rule: 'pool' }).score(ctx(own, peers))).label).to.equal('4');
    expect((await vote({ rule: 'pool' }).score(ctx(own, [{ agent: 0, keys: own }, ...peers]))).label).to.equal('9');
  });
  it('corl:ground-truth rewards equivalence with the reference and requires one', async () => {
    const gt = groundTruthReward.create({ correct: 1, wrong: 0 }, {} as any) as any;
    expect((await gt.score(ctx(['0.5', '1', null], [], 0, '\\frac{1}{2}'))).rewards).to.deep.equal([1, 0, 0]);
    try {
      await gt.score(ctx(['1'], []));
      expect.fail();
    } catch (e) {
      expect((e as Error).message).to.contain('CORL_ERR_TASK_DATA');
    }
    expect(groundTruthReward.manifest.readsGroundTruth).to.equal(true);
    expect(voteReward.manifest.readsGroundTruth).to.equal(false);
  });
});
