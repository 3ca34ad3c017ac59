import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { capAnswer, capKey, capKeys } from '../../../core/serve/keys';

/** The digest form, computed independently of the unit under test. */
const digest = (key: string): string => 'sha256:' + createHash('sha256').update(key, 'utf8').digest('base64url');

describe('serve/keys', () => {
  it('keeps a key of at most the limit and replaces a longer one by its SHA-256 digest (50 characters)', () => {
    expect(capKey('x'.repeat(64), 64)).to.equal('x'.repeat(64));
    const long = 'x'.repeat(65);
    expect(capKey(long, 64)).to.equal(digest(long));
    expect(capKey(long, 64)).to.have.length(50);
    // two long keys agree exactly when identical
    expect(capKey('y'.repeat(5_000_000), 64)).to.equal(capKey('y'.repeat(5_000_000), 64));
    expect(capKey('y'.repeat(5_000_000), 64)).to.not.equal(capKey('y'.repeat(4_999_999) + 'z', 64));
  });
  it('caps lists (nulls stay null; the same array when nothing is long) and labels of answers', () => {
    const short = ['1', null, '2'];
    expect(capKeys(short, 64)).to.equal(short);
    expect(capKeys(['1', null, 'z'.repeat(100)], 64)).to.deep.equal(['1', null, digest('z'.repeat(100))]);
    const answer = { id: 'g', rewards: [1], keys: ['1'], source: 'supervisors' as const, metrics: {} };
    expect(capAnswer({ ...answer, label: '1', ownLabel: null }, 64)).to.deep.equal({
      ...answer,
      label: '1',
      ownLabel: null,
    });
    expect(capAnswer({ ...answer, label: 'q'.repeat(65), ownLabel: 'q'.repeat(65) }, 64)).to.deep.equal({
      ...answer,
      label: digest('q'.repeat(65)),
      ownLabel: digest('q'.repeat(65)),
    });
  });
});
