import { expect } from 'chai';
import { isAnswer, matches, matchesAtOnce } from '../../../core/voting/match';

/** Keys equal by numeric value ("0.5" ≡ "1/2"); it records every pair it is asked about. */
function numeric(): { asked: [string, string][]; equal(a: string, b: string): Promise<boolean> } {
  const val = (k: string): number => (k.includes('/') ? Number(k.split('/')[0]) / Number(k.split('/')[1]) : Number(k));
  const asked: [string, string][] = [];
  return {
    asked,
    equal: async (a, b) => {
      asked.push([a, b]);
      return Math.abs(val(a) - val(b)) < 1e-9;
    },
  };
}

describe('core/voting/match', () => {
  it('identical keys match without asking the equivalence; equivalent keys match through it', async () => {
    const eq = numeric();
    expect(await matches('7', '7', eq)).to.equal(true);
    expect(eq.asked).to.deep.equal([]);
    expect(await matches('0.5', '1/2', eq)).to.equal(true);
    expect(await matches('0.5', '2', eq)).to.equal(false);
    expect(eq.asked).to.deep.equal([
      ['0.5', '1/2'],
      ['0.5', '2'],
    ]);
  });

  it('no answer (null, undefined or the empty key) matches nothing, not even itself, and is never asked about', async () => {
    const eq = numeric();
    // An equivalence that would call '' equal to anything must not be consulted.
    const lax = { equal: async () => true };
    for (const none of [null, undefined, '']) {
      for (const other of [null, undefined, '', '1']) {
        expect(await matches(none, other, lax), `${String(none)} ~ ${String(other)}`).to.equal(false);
        expect(await matches(other, none, lax), `${String(other)} ~ ${String(none)}`).to.equal(false);
        expect(matchesAtOnce(none, other)).to.equal(false);
      }
    }
    expect(await matches('', '', eq)).to.equal(false);
    expect(eq.asked).to.deep.equal([]);
  });

  it('matchesAtOnce: false without an answer, true for identical keys, undefined when only equal can tell', () => {
    expect(matchesAtOnce('3', '3')).to.equal(true);
    expect(matchesAtOnce('3', '4')).to.equal(undefined);
    expect(matchesAtOnce(null, '3')).to.equal(false);
    expect(matchesAtOnce('3', '')).to.equal(false);
  });

  it('isAnswer: a non-empty string', () => {
    expect([null, undefined, '', 'x', ' '].map(isAnswer)).to.deep.equal([false, false, false, true, true]);
  });
});
