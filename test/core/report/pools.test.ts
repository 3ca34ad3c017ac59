import { expect } from 'chai';
import { configDigest, PLAN_OMIT } from '../../../core/report/identity';
import { agentFamilies, namesMember, plannedDigest, poolDraws, type CheckpointPools } from '../../../core/report/pools';
import { thrown } from '../../fixtures/errors';

const member = (path: string, sha: string) => ({ path, sha256: { 'model.onnx': sha.repeat(64) } });
const POOLS: CheckpointPools = {
  pools: {
    alpha: ['a0', 'a1', 'a2', 'a3'].map((p, i) => member(`models/pool/${p}`, String(i))),
    beta: ['b0', 'b1', 'b2', 'b3', 'b4'].map((p, i) => member(`models/pool/${p}`, String(i + 4))),
  },
};
const config = (...families: (string | undefined)[]) => ({
  seed: 3,
  agents: families.map((family, i) => ({
    name: `agent-${i}`,
    policy: { use: 'corl:transformer', options: { ...(family ? { family } : {}), checkpoint: '../models/x' } },
  })),
});

describe('report/pools: base checkpoints drawn from pools by seed index', () => {
  it('the k-th agent of a family at seed index i gets member (i + k) mod |pool|', () => {
    const cross = agentFamilies(config('alpha', 'beta'));
    expect(cross).to.deep.equal(['alpha', 'beta']);
    // seed 6: alpha 6 mod 4 = 2, beta 6 mod 5 = 1
    expect(poolDraws(POOLS, cross, 6, 'c.json')).to.deep.equal([
      { agent: 0, family: 'alpha', member: 2, path: 'models/pool/a2' },
      { agent: 1, family: 'beta', member: 1, path: 'models/pool/b1' },
    ]);
    // within a family: two alpha agents never share a checkpoint; the first is the cross config's
    const same = poolDraws(POOLS, agentFamilies(config('alpha', 'alpha')), 3, 'c.json').map((d) => d.member);
    expect(same).to.deep.equal([3, 0]);
    // a ring of three: alpha, beta, alpha at seed 1 → alpha 1, beta 1, alpha 2
    expect(poolDraws(POOLS, ['alpha', 'beta', 'alpha'], 1, 'c.json').map((d) => d.member)).to.deep.equal([1, 1, 2]);
    // over |pool| consecutive seeds every member is drawn once
    const firsts = [0, 1, 2, 3].map((i) => poolDraws(POOLS, ['alpha'], i, 'c.json')[0]!.member);
    expect([...firsts].sort()).to.deep.equal([0, 1, 2, 3]);
  });

  it('an agent without a family, of an unpooled family, or more agents than a pool holds: CORL_ERR_PLAN_MISMATCH naming the agent', () => {
    const none = thrown(() => poolDraws(POOLS, agentFamilies(config('alpha', undefined)), 0, 'c.json'));
    expect(none.code).to.equal('CORL_ERR_PLAN_MISMATCH');
    expect(none.message).to.contain('agents[1] of c.json').and.contain('"family"');
    const gamma = thrown(() => poolDraws(POOLS, ['gamma'], 0, 'c.json'));
    expect(gamma.message).to.contain('got "gamma"');
    const many = thrown(() => poolDraws(POOLS, ['alpha', 'alpha', 'alpha', 'alpha', 'alpha'], 0, 'c.json'));
    expect(many.message).to.contain('at most 4 agents of family "alpha"');
  });

  it("the planned digest ignores the seed and, under pools only, the agents' checkpoints", () => {
    const a = config('alpha', 'beta');
    const b = JSON.parse(JSON.stringify(a));
    b.seed = 4003;
    b.agents[0].policy.options.checkpoint = '../models/pool/a3';
    expect(plannedDigest(a, {})).to.equal(configDigest(a, PLAN_OMIT));
    expect(plannedDigest(b, {})).to.not.equal(plannedDigest(a, {}));
    expect(plannedDigest(b, { checkpoints: POOLS })).to.equal(plannedDigest(a, { checkpoints: POOLS }));
    b.agents[0].policy.options.dModel = 64;
    expect(plannedDigest(b, { checkpoints: POOLS })).to.not.equal(plannedDigest(a, { checkpoints: POOLS }));
    expect(a.agents[0]!.policy.options.checkpoint).to.equal('../models/x'); // the source is not changed
  });

  it('a checkpoint path written from another folder names the member by its whole path', () => {
    expect(namesMember('../../models/pool/a2', 'models/pool/a2')).to.equal(true);
    expect(namesMember('./models/pool/a2/', 'models/pool/a2')).to.equal(true);
    expect(namesMember('../models/pool/a20', 'models/pool/a2')).to.equal(false);
    expect(namesMember('../other/a2', 'models/pool/a2')).to.equal(false);
    expect(namesMember(undefined, 'models/pool/a2')).to.equal(false);
  });
});
