import { expect } from 'chai';
import { movingAverage } from '../../../core/report/runs';
import { lineChart, paletteColor, PALETTE } from '../../../core/report/svg';

describe('core/report/svg and runs (charts of the report)', () => {
  it('movingAverage: trailing mean over the finite values of the last `window` points', () => {
    const pts: [number, number][] = [
      [1, 1],
      [2, 3],
      [3, NaN],
      [4, 5],
      [5, 9],
    ];
    // window 2: [1], [1,3] → 2, [3, NaN] → 3, [NaN, 5] → 5, [5, 9] → 7
    expect(movingAverage(pts, 2)).to.deep.equal([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 5],
      [5, 7],
    ]);
    // window 3: 1, 2, 2, (3+5)/2 = 4, (5+9)/2 = 7
    expect(movingAverage(pts, 3)).to.deep.equal([
      [1, 1],
      [2, 2],
      [3, 2],
      [4, 4],
      [5, 7],
    ]);
    expect(movingAverage(pts, 1).map((p) => p[1])).to.deep.equal([1, 3, NaN, 5, 9]);
    expect(movingAverage([[0, NaN]], 4)[0]![1]).to.be.NaN;
    expect(() => movingAverage(pts, 0)).to.throw(RangeError);
  });

  it('twelve distinct colours; a series keeps the colour it was given', () => {
    expect(new Set(PALETTE).size).to.equal(12);
    expect(paletteColor(12)).to.equal(paletteColor(0));
    const svg = lineChart(
      [
        {
          name: 'a',
          points: [
            [0, 0.5],
            [1, 0.6],
          ],
          color: paletteColor(5),
        },
        {
          name: 'b',
          points: [
            [0, 0.1],
            [1, 0.2],
          ],
        },
      ],
      { title: 't', xLabel: 'x', yLabel: 'y' },
    );
    expect(svg).to.contain(`stroke="${paletteColor(5)}"`);
    expect(svg).to.contain(`stroke="${paletteColor(1)}"`); // b: the colour of its position
  });

  it('a series with no finite value is left out, legend included', () => {
    const svg = lineChart(
      [
        {
          name: 'logged',
          points: [
            [0, 1],
            [1, 2],
          ],
        },
        {
          name: 'never-logged',
          points: [
            [0, NaN],
            [1, NaN],
          ],
        },
        { name: 'empty', points: [] },
      ],
      { title: 't', xLabel: 'x', yLabel: 'y' },
    );
    expect(svg).to.contain('>logged<');
    expect(svg).not.to.contain('never-logged');
    expect(svg).not.to.contain('>empty<');
  });
});
