import { expect } from 'chai';
import type { AnswerExtractor } from '../../../core/contracts/answer-extractor';
import type { Equivalence } from '../../../core/contracts/equivalence';
import { SERVE_ANSWER_CACHE } from '../../../core/serve/setup';
import { ANSWER_CACHE_LIMITS, AnswerKeys } from '../../../core/reward/answer-keys';

describe('core/reward/answer-keys (the key cache)', () => {
  let extracted = 0;
  const extractor: AnswerExtractor = {
    extract: (t) => {
      extracted++;
      const m = /\\boxed\{([^}]*)\}/.exec(t);
      return m ? m[1]! : null;
    },
  };
  const equivalence = {
    key: (a: string) => a.trim(),
    equal: (a: string, b: string) => a === b,
  } as unknown as Equivalence;
  beforeEach(() => {
    extracted = 0;
  });

  it('extracts a repeated short text once', () => {
    const keys = new AnswerKeys(extractor, equivalence);
    for (let i = 0; i < 5; i++) expect(keys.of('so \\boxed{ 7 }')).to.deep.equal({ answer: ' 7 ', key: '7' });
    expect(extracted).to.equal(1);
    expect(keys.cacheSize()).to.deep.equal({ texts: 1, chars: 'so \\boxed{ 7 }'.length });
  });

  it('does not keep a text longer than longestText (same answer every time, extracted each time)', () => {
    const keys = new AnswerKeys(extractor, equivalence);
    const long = 'x'.repeat(ANSWER_CACHE_LIMITS.longestText) + ' \\boxed{3}';
    expect(keys.of(long).key).to.equal('3');
    expect(keys.of(long).key).to.equal('3');
    expect(extracted).to.equal(2);
    expect(keys.cacheSize().texts).to.equal(0);
  });

  it('is cleared before it would pass its character budget', () => {
    const keys = new AnswerKeys(extractor, equivalence);
    const size = ANSWER_CACHE_LIMITS.longestText; // texts of exactly the longest kept length
    const perClear = Math.floor(ANSWER_CACHE_LIMITS.chars / size);
    for (let i = 0; i < perClear; i++) keys.of(`${String(i).padStart(8, '0')}${'y'.repeat(size - 8)}`);
    expect(keys.cacheSize()).to.deep.equal({ texts: perClear, chars: perClear * size });
    keys.of(`z${'y'.repeat(size - 1)}`); // one more would exceed the budget: cleared, then kept
    expect(keys.cacheSize()).to.deep.equal({ texts: 1, chars: size });
  });

  it("keeps only short texts under corl serve's limits (a long completion is extracted each time)", () => {
    const keys = new AnswerKeys(extractor, equivalence, SERVE_ANSWER_CACHE);
    const short = 'so \\boxed{4}';
    const long = `${'w'.repeat(SERVE_ANSWER_CACHE.longestText)} \\boxed{5}`;
    for (let i = 0; i < 3; i++) {
      expect(keys.of(short).key).to.equal('4');
      expect(keys.of(long).key).to.equal('5');
    }
    expect(extracted).to.equal(1 + 3);
    expect(keys.cacheSize()).to.deep.equal({ texts: 1, chars: short.length });
  });
});
