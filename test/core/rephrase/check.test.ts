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

  it('catches the answer written in words, in other digits, as another form of its value, or with another unit', () => {
    const original = 'Tom has 40 apples and buys 2 more. How many does he have?';
    for (const v of [
      'Tom has 40 apples and buys 2 more (which makes forty-two). How many?',
      'Tom has 40 apples and buys 2 more, Forty Two in all. How many?',
      'Tom has 40 apples and buys 2 more: the forty-second apple is the last. How many?',
    ])
      expect(checkVariant(original, v, '42'), v).to.deep.equal({ reason: 'answer', answer: '42' });
    // in other digits: a number the original lacks (invisible to the check before it read every script)
    for (const v of [
      'Tom has 40 apples and buys 2 more (that is ４２). How many?', // full-width
      'Tom has 40 apples and buys 2 more (٤٢). How many?', // Arabic-Indic
      'Tom has 40 apples and buys 2 more (۴۲). How many?', // Persian
      'Tom has 40 apples and buys 2 more (४२). How many?', // Devanagari
      'Tom has 40 apples and buys 2 more (𝟒𝟐). How many?', // mathematical digits
      'Tom has 40 apples and buys 2 more (⁴²). How many?', // superscripts
    ])
      expect(checkVariant(original, v, '42'), v).to.deep.equal({
        reason: 'numbers',
        original: ['2', '40'],
        variant: ['2', '40', '42'],
      });
    // the answer carries a unit or currency; the variant another spelling of it
    const trip = 'A car goes 30 km, then 12 km more. How far did it go?';
    for (const [v, answer] of [
      ['A car goes 30 km, then 12 km more: forty-two kilometres. How far?', '42 km'],
      ['A car goes 30 km, then 12 km more, forty two kilometers. How far?', '42 \\text{ km}'],
      ['A car goes 30 km, then 12 km more, forty-two dollars of fuel. How far?', '$42'],
    ] as const)
      expect(checkVariant(trip, v, answer)?.reason, v).to.equal('answer');
    // fractions and decimals of one value
    const cake = 'Ann eats 1 of 2 equal slices. What part of the cake did she eat?';
    for (const v of [
      'Ann eats 1 of 2 equal slices, one half. What part did she eat?',
      'Ann eats 1 of 2 equal slices (half of it). What part?',
      'Ann eats 1 of 2 equal slices. What part did she eat? (a half)',
    ])
      expect(checkVariant(cake, v, '\\frac{1}{2}')?.reason, v).to.equal('answer');
    // a textual answer in another case, spacing or LaTeX spelling
    expect(checkVariant('Capital of France?', 'What is the capital of France (PARIS)?', 'Paris')?.reason).to.equal(
      'answer',
    );
    expect(
      checkVariant('Simplify x^2/(x y).', 'Reduce x^2/(x y) to \\dfrac{x}{ y }.', '\\frac{x}{y}')?.reason,
    ).to.equal('answer');
    expect(checkVariant('Which option, (A) or (B)?', 'Pick (A) or (B). It is Ｃ.', 'C')?.reason).to.equal('answer');
  });

  it('keeps a variant that states the answer’s value no more often than the original', () => {
    // the original says forty-two itself: saying it again in digits is a numbers change, in words no leak
    expect(checkVariant('Is forty-two more than 40?', 'Is forty two bigger than 40?', '42')).to.equal(null);
    // other digit forms of the original's own numbers are the same numbers
    expect(checkVariant('Tom has 3 apples and 4 pears.', 'Tom has ３ apples and ٤ pears.', '7')).to.equal(null);
    expect(checkVariant('Tom has 3 apples and 4 pears.', 'Tom owns 3 apples plus 4 pears.', '7')).to.equal(null);
    // a number word that is not the answer's value
    expect(
      checkVariant('Tom has 3 apples and 4 pears. Total?', 'Tom, one boy, has 3 apples and 4 pears.', '7'),
    ).to.equal(null);
  });
});
