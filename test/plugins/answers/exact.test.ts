import { expect } from 'chai';
import type { Equivalence } from '../../../core/contracts/equivalence';
import { exactEquivalencePlugin, exactKey } from '../../../plugins/answers/exact';

describe('plugins/answers/exact (corl:exact)', () => {
  it('keys are trimmed, space-collapsed, optionally case-folded; empty is null', () => {
    expect(exactKey('  a   b ', { caseSensitive: true, collapseSpace: true })).to.equal('a b');
    expect(exactKey('  a   b ', { caseSensitive: true, collapseSpace: false })).to.equal('a   b');
    expect(exactKey('ABC', { caseSensitive: false, collapseSpace: true })).to.equal('abc');
    expect(exactKey('   ', { caseSensitive: true, collapseSpace: true })).to.equal(null);
  });
  it('equal is string identity: 0.5 and \\frac{1}{2} differ, as in the released Co-RL code', async () => {
    const eq = exactEquivalencePlugin.create({ caseSensitive: true, collapseSpace: true }, {} as never) as Equivalence;
    expect(await eq.equal('0.5', '0.5')).to.equal(true);
    expect(await eq.equal('0.5', '\\frac{1}{2}')).to.equal(false);
  });
});
