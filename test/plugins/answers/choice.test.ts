import { expect } from 'chai';
import { choiceExtractor, extractChoice, letterOf } from '../../../plugins/answers/choice';

const opts = { letters: 'ABCDE', anywhere: false };

describe('plugins/answers/choice (corl:choice)', () => {
  it('reads the letter forms "C", "(C)", "[C]", "C.", "C) text", "C. text", "Option C"', () => {
    for (const s of [
      'C',
      '(C)',
      '[C]',
      'C.',
      'C) because',
      'C. 42 apples',
      ' ( C ) ',
      'Option C',
      '**C**',
      '$C$',
      '\\text{C}',
      'C: yes',
    ]) {
      expect(letterOf(s, 'ABCDE'), s).to.equal('C');
    }
    for (const s of ['Cat', 'F', '(C', 'c', '', 'CD', 'the C']) expect(letterOf(s, 'ABCDE'), s).to.equal(null);
  });
  it('takes the <answer> tag, the last \\boxed{} or "answer is" first', () => {
    expect(extractChoice('I think (A) is tempting. <answer>(B)</answer>', opts)).to.equal('B');
    expect(extractChoice('Looking at it: \\boxed{D}', opts)).to.equal('D');
    expect(extractChoice('A looks right, but the answer is C.', opts)).to.equal('C');
    expect(extractChoice('Hmm, so the answer is (E) clearly', opts)).to.equal('E');
    expect(extractChoice('Final answer: B', opts)).to.equal('B');
    expect(extractChoice('C. Because 2 + 2 = 4', opts)).to.equal('C');
  });
  it('"anywhere" finds the last parenthesized letter; letters are configurable', () => {
    expect(extractChoice('so option (B) wins over (A)', opts)).to.equal(null);
    expect(extractChoice('so option (B) wins over (A)', { ...opts, anywhere: true })).to.equal('A');
    expect(extractChoice('answer is F', { letters: 'ABCDEFGH', anywhere: false })).to.equal('F');
    expect(extractChoice('answer is F', opts)).to.equal(null);
    expect(extractChoice('', opts)).to.equal(null);
  });
  it('the plugin extracts with its options', () => {
    const x = choiceExtractor.create(opts, {} as never) as { extract(t: string): string | null };
    expect(x.extract('<answer>A</answer>')).to.equal('A');
  });
});
