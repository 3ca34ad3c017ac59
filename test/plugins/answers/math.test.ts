import { expect } from 'chai';
import { extractMath, lastBoxed, mathKey, mathEquivalence } from '../../../plugins/answers/math';

describe('plugins/answers/math (foundation extractor and keys)', () => {
  const opts = { lastNumber: true };
  it('takes the last brace-balanced \\boxed{}', () => {
    expect(lastBoxed('first \\boxed{1} then \\boxed{\\frac{1}{2}} done')).to.equal('\\frac{1}{2}');
    expect(lastBoxed('\\boxed{a{b}c} and \\fbox{7}')).to.equal('7');
    expect(lastBoxed('ok \\boxed{3} then broken \\boxed{4')).to.equal('3');
    expect(lastBoxed('\\boxed 5$ end')).to.equal('5');
    expect(lastBoxed('nothing here')).to.equal(null);
  });
  it('then "the answer is", then the last number (switchable)', () => {
    expect(extractMath('So the answer is 42.', opts)).to.equal('42');
    expect(extractMath('The final answer is $x^2$\nbye', opts)).to.equal('x^2');
    expect(extractMath('we get 3 apples and then 7 pears', opts)).to.equal('7');
    expect(extractMath('we get 3 apples and then 7 pears', { lastNumber: false })).to.equal(null);
    expect(extractMath('Thinking about it, the answer is \\boxed{4}.', opts)).to.equal('4');
    expect(extractMath('', opts)).to.equal(null);
  });
  it('normalizes keys', () => {
    expect(mathKey(' $5.000$ ')).to.equal('5');
    expect(mathKey('.5')).to.equal('0.5');
    expect(mathKey('1,000')).to.equal('1000');
    expect(mathKey('1,00')).to.equal('1,00');
    expect(mathKey('\\dfrac{1}{2}')).to.equal('\\frac{1}{2}');
    expect(mathKey('1/2')).to.equal('\\frac{1}{2}');
    expect(mathKey('\\left( 1, 2 \\right)')).to.equal('(1,2)');
    expect(mathKey('\\text{ }')).to.equal(null);
  });
  it('numeric equality within the relative tolerance', async () => {
    const eq = mathEquivalence.create({ tolerance: 1e-4 }, {} as any) as any;
    expect(await eq.equal('0.5', '\\frac{1}{2}')).to.equal(true);
    expect(await eq.equal('3.14159', '3.1416')).to.equal(true);
    expect(await eq.equal('3.14', '3.15')).to.equal(false);
    expect(await eq.equal('x', 'y')).to.equal(false);
  });
});
