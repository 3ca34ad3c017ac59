import { expect } from 'chai';
import { CharTokenizer, END, UNK } from '../../../../plugins/policies/transformer/tokenizer';

describe('plugins/policies/transformer/tokenizer', () => {
  it('maps characters to ids after the two special tokens, unknown characters to <|unk|>', () => {
    const t = new CharTokenizer({ alphabet: 'ab=', tokens: [], lowercase: false });
    expect(t.size).to.equal(5);
    expect(t.encode('ab=ba')).to.deep.equal([2, 3, 4, 3, 2]);
    expect(t.encode('aXb')).to.deep.equal([2, UNK, 3]);
    expect(t.decode([END, 2, 3, UNK, END])).to.equal('ab\uFFFD');
  });

  it('multi-character tokens match longest first, so two families tokenize the same text differently', () => {
    const chars = new CharTokenizer({ alphabet: '0123456789{}\\abdeox', tokens: [], lowercase: false });
    const merged = new CharTokenizer({
      alphabet: '0123456789{}\\abdeox',
      tokens: ['\\box', '\\boxed{', '12'],
      lowercase: false,
    });
    const text = '\\boxed{12}';
    expect(chars.encode(text)).to.have.length(10);
    expect(merged.encode(text)).to.deep.equal([3, 4, 2 + 3 + '0123456789{}\\abdeox'.indexOf('}')]);
    expect(merged.decode(merged.encode(text))).to.equal(text);
    expect(merged.size).to.equal(chars.size + 3);
  });

  it('can lower-case its input', () => {
    const t = new CharTokenizer({ alphabet: 'ab', tokens: [], lowercase: true });
    expect(t.encode('AbB')).to.deep.equal([2, 3, 3]);
  });

  it('refuses duplicate characters and one-character tokens', () => {
    expect(() => new CharTokenizer({ alphabet: 'aba', tokens: [], lowercase: false })).to.throw(
      /CORL_ERR_CONFIG_INVALID.*tokenizer.alphabet.*"a" twice/,
    );
    expect(() => new CharTokenizer({ alphabet: 'ab', tokens: ['a'], lowercase: false })).to.throw(
      /CORL_ERR_CONFIG_INVALID.*at least 2 characters/,
    );
  });
});
