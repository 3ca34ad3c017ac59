import { expect } from 'chai';
import type { Equivalence } from '../../../../core/contracts/equivalence';
import type { RewardContext } from '../../../../core/contracts/reward-source';
import type { WorkOptions } from '../../../../core/contracts/work';
import { prepare, type CallOptions } from '../../../../plugins/rewards/python/calls';
import { voteReward } from '../../../../plugins/rewards/vote';

/** Keys are numbers; `equal` compares their values and records the lane of every call. */
function counting(): Equivalence & { lanes: (string | undefined)[] } {
  const lanes: (string | undefined)[] = [];
  return {
    lanes,
    key: (a: string) => a.trim() || null,
    equal: async (a: string, b: string, work?: WorkOptions) => {
      lanes.push(work?.lane);
      return Number(a) === Number(b);
    },
  };
}

function ctx(
  equivalence: Equivalence,
  own: (string | null)[],
  supervisors: { agent: number; keys: (string | null)[] }[],
): RewardContext {
  return {
    problem: { id: 'p', prompt: 'q' },
    prompt: 'q',
    agent: 0,
    agents: 3,
    step: 0,
    completions: own.map((key) => ({ text: '', answer: key, key, length: 1, finishReason: 'stop' as const })),
    own: { agent: 0, keys: own },
    supervisors,
    equivalence,
  };
}

const calls = (labelRule: CallOptions['labelRule']): CallOptions => ({
  signature: 'trl',
  groundTruth: false,
  referenceColumn: 'answer',
  batch: 'group',
  labelRule,
  labelThreshold: 0,
});

describe('plugins/rewards/python/calls (corl:python hands its function corl:vote’s vote)', () => {
  const own = ['3', '0.5', '5', null];
  const peers = [
    { agent: 1, keys: ['.5', '5', '0.50', '2'] },
    { agent: 2, keys: ['5', '5', '4', null] },
  ];
  for (const rule of ['pool', 'teacher', 'majority'] as const) {
    it(`${rule}: the label, own label and matches of corl:vote, with the same equal calls, work passed on`, async () => {
      const work: WorkOptions = { lane: 'agent-7' };
      const eqP = counting();
      const p = await prepare(ctx(eqP, own, peers), calls(rule), work);
      const eqV = counting();
      const source = await voteReward.create({ threshold: 0, rule }, { seed: 0, name: 'corl:vote' } as never);
      const v = await source.score(ctx(eqV, own, peers), work);
      expect(p.label).to.equal(v.label);
      expect(p.ownLabel).to.equal(v.ownLabel);
      expect(p.matches.map(Number)).to.deep.equal(v.rewards);
      expect(eqP.lanes).to.deep.equal(eqV.lanes);
      expect(eqP.lanes.length).to.be.greaterThan(0);
      expect(eqP.lanes.every((l) => l === 'agent-7')).to.equal(true);
    });
  }

  it('pool by hand: "5" has three votes, ".5" and "0.50" (one answer) two', async () => {
    // pool over peers: .5, 5, 0.50, 2, 5, 5, 4 → "5" ×3 and ".5"/"0.50" ×2: label "5"
    const p = await prepare(ctx(counting(), own, peers), calls('pool'));
    expect(p.label).to.equal('5');
    expect(p.matches).to.deep.equal([false, false, true, false]);
  });

  it('self-supervision: the own label is the supervisors’ label, voted once', async () => {
    const eq = counting();
    const p = await prepare(ctx(eq, own, [{ agent: 0, keys: own }]), calls('pool'));
    expect(p.ownLabel).to.equal(p.label);
    const eqTwice = counting();
    await prepare(ctx(eqTwice, own, [{ agent: 1, keys: own }]), calls('pool'));
    // the same keys under a peer's name are voted twice (supervisors', then own)
    expect(eq.lanes.length).to.be.lessThan(eqTwice.lanes.length);
  });
});
