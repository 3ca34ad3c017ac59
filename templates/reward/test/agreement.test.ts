import { expect } from 'chai';
import { createPlugin, rewardContext, rewardContract } from 'corl/testing';
import { exampleReward, register } from '../src';

// The contract every reward source keeps (manifest, options, null answers, empty groups,
// determinism, no ground truth), run against this plugin.
rewardContract(exampleReward, { register, optionSets: [{ scale: 2, minShare: 0.5 }] });

describe('example:reward', () => {
  it('rewards the share of supervisor answers that agree (hand-computed)', async () => {
    const reward = await createPlugin(exampleReward, {});
    const r = await reward.score(rewardContext({ keys: ['4', '5', null], supervisors: [['4', '4', '5', null]] }));
    expect(r.rewards).to.deep.equal([2 / 3, 1 / 3, 0]); // 3 supervisor answers: two 4s, one 5
    expect(r.label).to.equal('4');
    expect(r.metrics!['agreement/mean_reward']).to.be.closeTo(1 / 3, 1e-12);
  });

  it('pools several supervisors and applies scale and minShare', async () => {
    const reward = await createPlugin(exampleReward, { scale: 2, minShare: 0.5 });
    const r = await reward.score(rewardContext({ keys: ['7', '8'], supervisors: [['7', '8'], ['7', '7']] }));
    expect(r.rewards).to.deep.equal([2 * 0.75, 0]); // 8 agrees with 1 of 4 answers: under minShare
  });

  it('gives 0 when the supervisors gave no answer', async () => {
    const reward = await createPlugin(exampleReward, {});
    const r = await reward.score(rewardContext({ keys: ['4', '4'], supervisors: [[null, null]] }));
    expect(r.rewards).to.deep.equal([0, 0]);
    expect(r.label).to.equal(null);
  });

  it('refuses bad options with a coded error', async () => {
    try {
      await createPlugin(exampleReward, { minShare: 2 });
      expect.fail('should throw');
    } catch (e) {
      expect((e as { code?: string }).code).to.equal('CORL_ERR_PLUGIN_OPTIONS');
      expect((e as Error).message).to.contain('minShare');
    }
  });
});
