import { expect } from 'chai';
import { gradeGroup, labelStats, rewardStats, sourceStats, type MetricGroup } from '../../../core/reward/metrics';

// Three groups of K = 4, worked by hand below.
const groups: MetricGroup[] = [
  { rewards: [1, 0, 1, 1], label: 'a', agree: 1, metrics: { x: 1 } },
  { rewards: [0, 0, 0, 0], label: null, metrics: { x: 3, y: 2 } },
  { rewards: [1, 1, 1, 1], label: 'b', agree: 0, metrics: {} },
];

/** Numbers equal by value after a decimal ring (the same floats, whichever way summed). */
const numeric = { equal: async (a: string, b: string) => Number(a) === Number(b) };

describe('core/reward/metrics', () => {
  it('reward stats: mean, sample std (n − 1) and the share of groups with equal rewards', () => {
    // 7 ones and 5 zeros: mean 7/12; squares 7·(5/12)² + 5·(7/12)² = 35/12; std = √(35/12 / 11).
    const m = rewardStats(groups);
    expect(Object.keys(m)).to.deep.equal(['reward/mean', 'reward/std', 'reward/frac_zero_std']);
    expect(m['reward/mean']).to.be.closeTo(7 / 12, 1e-15);
    expect(m['reward/std']).to.be.closeTo(Math.sqrt(35 / 12 / 11), 1e-15);
    expect(m['reward/frac_zero_std']).to.equal(2 / 3);
    expect(rewardStats([])).to.deep.equal({ 'reward/mean': 0, 'reward/std': 0, 'reward/frac_zero_std': 0 });
    expect(rewardStats([{ rewards: [0.5], metrics: {} }])['reward/std']).to.equal(0);
  });

  it('label stats without ground truth (the service): labeled fraction and peer agreement', () => {
    expect(labelStats(groups)).to.deep.equal({ 'label/labeled_fraction': 2 / 3, 'label/peer_agreement': 0.5 });
    // A source without labels reports none of them.
    expect(labelStats([{ rewards: [1], metrics: {} }])).to.deep.equal({});
  });

  it('label stats with grades (training): accuracy, per category, agreement, reward accuracy, in that order', () => {
    const m = labelStats(groups, [
      { labelRight: 1, category: 'carry', rewardRight: [1, 1, 0, 1] },
      { category: 'plain', rewardRight: [1, 1, 1, 0] },
      { labelRight: 0, category: 'carry', rewardRight: [0, 0, 0, 0] },
    ]);
    expect(Object.entries(m)).to.deep.equal([
      ['label/labeled_fraction', 2 / 3],
      ['label/accuracy', 0.5],
      ['label/accuracy/carry', 0.5],
      ['label/count/carry', 2],
      ['label/peer_agreement', 0.5],
      ['reward/accuracy', 6 / 12],
    ]);
    // A group without a label is graded by nobody: its grade does not count.
    expect(labelStats([{ rewards: [1], metrics: {} }], [{ labelRight: 1, rewardRight: [1] }])).to.deep.equal({});
  });

  it("source stats: each metric's mean over the groups that report it, in first-seen order", () => {
    expect(Object.entries(sourceStats(groups))).to.deep.equal([
      ['x', 2],
      ['y', 2],
    ]);
  });

  it('gradeGroup: label against the reference key, and each reward against the ground-truth reward', async () => {
    // Keys 4, 4.0, 5, none against reference 4: ground-truth rewards 1, 1, 0, 0.
    const keys = ['4', '4.0', '5', null];
    expect(await gradeGroup({ rewards: [1, 0, 0, 0], label: '4.0' }, keys, '4', 'plain', numeric)).to.deep.equal({
      labelRight: 1,
      category: 'plain',
      rewardRight: [1, 0, 1, 1],
    });
    // A wrong label; rewards that are not all 0 or 1 are not compared.
    expect(await gradeGroup({ rewards: [0.5, 0, 0, 0], label: '5' }, keys, '4', undefined, numeric)).to.deep.equal({
      labelRight: 0,
    });
    // No label: only the rewards are graded. No reference: nothing is.
    expect(await gradeGroup({ rewards: [0, 0, 0, 0], label: null }, keys, '4', undefined, numeric)).to.deep.equal({
      rewardRight: [0, 0, 1, 1],
    });
    expect(await gradeGroup({ rewards: [1, 1, 1, 1], label: '4' }, keys, null, 'carry', numeric)).to.deep.equal({
      category: 'carry',
    });
  });
});
