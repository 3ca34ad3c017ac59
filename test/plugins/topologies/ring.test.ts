import { expect } from 'chai';
import { ringTopology } from '../../../plugins/topologies/ring';
import { selfTopology } from '../../../plugins/topologies/self';

const ring = (options: object = {}) =>
  ringTopology.create({ direction: 'backward', order: [], ...options } as any, {} as any) as any;

describe('plugins/topologies', () => {
  it('corl:ring: S(n) = {n − 1 mod N}, never itself', () => {
    const t = ring();
    expect([0, 1, 2].map((n) => t.supervisors(n, 3))).to.deep.equal([[2], [0], [1]]);
    expect([0, 1].map((n) => t.supervisors(n, 2))).to.deep.equal([[1], [0]]);
    expect(t.selfSupervised).to.equal(false);
  });
  it('corl:ring forward and with an explicit order', () => {
    expect([0, 1, 2].map((n) => ring({ direction: 'forward' }).supervisors(n, 3))).to.deep.equal([[1], [2], [0]]);
    // order 0 → 2 → 1 → 0: 2 is supervised by 0, 1 by 2, 0 by 1
    expect([0, 1, 2].map((n) => ring({ order: [0, 2, 1] }).supervisors(n, 3))).to.deep.equal([[1], [2], [0]]);
  });
  it('corl:ring refuses one agent and a bad order with CORL_ERR_CONFIG_TOPOLOGY', () => {
    expect(() => ring().validate(1)).to.throw(/CORL_ERR_CONFIG_TOPOLOGY.*at least 2 agents/);
    expect(() => ring({ order: [0, 0, 1] }).validate(3)).to.throw(/CORL_ERR_CONFIG_TOPOLOGY.*permutation/);
    expect(() => ring({ order: [0, 1] }).validate(3)).to.throw(/permutation/);
  });
  it('corl:self: S(n) = {n}', () => {
    const t = selfTopology.create({}, {} as any) as any;
    expect([0, 1, 2].map((n) => t.supervisors(n, 3))).to.deep.equal([[0], [1], [2]]);
    expect(t.selfSupervised).to.equal(true);
    expect(() => t.validate(1)).to.not.throw();
  });
});
