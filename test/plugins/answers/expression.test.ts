import { expect } from 'chai';
import {
  evaluateExpr,
  parseExpression,
  probeEnvironments,
  probeValue,
  PROBES,
  type ParsedExpr,
} from '../../../plugins/answers/expression';

const value = (key: string, env: Record<string, number> = {}): number => {
  const p = parseExpression(key);
  if (!p || p.text) throw new Error(`not parsed: ${key}`);
  return evaluateExpr((p as ParsedExpr).expr, new Map(Object.entries(env)));
};

describe('plugins/answers/expression', () => {
  it('evaluates constants: fractions, radicals, π, e, powers, factorials, binomials', () => {
    expect(value('\\frac{1}{2}')).to.equal(0.5);
    expect(value('2\\sqrt{2}')).to.be.closeTo(2.8284271247, 1e-9);
    expect(value('\\frac{\\pi}{3}')).to.be.closeTo(1.0471975512, 1e-9);
    expect(value('2^{10}')).to.equal(1024);
    expect(value('-3^{2}')).to.equal(-9);
    expect(value('2^{-1}')).to.equal(0.5);
    expect(value('5!')).to.equal(120);
    expect(value('\\binom{5}{2}')).to.equal(10);
    expect(value('e')).to.be.closeTo(Math.E, 1e-15);
    expect(value('3.74e+24')).to.equal(3.74e24);
    expect(value('\\ln(e)')).to.be.closeTo(1, 1e-15);
    expect(value('\\log_{2}(8)')).to.be.closeTo(3, 1e-12);
    expect(value('|-3|')).to.equal(3);
    expect(value('(-8)^{\\frac{1}{3}}')).to.be.closeTo(-2, 1e-12);
    expect(value('\\sin^{2}(1)+\\cos^{2}(1)')).to.be.closeTo(1, 1e-15);
  });
  it('implicit multiplication and precedence', () => {
    expect(value('2x', { x: 3 })).to.equal(6);
    expect(value('2(x+1)', { x: 3 })).to.equal(8);
    expect(value('(x+1)(x-1)', { x: 3 })).to.equal(8);
    expect(value('x^{2}y', { x: 3, y: 2 })).to.equal(18);
    expect(value('6/2\\cdot3')).to.equal(9);
    expect(value('a_1+a_{2}', { a_1: 1, a_2: 2 })).to.equal(3);
    expect(value('\\theta+1', { '\\theta': 1 })).to.equal(2);
  });
  it('refuses what it cannot read for certain (null) and recognizes words', () => {
    for (const k of [
      '1/2x',
      'x=1',
      '\\sin 2x',
      '\\sin^{-1}(x)',
      '3+2i',
      '\\sqrt[3]{8}',
      '\\{1\\}',
      'x<1',
      '\\unknown{3}',
      '((((1',
      '1+',
      '\\sum_{k=1}^{10}k',
    ]) {
      expect(parseExpression(k), k).to.equal(null);
    }
    expect(parseExpression('Monday')).to.deep.equal({ text: true, word: 'monday' });
    expect((parseExpression('x^{2}+y') as ParsedExpr).vars).to.deep.equal(['x', 'y']);
  });
  it('refuses nesting deeper than its limit instead of overflowing the stack', () => {
    expect(parseExpression('('.repeat(500) + '1' + ')'.repeat(500))).to.equal(null);
    expect(parseExpression('{'.repeat(30) + '1' + '}'.repeat(30))).to.not.equal(null);
  });
  it('gives NaN outside the real domain', () => {
    expect(value('\\sqrt{-1}')).to.be.NaN;
    expect(value('\\ln(-1)')).to.be.NaN;
    expect(value('(-1)^{0.5}')).to.be.NaN;
    expect(value('(-1)!')).to.be.NaN;
  });
  it('probe points are fixed, distinct per variable, |v| in (0.6, 2.2), half of them negative', () => {
    expect(probeValue('x', 0)).to.equal(probeValue('x', 0));
    expect(probeValue('x', 0)).to.not.equal(probeValue('y', 0));
    const envs = probeEnvironments(['x', 'y']);
    expect(envs).to.have.length(PROBES);
    for (const env of envs) for (const v of env.values()) expect(Math.abs(v)).to.be.within(0.6, 2.2);
    expect(envs.filter((e) => e.get('x')! < 0)).to.have.length(PROBES / 2);
  });
});
