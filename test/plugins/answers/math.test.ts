import { expect } from 'chai';
import { createRunContainer } from '../../../core/registry/container';
import { PLUGIN_REGISTRY } from '../../../core/registry/registry';
import { pluralityVote } from '../../../core/voting/plurality';
import {
  extractMath,
  lastBoxed,
  MathEquivalence,
  mathEquivalence,
  mathExtractor,
  mathKey,
} from '../../../plugins/answers/math';

describe('plugins/answers/math (corl:math extractor and equivalence)', () => {
  const opts = { lastNumber: true };
  it('takes the last brace-balanced \\boxed{}', () => {
    expect(lastBoxed('first \\boxed{1} then \\boxed{\\frac{1}{2}} done')).to.equal('\\frac{1}{2}');
    expect(lastBoxed('ok \\boxed{3} then broken \\boxed{4')).to.equal('3');
  });
  it('then "the answer is", then the last number (switchable)', () => {
    expect(extractMath('So the answer is 42.', opts)).to.equal('42');
    expect(extractMath('we get 3 apples and then 7 pears', { lastNumber: false })).to.equal(null);
    expect(extractMath('Thinking about it, the answer is \\boxed{4}.', opts)).to.equal('4');
  });
  it('the extractor plugin applies its options', () => {
    const on = mathExtractor.create(
      { minerva: true, answerTags: true, boxed: true, answerIs: true, lastNumber: true },
      {} as never,
    ) as { extract(t: string): string | null };
    const off = mathExtractor.create(
      { minerva: true, answerTags: true, boxed: true, answerIs: true, lastNumber: false },
      {} as never,
    ) as { extract(t: string): string | null };
    expect(on.extract('3 then 9')).to.equal('9');
    expect(off.extract('3 then 9')).to.equal(null);
  });
  it('the key: `1/2` and `\\frac{1}{2}` and `\\dfrac12` are one key; empty answers have none', () => {
    expect(mathKey('1/2')).to.equal('\\frac{1}{2}');
    expect(mathKey('\\dfrac12')).to.equal('\\frac{1}{2}');
    expect(mathKey(' $\\frac{1}{2}$ ')).to.equal('\\frac{1}{2}');
    expect(mathKey('\\text{ }')).to.equal(null);
  });

  describe('MathEquivalence', () => {
    let eq: MathEquivalence;
    beforeEach(() => {
      eq = new MathEquivalence({ timeoutMs: 5000 });
    });
    afterEach(() => eq.close());

    it('numeric equality within the relative tolerance (configurable)', async () => {
      expect(await eq.equal('0.5', '\\frac{1}{2}')).to.equal(true);
      expect(await eq.equal('3.14159', '3.1416')).to.equal(true);
      expect(await eq.equal('3.14', '3.15')).to.equal(false);
      const loose = new MathEquivalence({ tolerance: 0.01 });
      expect(await loose.equal('3.14', '3.15')).to.equal(true);
      await loose.close();
    });
    it('tiny numbers compare relatively too: no absolute floor makes them equal to zero or to each other', async () => {
      expect(await eq.equal('6.626\\times10^{-34}', '0')).to.equal(false);
      expect(await eq.equal('1e-13', '2e-13')).to.equal(false);
      expect(await eq.equal('1\\times10^{-13}', '2\\times10^{-13}')).to.equal(false);
      expect(await eq.equal('6.626\\times10^{-34}', '6.626\\cdot10^{-34}')).to.equal(true);
      expect(await eq.equal('6.626\\times10^{-34}', '6.6260001\\times10^{-34}')).to.equal(true);
      // float noise next to zero is the symbolic engine's call, and it knows sin(pi) is 0
      expect(await eq.equal('\\sin(\\pi)', '0')).to.equal(true);
      expect(await eq.equal('0', '0.0')).to.equal(true);
    });
    it('polynomials are settled in-process by default; what the fast reader cannot read goes to the worker', async () => {
      expect(await eq.equal('(x+1)^{2}', 'x^{2}+2x+1')).to.equal(true);
      expect(eq.symbolicStats.started).to.equal(0);
      expect(await eq.equal('\\sum_{k=1}^{4}k', '10')).to.equal(true);
      expect(await eq.equal('\\sqrt[3]{27}', '3')).to.equal(true);
      expect(eq.symbolicStats.answered).to.equal(2);
    });
    it('with probeIdentity off, polynomial identity is proved by the engine; verdicts are cached and symmetric', async () => {
      const engine = new MathEquivalence({ probeIdentity: false, timeoutMs: 5000 });
      try {
        expect(await engine.equal('(x+1)^{2}', 'x^{2}+2x+1')).to.equal(true);
        expect(engine.symbolicStats.answered).to.equal(1);
        expect(await engine.equal('x^{2}+2x+1', '(x+1)^{2}')).to.equal(true);
        expect(await engine.equal('\\frac{x^{2}-1}{x-1}', 'x+1')).to.equal(true);
        expect(await engine.equal('x^{2}+2x+1.001', '(x+1)^{2}')).to.equal(false); // rejected by a probe
        expect(engine.symbolicStats.answered).to.equal(2);
        const both = await Promise.all([engine.equal('2x+2', '2(x+1)'), engine.equal('2(x+1)', '2x+2')]);
        expect(both).to.deep.equal([true, true]);
        expect(engine.symbolicStats.answered).to.equal(3);
      } finally {
        await engine.close();
      }
    });
    it('intervals, tuples and sets through the plugin', async () => {
      const keyed = (s: string) => eq.key(s)!;
      expect(await eq.equal(keyed('\\left[0, \\frac12\\right)'), keyed('[0, 0.5)'))).to.equal(true);
      expect(await eq.equal(keyed('[0, 1)'), keyed('[0, 1]'))).to.equal(false);
      expect(await eq.equal(keyed('\\{3, \\sqrt{4}\\}'), keyed('\\{2, 3\\}'))).to.equal(true);
      expect(await eq.equal(keyed('x = 3'), keyed('3'))).to.equal(true);
    });
    it('symbolic: false decides with the fast checks only', async () => {
      const fast = new MathEquivalence({ symbolic: false });
      expect(await fast.equal('(x+1)^{2}', 'x^{2}+2x+1')).to.equal(true);
      expect(await fast.equal('\\sum_{k=1}^{4}k', '10')).to.equal(false);
      expect(await fast.equal('x+1', 'x+2')).to.equal(false);
      expect(fast.symbolicStats.started).to.equal(0);
      await fast.close();
    });
    it('percent and units options reach the key', () => {
      const frac = new MathEquivalence({ percent: 'fraction', units: ['apple'] });
      expect(frac.key('50\\%')).to.equal('0.5');
      expect(frac.key('3 apples')).to.equal('3');
      expect(frac.key('3 cm')).to.equal('3cm');
    });
  });

  describe('votes cluster by equivalence, and an empty answer never wins', () => {
    const eq = new MathEquivalence({ symbolic: false });
    const keys = (answers: (string | null)[]) => answers.map((a) => (a === null ? null : eq.key(a)));
    it('1/2, 0.5 and \\frac{1}{2} vote together against a plurality of strings', async () => {
      const v = await pluralityVote(keys(['3', '0.5', '3', '\\frac{1}{2}', '1/2']), eq, 0);
      expect(v.label).to.equal('0.5');
      expect(v.share).to.equal(0.6);
    });
    it('null and empty answers do not vote', async () => {
      const v = await pluralityVote(keys([null, '\\text{ }', '$ $', null, '7']), eq, 0);
      expect(v.label).to.equal('7');
      expect(v.voters).to.equal(1);
      const none = await pluralityVote(keys([null, '\\text{ }']), eq, 0);
      expect(none.label).to.equal(null);
    });
  });

  it('registers both corl:math plugins through plugins/answers', async () => {
    const container = await createRunContainer();
    const registry = container.resolve(PLUGIN_REGISTRY);
    expect(registry.holds(mathExtractor)).to.equal(true);
    expect(registry.holds(mathEquivalence)).to.equal(true);
    expect(registry.names('extractor')).to.include.members(['corl:math', 'corl:choice']);
    expect(registry.names('equivalence')).to.include.members(['corl:math', 'corl:exact']);
  });
});
