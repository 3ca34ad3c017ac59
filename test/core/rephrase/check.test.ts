import { expect } from 'chai';
import { checkVariant, describeFailure, mentions, numbersOf } from '../../../core/rephrase/check';

describe('core/rephrase/check', () => {
  it('reads the numbers of a text as a sorted multiset of canonical values', () => {
    expect(numbersOf('Tom has 3 apples and buys 12 more at $1,250.50 each; 3 are bad.')).to.deep.equal([
      '12',
      '1250.5',
      '3',
      '3',
    ]);
    expect(numbersOf('3.50 and 3.5 and 007')).to.deep.equal(['3.5', '3.5', '7']);
    expect(numbersOf('no digits here, twelve')).to.deep.equal([]);
    // a comma that is not a thousands separator separates two numbers
    expect(numbersOf('pairs 1,2 and 10,25')).to.deep.equal(['1', '10', '2', '25']);
  });

  it('passes a rephrasing that keeps every number (in any order)', () => {
    expect(
      checkVariant(
        'A train goes 60 km in 1.5 hours. Speed?',
        'In 1.5 hours a train covers 60 km. How fast is it?',
        '40',
      ),
    ).to.equal(null);
  });

  it('fails a changed, dropped or added number, naming both multisets', () => {
    const f = checkVariant('Tom has 3 apples and 4 pears.', 'Tom has 3 apples and 5 pears.');
    expect(f).to.deep.equal({ reason: 'numbers', original: ['3', '4'], variant: ['3', '5'] });
    expect(describeFailure(f!)).to.equal('numbers differ: original {3, 4}, variant {3, 5}');
    expect(checkVariant('3 and 3', 'just 3')?.reason).to.equal('numbers');
    expect(checkVariant('3 cats', '3 cats in 2 rows')?.reason).to.equal('numbers');
  });

  it('fails an empty variant and one that reveals the answer the original did not mention', () => {
    expect(checkVariant('What is 2 + 2?', '   \n')).to.deep.equal({ reason: 'empty' });
    expect(
      checkVariant('Which letter follows A in the alphabet?', 'Which letter comes right after A? It is B.', 'B'),
    ).to.deep.equal({ reason: 'answer', answer: 'B' });
    // the original mentions the option letter too, so it cannot leak
    expect(
      checkVariant(
        'Which shape has (A) 3 sides (B) 4 sides?',
        'Which shape, (A) with 3 sides or (B) with 4 sides?',
        'B',
      ),
    ).to.equal(null);
    expect(checkVariant('Simplify x^2/(x y).', 'Reduce x^2/(x y) to \\frac{x}{y}.', '\\frac{x}{y}')?.reason).to.equal(
      'answer',
    );
  });

  it('matches short answers as whole words only', () => {
    expect(mentions('Bob bought a book', 'B')).to.equal(false);
    expect(mentions('the answer is B.', 'B')).to.equal(true);
    expect(mentions('costs 4.5 dollars', '4')).to.equal(false);
    expect(mentions('it is 4.', '4')).to.equal(true);
    expect(mentions('anything', '  ')).to.equal(false);
  });
});
