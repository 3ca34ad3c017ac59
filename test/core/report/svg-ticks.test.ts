// ticks() of core/report/svg.ts: the axis values of every report chart.
import { expect } from 'chai';
import { ticks } from '../../../core/report/svg';

describe('core/report/svg ticks (axis values)', () => {
  it('round steps of 1, 2, 2.5 or 5 × 10^k covering the range', () => {
    expect(ticks(0, 1)).to.deep.equal([0, 0.2, 0.4, 0.6, 0.8, 1]); // raw step 0.2
    expect(ticks(-0.37, 2.1)).to.deep.equal([0, 0.5, 1, 1.5, 2]); // raw 0.494 → 0.5
    expect(ticks(5, 5)).to.deep.equal([5]);
  });

  it('a range below the floating-point spacing at its ends ends (one point of a one-step run)', () => {
    // 0.30000000000000004 − 0.3 is one ulp: the step 1e-17 is below it, so a sum of steps never moves.
    const t = ticks(0.3, 0.30000000000000004);
    expect(t.length).to.be.within(1, 6);
    for (const v of t) expect(v).to.be.closeTo(0.3, 1e-15);
    expect(ticks(1e6, 1e6 + 1e-9).length).to.be.within(1, 6);
  });
});
