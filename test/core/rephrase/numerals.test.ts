import { expect } from 'chai';
import { answerValue, asciiDigits, numberWords, statedValues } from '../../../core/rephrase/numerals';

describe('core/rephrase/numerals', () => {
  it('writes every script’s decimal digits, full-width and superscript forms as ASCII', () => {
    expect(asciiDigits('４２')).to.equal('42'); // full-width
    expect(asciiDigits('٤٢')).to.equal('42'); // Arabic-Indic
    expect(asciiDigits('۴۲')).to.equal('42'); // Extended Arabic-Indic (Persian)
    expect(asciiDigits('४२')).to.equal('42'); // Devanagari
    expect(asciiDigits('৪২')).to.equal('42'); // Bengali
    expect(asciiDigits('๔๒')).to.equal('42'); // Thai
    expect(asciiDigits('𝟒𝟐')).to.equal('42'); // mathematical bold
    expect(asciiDigits('⁴²')).to.equal('42'); // superscript
    expect(asciiDigits('④')).to.equal('4'); // circled
    expect(asciiDigits('٣٫٥ and ١٬٢٥٠')).to.equal('3.5 and 1,250'); // Arabic separators
    expect(asciiDigits('½')).to.equal('1/2');
    expect(asciiDigits('−42')).to.equal('-42');
  });

  it('reads English number words, with their joins and breaks', () => {
    expect(numberWords('which makes forty-two')).to.deep.equal([42]);
    expect(numberWords('Forty Two apples')).to.deep.equal([42]);
    expect(numberWords('one hundred and five')).to.deep.equal([105]);
    expect(numberWords('two thousand twenty-four')).to.deep.equal([2024]);
    expect(numberWords('three million four hundred thousand')).to.deep.equal([3400000]);
    expect(numberWords('a hundred sheep and a dozen eggs')).to.deep.equal([100, 12]);
    expect(numberWords('three point five')).to.deep.equal([3.5]);
    expect(numberWords('the forty-second floor')).to.deep.equal([42]);
    expect(numberWords('two thirds of it, half of the rest')).to.deep.equal([2, 2 / 3, 0.5]);
    expect(numberWords('a quarter')).to.deep.equal([0.25]);
    // consecutive numbers that cannot join stay apart; a comma ends a number
    expect(numberWords('two three')).to.deep.equal([2, 3]);
    expect(numberWords('twenty, two')).to.deep.equal([20, 2]);
    expect(numberWords('nineteen ninety')).to.deep.equal([19, 90]);
    // no numbers
    expect(numberWords('hundreds of birds, a lot of them')).to.deep.equal([]);
    expect(numberWords('someone often tends to point')).to.deep.equal([]);
  });

  it('reads digits and fractions as values', () => {
    expect(statedValues('1,250.5 and .5 and 3/4 and \\frac{1}{2}')).to.deep.equal([1250.5, 0.5, 3, 4, 1, 2, 0.75, 0.5]);
    expect(statedValues('٤٢ km')).to.deep.equal([42]);
  });

  it('takes the value of a one-number answer, whatever its unit, currency or form', () => {
    for (const [a, v] of [
      ['42', 42],
      ['-42', 42],
      ['$1,250', 1250],
      ['42 km', 42],
      ['42km', 42],
      ['12 cm^2', 12],
      ['12 \\text{ cm}^2', 12],
      ['50%', 50],
      ['50\\%', 50],
      ['\\frac{1}{2}', 0.5],
      ['\\dfrac{3}{4}', 0.75],
      ['3/4', 0.75],
      ['\\boxed{42}', 42],
      ['x = 7', 7],
      ['forty-two', 42],
      ['４２', 42],
      ['٤٢', 42],
    ] as const)
      expect(answerValue(a), a).to.equal(v);
    for (const a of ['(3, 4)', 'x^2 + 1', 'B', '3 hours 20 minutes', 'Paris', ''])
      expect(answerValue(a), a).to.equal(undefined);
  });
});
