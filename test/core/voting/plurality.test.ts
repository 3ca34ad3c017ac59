import { expect } from 'chai';
import type { Equivalence } from '../../../core/contracts/equivalence';
import { pluralityVote } from '../../../core/voting/plurality';

/** Keys equal by numeric value ("0.5" ≡ "1/2"), and a count of comparisons. */
function numeric(): Equivalence & { calls: number } {
  const val = (k: string): number => (k.includes('/') ? Number(k.split('/')[0]) / Number(k.split('/')[1]) : Number(k));
  const eq = {
    calls: 0,
    key: (a: string) => a.trim() || null,
    equal: async (a: string, b: string) => {
      eq.calls++;
      return Math.abs(val(a) - val(b)) < 1e-9;
    },
  };
  return eq;
}

describe('core/voting/plurality', () => {
  it('plurality over non-null keys; share = top / non-null', async () => {
    const v = await pluralityVote(['3', null, '4', '3', null, '5'], numeric(), 0);
    expect(v.label).to.equal('3');
    expect(v.share).to.equal(0.5);
    expect(v.voters).to.equal(4);
    expect(v.total).to.equal(6);
  });

  it('ties go to the answer seen first', async () => {
    expect((await pluralityVote(['7', '8', '8', '7'], numeric(), 0)).label).to.equal('7');
    expect((await pluralityVote(['8', '7', '7', '8'], numeric(), 0)).label).to.equal('8');
  });

  it('clusters by equivalence: 1/2 and 0.5 vote together and beat 2', async () => {
    const eq = numeric();
    const v = await pluralityVote(['2', '1/2', '0.5', '2', '0.5'], eq, 0);
    expect(v.label).to.equal('1/2');
    expect(v.clusters.map((c) => [c.key, c.count])).to.deep.equal([
      ['2', 2],
      ['1/2', 3],
    ]);
  });

  it('never calls equal for identical keys', async () => {
    const eq = numeric();
    await pluralityVote(['3', '3', '3', '3'], eq, 0);
    expect(eq.calls).to.equal(0);
  });

  it('no answers, or a share under the threshold, is no label; an empty key never votes', async () => {
    expect((await pluralityVote([null, null], numeric(), 0)).label).to.equal(null);
    expect((await pluralityVote(['', '', '1'], numeric(), 0)).label).to.equal('1');
    const v = await pluralityVote(['1', '2', '3', '1'], numeric(), 0.6);
    expect(v.share).to.equal(0.5);
    expect(v.label).to.equal(null);
    expect((await pluralityVote(['1', '2', '1'], numeric(), 0.6)).label).to.equal('1');
  });
});
