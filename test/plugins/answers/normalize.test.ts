import { expect } from 'chai';
import { canonicalDecimal, DEFAULT_NORMALIZE, normalizeKey } from '../../../plugins/answers/normalize';

const key = (s: string) => normalizeKey(s);

describe('plugins/answers/normalize (canonical keys)', () => {
  it('drops \\left/\\right, \\displaystyle, spacing macros, $ and spaces', () => {
    expect(key('\\left( 1, 2 \\right)')).to.equal('(1,2)');
    expect(key('\\left. x \\right|')).to.equal('x|');
    expect(key('$\\displaystyle 2\\,\\pi$')).to.equal('2\\pi');
    expect(key('3\\quad\\!4')).to.equal('34');
    expect(key('  $ $ ')).to.equal(null);
    expect(key('')).to.equal(null);
  });
  it('\\dfrac/\\tfrac → \\frac, and the \\frac12 / \\sqrt2 shorthands get braces', () => {
    expect(key('\\dfrac{1}{2}')).to.equal('\\frac{1}{2}');
    expect(key('\\tfrac{3}{4}')).to.equal('\\frac{3}{4}');
    expect(key('\\frac12')).to.equal('\\frac{1}{2}');
    expect(key('\\frac1{\\sqrt2}')).to.equal('\\frac{1}{\\sqrt{2}}');
    expect(key('\\frac{\\sqrt{3}}2')).to.equal('\\frac{\\sqrt{3}}{2}');
    expect(key('\\frac\\pi4')).to.equal('\\frac{\\pi}{4}');
    expect(key('\\sqrt2')).to.equal('\\sqrt{2}');
    expect(key('\\sqrt[3]{8}')).to.equal('\\sqrt[3]{8}');
  });
  it('unwraps \\text{}, \\mathrm{}, \\boxed{}, and drops units given as text', () => {
    expect(key('\\text{Monday}')).to.equal('Monday');
    expect(key('\\mathbf{(C)}')).to.equal('(C)');
    expect(key('\\boxed{3}')).to.equal('3');
    expect(key('5 \\text{ cm}')).to.equal('5');
    expect(key('5\\text{cm}^2')).to.equal('5');
    expect(key('7\\mathrm{m}')).to.equal('7');
    expect(key('1\\text{ and }2')).to.equal('1,2');
    expect(key('\\text{ }')).to.equal(null);
  });
  it('drops unit words after a number (from the list, plurals included), not variables', () => {
    expect(key('12 square units')).to.equal('12');
    expect(key('5 hours')).to.equal('5');
    expect(key('30 miles per hour')).to.equal('30');
    expect(key('3 m')).to.equal('3m');
    expect(key('\\pi r^2')).to.equal('\\pi r^2');
    expect(normalizeKey('5 widgets', { ...DEFAULT_NORMALIZE, units: ['widget'] })).to.equal('5');
  });
  it('degrees, dollars and percent (configurable)', () => {
    expect(key('90^\\circ')).to.equal('90');
    expect(key('90^{\\circ}')).to.equal('90');
    expect(key('45°')).to.equal('45');
    expect(key('\\$1,234')).to.equal('1234');
    expect(key('50\\%')).to.equal('50');
    expect(normalizeKey('50\\%', { ...DEFAULT_NORMALIZE, percent: 'fraction' })).to.equal('0.5');
    expect(normalizeKey('12.5%', { ...DEFAULT_NORMALIZE, percent: 'fraction' })).to.equal('0.125');
    expect(normalizeKey('50\\%', { ...DEFAULT_NORMALIZE, percent: 'keep' })).to.equal('50%');
  });
  it('drops short left-hand sides: x =, f(x) =, x \\in', () => {
    expect(key('x = 5')).to.equal('5');
    expect(key('y=2x+1')).to.equal('2x+1');
    expect(key('f(x) = x^2')).to.equal('x^2');
    expect(key('\\theta = \\frac{\\pi}{4}')).to.equal('\\frac{\\pi}{4}');
    expect(key('x \\in [0,1]')).to.equal('[0,1]');
    expect(key('a_1 = 3')).to.equal('3');
    expect(key('x+y=1')).to.equal('x+y=1');
    expect(key('x=1,y=2')).to.equal('x=1,y=2');
    expect(key('\\sum_{k=1}^{4} k')).to.equal('\\sum_{k=1}^{4}k');
    expect(key('x_{n} = 2')).to.equal('2');
  });
  it('thousands commas only when properly grouped', () => {
    expect(key('1,000')).to.equal('1000');
    expect(key('1,000,000.50')).to.equal('1000000.5');
    expect(key('-12,345')).to.equal('-12345');
    expect(key('1,00')).to.equal('1,00');
    expect(key('1{,}000')).to.equal('1000');
    expect(key('(1,000)')).to.equal('(1,000)');
  });
  it('trailing zeros, leading points, leading zeros and trailing periods', () => {
    expect(key('5.000')).to.equal('5');
    expect(key('2.50')).to.equal('2.5');
    expect(key('.5')).to.equal('0.5');
    expect(key('007')).to.equal('7');
    expect(key('-0.0')).to.equal('0');
    expect(key('5.')).to.equal('5');
    expect(key('(1.50, 2.0)')).to.equal('(1.5,2)');
    expect(key('+3')).to.equal('3');
  });
  it('a/b, mixed numbers and signs become reduced \\frac', () => {
    expect(key('1/2')).to.equal('\\frac{1}{2}');
    expect(key('-6/8')).to.equal('-\\frac{3}{4}');
    expect(key('\\frac{-2}{4}')).to.equal('-\\frac{1}{2}');
    expect(key('-\\frac{2}{-4}')).to.equal('\\frac{1}{2}');
    expect(key('\\frac{4}{2}')).to.equal('2');
    expect(key('2\\frac{1}{2}')).to.equal('\\frac{5}{2}');
    expect(key('3 \\frac14')).to.equal('\\frac{13}{4}');
    expect(key('1/0')).to.equal('1/0');
  });
  it('scientific notation: 3.74\\times10^{24} = 3.74e24 = 3.74 \\cdot 10^{24}', () => {
    expect(key('3.74\\times10^{24}')).to.equal('3.74e+24');
    expect(key('3.74 \\times 10^{24}')).to.equal('3.74e+24');
    expect(key('3.74e24')).to.equal('3.74e+24');
    expect(key('3.74E+24')).to.equal('3.74e+24');
    expect(key('3.74 \\cdot 10^{24}')).to.equal('3.74e+24');
    expect(key('1.5\\times10^{-3}')).to.equal('0.0015');
    expect(key('2^10')).to.equal('2^{10}');
  });
  it('sets, intervals and matrices keep their brackets; matrix environments are unified', () => {
    expect(key('\\{1, 2\\}')).to.equal('\\{1,2\\}');
    expect(key('\\lbrace 1,2 \\rbrace')).to.equal('\\{1,2\\}');
    expect(key('[0, 1)')).to.equal('[0,1)');
    expect(key('(-\\infty, 3]')).to.equal('(-\\infty,3]');
    expect(key('\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}')).to.equal('\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}');
  });
  it('unicode forms', () => {
    expect(key('−5')).to.equal('-5');
    expect(key('½')).to.equal('\\frac{1}{2}');
    expect(key('2π')).to.equal('2\\pi');
    expect(key('3×4')).to.equal('3\\times4');
    expect(key('x≤2')).to.equal('x\\leq2');
  });
  it('keeps a macro apart from a following letter', () => {
    expect(key('\\pi r')).to.equal('\\pi r');
    expect(key('2 \\cdot x')).to.equal(key('2\\cdot x'));
  });
  it('is total on non-strings and unbalanced input', () => {
    expect(normalizeKey(undefined as unknown as string)).to.equal(null);
    expect(key('\\frac{1')).to.be.a('string');
    expect(key('}}}{{{')).to.equal('}}}{{{');
    expect(key('\\')).to.equal('\\');
  });
  it('canonicalDecimal is exact and textual', () => {
    expect(canonicalDecimal('', '123.450', 0)).to.equal('123.45');
    expect(canonicalDecimal('-', '0.0012', 0)).to.equal('-0.0012');
    expect(canonicalDecimal('', '50', -2)).to.equal('0.5');
    expect(canonicalDecimal('', '1', 21)).to.equal('1e+21');
    expect(canonicalDecimal('', '1', -8)).to.equal('1e-8');
    expect(canonicalDecimal('', '12345678901234567890123', 0)).to.equal('1.2345678901234567890123e+22');
    expect(canonicalDecimal('', '000', 5)).to.equal('0');
  });
});
