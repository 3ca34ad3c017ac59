import { expect } from 'chai';
import { createPlugin, topologyContract } from 'corl/testing';
import { exampleTopology, register } from '../src';

// The contract every topology keeps: valid, distinct supervisors, never itself, coded refusals, determinism.
topologyContract(exampleTopology, { register, optionSets: [{ peers: 2 }, { peers: 3 }] });

describe('example:topology', () => {
  it('peers = 1 is the Co-RL ring: S(n) = {n - 1 mod N}', async () => {
    const t = await createPlugin(exampleTopology, {});
    expect([0, 1, 2].map((n) => t.supervisors(n, 3))).to.deep.equal([[2], [0], [1]]);
  });

  it('peers = 2 lists the two previous agents, nearest (the teacher) first', async () => {
    const t = await createPlugin(exampleTopology, { peers: 2 });
    expect([0, 1, 2, 3].map((n) => t.supervisors(n, 4))).to.deep.equal([[3, 2], [0, 3], [1, 0], [2, 1]]);
  });

  it('refuses a cohort too small for its peers with CORL_ERR_CONFIG_TOPOLOGY', async () => {
    const t = await createPlugin(exampleTopology, { peers: 2 });
    expect(() => t.validate(2)).to.throw(/CORL_ERR_CONFIG_TOPOLOGY.*more than 2 agent/);
    expect(() => t.validate(3)).to.not.throw();
  });
});
