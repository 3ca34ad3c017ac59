import { expect } from 'chai';
import { closeRelative, keysEqual, ParseCache, scalarVerdict, structureOf } from '../../../plugins/answers/compare';

const cache = new ParseCache();
const asked: [string, string][] = [];
const symbolic = async (a: string, b: string): Promise<boolean> => {
  asked.push([a, b]);
  return a.length === b.length;
};
const strict = { tolerance: 1e-4, probeIdentity: false };
const probing = { tolerance: 1e-4, probeIdentity: true };
const eq = (a: string, b: string) => keysEqual(a, b, strict, cache, symbolic);

describe('plugins/answers/compare', () => {
  beforeEach(() => {
    asked.length = 0;
  });

  it('reads structures: tuples and intervals (with brackets), sets, unions, bare lists, matrices', () => {
    expect(structureOf('(1,2)')).to.deep.equal({
      kind: 'tuple',
      open: '(',
      close: ')',
      items: [
        { kind: 'scalar', key: '1' },
        { kind: 'scalar', key: '2' },
      ],
    });
    expect(structureOf('[0,1)')).to.include({ kind: 'tuple', open: '[', close: ')' });
    expect(structureOf('\\{1,2\\}').kind).to.equal('set');
    expect(structureOf('1,2').kind).to.equal('set');
    expect(structureOf('(0,1)\\cup(2,3)').kind).to.equal('set');
    expect(structureOf('(5)')).to.deep.equal({ kind: 'scalar', key: '5' });
    expect(structureOf('(x+1)(x-1)')).to.deep.equal({ kind: 'scalar', key: '(x+1)(x-1)' });
    expect(structureOf('(1,2),(3,4)').kind).to.equal('set');
    const m = structureOf('\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}');
    expect(m.kind).to.equal('matrix');
    expect((m as { rows: readonly (readonly unknown[])[] }).rows.map((r) => r.length)).to.deep.equal([2, 2]);
    expect(structureOf('((1,2)').kind).to.equal('scalar');
  });

  it('constants compare by value within the relative tolerance, without the symbolic engine', async () => {
    expect(await eq('\\frac{1}{2}', '0.5')).to.equal(true);
    expect(await eq('\\sqrt{8}', '2\\sqrt{2}')).to.equal(true);
    expect(await eq('\\pi', '3.1416')).to.equal(true);
    expect(await eq('\\pi', '3.14')).to.equal(false);
    expect(await eq('3.74e+24', '3740000000000000000000000')).to.equal(true);
    expect(await eq('\\frac{1}{3}', '0.333')).to.equal(false);
    expect(await eq('0', '0.00001')).to.equal(false);
    expect(await eq('\\infty', '\\infty')).to.equal(true);
    expect(await eq('-\\infty', '\\infty')).to.equal(false);
    expect(asked).to.deep.equal([]);
  });

  it('intervals and tuples element-wise with bracket types; sets and unions in any order', async () => {
    expect(await eq('(0.5,1]', '(\\frac{1}{2},1]')).to.equal(true);
    expect(await eq('[0,1)', '[0,1]')).to.equal(false);
    expect(await eq('(1,2)', '(2,1)')).to.equal(false);
    expect(await eq('(1,2)', '(1,2,3)')).to.equal(false);
    expect(await eq('\\{1,2\\}', '\\{2,1\\}')).to.equal(true);
    expect(await eq('\\{1,1\\}', '\\{1,2\\}')).to.equal(false);
    expect(await eq('1,2', '2,1')).to.equal(true);
    expect(await eq('(0,1)\\cup(2,3)', '(2,3)\\cup(0,\\frac{2}{2})')).to.equal(true);
    expect(await eq('(1,2)', '1,2')).to.equal(false);
    expect(
      await eq('\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}', '\\begin{pmatrix}1&2\\\\3&\\frac{8}{2}\\end{pmatrix}'),
    ).to.equal(true);
    expect(await eq('\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}', '\\begin{pmatrix}1&2&3&4\\end{pmatrix}')).to.equal(
      false,
    );
  });

  it('expressions with variables: probes reject differences, agreement goes to the symbolic check', async () => {
    expect(await eq('x+1', 'x+2')).to.equal(false);
    expect(await eq('x^{2}', '2x')).to.equal(false);
    expect(await eq('\\sqrt{x^{2}}', 'x')).to.equal(false); // negative probe points tell them apart
    expect(asked).to.deep.equal([]);
    await eq('(x+1)^{2}', 'x^{2}+2x+1');
    expect(asked).to.deep.equal([['(x+1)^{2}', 'x^{2}+2x+1']]);
  });

  it('with probeIdentity, agreement to floating precision at every probe point is identity', async () => {
    const peq = (a: string, b: string) => keysEqual(a, b, probing, cache, symbolic);
    expect(await peq('(x+1)^{2}', 'x^{2}+2x+1')).to.equal(true);
    expect(await peq('\\frac{x^{2}-1}{x-1}', 'x+1')).to.equal(true);
    expect(await peq('(a+b)^{3}', 'a^{3}+3a^{2}b+3ab^{2}+b^{3}')).to.equal(true);
    expect(await peq('\\sin^{2}(x)+\\cos^{2}(x)', '1')).to.equal(true);
    expect(asked).to.deep.equal([]);
    // within the tolerance but not to floating precision: only the engine may say
    await peq('x+1', 'x+1.00001');
    expect(asked).to.deep.equal([['x+1', 'x+1.00001']]);
    // √x is undefined at the negative points: three positive ones still decide
    expect(await peq('\\sqrt{x}\\sqrt{x}', 'x')).to.equal(true);
  });

  it('words compare as text; unreadable keys go to the symbolic check; without it they are unequal', async () => {
    expect(await eq('Monday', 'monday')).to.equal(true);
    expect(await eq('Monday', 'Tuesday')).to.equal(false);
    expect(await eq('yes', 'y')).to.equal(false);
    await eq('\\sum_{k=1}^{3}k', '6');
    expect(asked).to.have.length(1);
    expect(await keysEqual('\\sum_{k=1}^{3}k', '6', strict, cache, undefined)).to.equal(false);
  });

  it('scalarVerdict is undefined exactly when only the symbolic engine can tell', () => {
    expect(scalarVerdict('1', '1.00001', strict, cache)).to.equal(true);
    expect(scalarVerdict('1', '1.001', strict, cache)).to.equal(false);
    expect(scalarVerdict('1', '1.001', { ...strict, tolerance: 1e-2 }, cache)).to.equal(true);
    expect(scalarVerdict('x', 'x+0', strict, cache)).to.equal(undefined);
    expect(scalarVerdict('x', 'x+0', probing, cache)).to.equal(true);
    expect(scalarVerdict('\\sqrt{-1}', '\\sqrt{-1}+0', strict, cache)).to.equal(undefined);
    expect(scalarVerdict('\\sqrt{-x^{2}-1}', '\\sqrt{-x^{2}-1}+0', probing, cache)).to.equal(undefined);
  });

  it('closeRelative', () => {
    expect(closeRelative(1, 1 + 1e-5, 1e-4)).to.equal(true);
    expect(closeRelative(1, 1 + 1e-3, 1e-4)).to.equal(false);
    expect(closeRelative(0, 1e-6, 1e-4)).to.equal(false);
    // Relative at every magnitude: no absolute floor makes tiny numbers equal to zero or to each other.
    expect(closeRelative(0, 1e-13, 1e-4)).to.equal(false);
    expect(closeRelative(1e-13, 2e-13, 1e-4)).to.equal(false);
    expect(closeRelative(6.626e-34, 0, 1e-4)).to.equal(false);
    expect(closeRelative(6.626e-34, 6.6260001e-34, 1e-4)).to.equal(true);
    expect(closeRelative(1e-300, 1.00001e-300, 1e-4)).to.equal(true);
  });
});
