import { expect } from 'chai';
import { DEFAULT_DESIGN, designFromParts } from '../../../core/report/design';

describe('core/report/design: designFromParts (the design of `corl compare` flags and the API option)', () => {
  it('defaults what is not given, as compare.json records it', () => {
    expect(designFromParts({}, 0)).to.deep.equal(DEFAULT_DESIGN);
    expect(JSON.stringify(designFromParts({ margin: 2 }, 3))).to.equal('{"metric":"final","alpha":0.05,"margin":2}');
  });

  it('copies pairs and against, and makes looks a sequential design from the first seed', () => {
    const pairs = [{ a: 'x', b: 'y', extra: 1 } as { a: string; b: string }];
    const d = designFromParts({ metric: 'change', pairs, alpha: 0.1, effect: 1.5, looks: [2, 4] }, 5);
    expect(d).to.deep.equal({
      metric: 'change',
      pairs: [{ a: 'x', b: 'y' }],
      alpha: 0.1,
      effect: 1.5,
      sequential: { boundary: 'lan-demets-pocock', looks: [2, 4], first: 5, stop: 'all-resolved' },
    });
    expect(d.pairs![0]).to.not.equal(pairs[0]);
    expect(designFromParts({ against: ['x'], looks: [3], boundary: 'fixed' }, 0)).to.deep.equal({
      metric: 'final',
      against: ['x'],
      alpha: 0.05,
      sequential: { boundary: 'fixed', looks: [3], first: 0, stop: 'all-resolved' },
    });
    expect(designFromParts({ boundary: 'fixed' }, 0), 'a boundary without looks is no sequential design').to.deep.equal(
      DEFAULT_DESIGN,
    );
  });
});
