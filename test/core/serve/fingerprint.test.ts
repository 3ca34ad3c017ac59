import { expect } from 'chai';
import { groupHash, legacyGroupHash, sameGroup } from '../../../core/serve/fingerprint';
import type { PostedGroup } from '../../../core/serve/scorer';

const g = (completions: string[], reference?: string, extra: Partial<PostedGroup> = {}): PostedGroup => ({
  id: 'p',
  prompt: '',
  completions: completions.map((text) => ({ text })),
  ...(reference !== undefined ? { reference } : {}),
  ...extra,
});

describe('serve/fingerprint: unambiguous fingerprints of posted content', () => {
  it('inputs the joined legacy text confused get different fingerprints', () => {
    const pairs: [PostedGroup, PostedGroup][] = [
      // a separator inside a text vs two completions
      [g(['a\u0001b']), g(['a', 'b'])],
      // a reference holding a separator vs reference + completion
      [g(['c'], 'r\u0001x'), g(['x', 'c'], 'r')],
      // no reference vs a reference of "\u0000"
      [g(['c']), g(['c'], '\u0000')],
      // two lone surrogates that UTF-8 encodes alike (both become U+FFFD)
      [g(['\ud800']), g(['\udc00'])],
      // a length written into the text vs a length field
      [g(['a\u00027']), { ...g(['a']), completions: [{ text: 'a', length: 7 }] }],
      // entropies 1.5,2 vs 1,5,2 joined by commas... and one decimal apart
      [
        { ...g([]), completions: [{ text: 't', entropies: [1.5, 2] }] },
        { ...g([]), completions: [{ text: 't', entropies: [1, 5, 2] }] },
      ],
      // sample ids joined
      [
        g(['a'], undefined, { members: [{ id: 'x\u0005y', h: '' }] }),
        g(['a'], undefined, {
          members: [
            { id: 'x', h: '' },
            { id: 'y', h: '' },
          ],
        }),
      ],
    ];
    for (const [x, y] of pairs) expect(groupHash(x), JSON.stringify([x, y])).to.not.equal(groupHash(y));
    // The legacy encoding really did confuse the first, third and fourth pairs.
    expect(legacyGroupHash(pairs[0]![0])).to.equal(legacyGroupHash(pairs[0]![1]));
    expect(legacyGroupHash(pairs[2]![0])).to.equal(legacyGroupHash(pairs[2]![1]));
    expect(legacyGroupHash(pairs[3]![0])).to.equal(legacyGroupHash(pairs[3]![1]));
  });

  it('a stored legacy fingerprint is compared under the legacy rule, a current one under the current', () => {
    const x = g(['so \\boxed{4}', 'so \\boxed{5}'], '4');
    const now = groupHash(x);
    expect(now).to.have.length(43);
    expect(legacyGroupHash(x)).to.have.length(27);
    expect(sameGroup(legacyGroupHash(x), x, now)).to.equal(true);
    expect(sameGroup(now, x, now)).to.equal(true);
    const y = g(['so \\boxed{4}'], '4');
    expect(sameGroup(legacyGroupHash(x), y, groupHash(y))).to.equal(false);
    expect(sameGroup(now, y, groupHash(y))).to.equal(false);
  });
});
