import { expect } from 'chai';
import { auc, calibrationError, fitLogistic } from '../../scripts/verifier';

describe('scripts/verifier (a learned verifier: its fit and its quality)', () => {
  it('AUC is the share of (right, wrong) pairs the score orders correctly, ties counting one half', () => {
    // Pairs: 0.35 > 0.1, 0.35 < 0.4, 0.8 > 0.1, 0.8 > 0.4 → 3 of 4.
    expect(auc([0.1, 0.4, 0.35, 0.8], [false, false, true, true])).to.equal(0.75);
    expect(auc([0.5, 0.5, 0.9], [true, false, true])).to.equal(0.75); // one tie (½) and one win, over 2 pairs
    expect(auc([0.2, 0.3], [true, true])).to.be.NaN;
  });

  it('calibration error: Σ over 10 bins of |Σ score − Σ right|, over n', () => {
    // Bin 0: |0.05 − 0|; bin 1: |0.15 − 1|; bin 9: |1.9 − 1| → (0.05 + 0.85 + 0.9)/4 = 0.45.
    expect(calibrationError([0.05, 0.15, 0.95, 0.95], [false, true, true, false])).to.be.closeTo(0.45, 1e-12);
    expect(calibrationError([1, 0], [true, false])).to.equal(0);
  });

  it('the logistic fit reaches the closed-form maximum likelihood of a binary feature', () => {
    // x = 0: 1 right of 4 → b = logit(1/4) = −ln 3; x = 1: 3 of 4 → w + b = ln 3, so w = 2 ln 3.
    const x = [[0], [0], [0], [0], [1], [1], [1], [1]];
    const y = [true, false, false, false, true, true, true, false];
    const [w, b] = fitLogistic(x, y);
    expect(b).to.be.closeTo(-Math.log(3), 1e-5);
    expect(w).to.be.closeTo(2 * Math.log(3), 1e-5);
    expect(fitLogistic(x, y)).to.deep.equal([w, b]);
  });
});
