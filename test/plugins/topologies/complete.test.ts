import { expect } from 'chai';
import type { Topology } from '../../../core/contracts/topology';
import { completeTopology } from '../../../plugins/topologies/complete';

const complete = (self = false) => completeTopology.create({ self }, {} as never) as Topology;

describe('plugins/topologies/complete (corl:complete)', () => {
  it('union of peers: every other agent, predecessor first', () => {
    const t = complete();
    expect([0, 1, 2, 3].map((n) => t.supervisors(n, 4))).to.deep.equal([
      [3, 2, 1],
      [0, 3, 2],
      [1, 0, 3],
      [2, 1, 0],
    ]);
    expect(t.selfSupervised).to.equal(false);
    expect(t.supervisors(0, 2)).to.deep.equal([1]);
  });
  it('self + peers: the agent itself first, then its peers', () => {
    const t = complete(true);
    expect([0, 1, 2].map((n) => t.supervisors(n, 3))).to.deep.equal([
      [0, 2, 1],
      [1, 0, 2],
      [2, 1, 0],
    ]);
    expect(t.selfSupervised).to.equal(true);
    expect(() => t.validate(1)).to.not.throw();
  });
  it('without self, one agent has no peer: CORL_ERR_CONFIG_TOPOLOGY', () => {
    expect(() => complete().validate(1)).to.throw(/CORL_ERR_CONFIG_TOPOLOGY.*at least 2 agents/);
  });
});
