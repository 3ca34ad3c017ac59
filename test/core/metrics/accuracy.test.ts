import { expect } from 'chai';
import { passAt1, sampleAccuracy } from '../../../core/metrics/accuracy';
import { passOf } from '../../../core/report/eval-rows';

describe('core/metrics/accuracy (the one pass@1 rule)', () => {
  it('one problem: the share of right samples; none: NaN', () => {
    expect(sampleAccuracy([true, false, false, true])).to.equal(0.5);
    expect(sampleAccuracy([])).to.be.NaN;
  });

  it('over problems: the mean of the shares, a problem without samples skipped, 0 for none', () => {
    // mean(2/4, 1/4, 3/3) = (0.5 + 0.25 + 1) / 3
    const rows = [
      { correct: [true, true, false, false] },
      { correct: [false, true, false, false] },
      { correct: [true, true, true] },
    ];
    expect(passAt1(rows)).to.equal((0.5 + 0.25 + 1) / 3);
    expect(passAt1([...rows, { correct: [] }])).to.equal((0.5 + 0.25 + 1) / 3);
    expect(passAt1([])).to.equal(0);
  });

  it('the report reads a row’s pass by the same rule', () => {
    expect(passOf({ agent: 0, correct: [true, false, true, true] })).to.equal(0.75);
    expect(passOf({ agent: 0, correct: [] })).to.be.NaN;
  });
});
