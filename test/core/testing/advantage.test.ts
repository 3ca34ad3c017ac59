import { expect } from 'chai';
import type { AdvantageEstimator } from '../../../core/contracts/advantage-estimator';
import { definePlugin } from '../../../core/registry/define';
import { advantageChecks, rewardBatches } from '../../../core/testing';
import { fails } from './helpers';

const estimator = (name: string, create: () => AdvantageEstimator) =>
  definePlugin({
    manifest: {
      name,
      kind: 'advantage',
      description: 'test advantage',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create,
  });

describe('core/testing/advantage (the advantage suite catches broken estimators)', () => {
  it('batches include an empty batch, an empty group and single samples', () => {
    const b = rewardBatches();
    expect(b[0]).to.deep.equal([]);
    expect(b[1]).to.deep.equal([[]]);
    expect(b.some((x) => x.some((g) => g.length === 1))).to.equal(true);
  });

  it('raw rewards as advantages (nonzero for a zero-spread group) are caught', async () => {
    await fails(
      advantageChecks(estimator('test:raw', () => ({ estimate: (g) => g.map((x) => [...x]) }))),
      'zero advantage',
      /should be 0/,
    );
  });

  it('division by a zero std (NaN) is caught', async () => {
    const naive = estimator('test:naive', () => ({
      estimate: (groups) =>
        groups.map((g) => {
          const m = g.reduce((a, b) => a + b, 0) / g.length;
          const s = Math.sqrt(g.reduce((a, b) => a + (b - m) ** 2, 0) / g.length);
          return g.map((r) => (r - m) / s);
        }),
    }));
    await fails(advantageChecks(naive), 'one finite advantage', /finite number/);
  });

  it('dropping empty groups, and writing into the input, are caught', async () => {
    await fails(
      advantageChecks(
        estimator('test:drop', () => ({ estimate: (g) => g.filter((x) => x.length > 0).map((x) => x.map(() => 0)) })),
      ),
      'one finite advantage',
      /one group out per group in/,
    );
    const inPlace = estimator('test:inplace', () => ({
      estimate: (groups) =>
        groups.map((g) => {
          (g as number[]).fill(0);
          return [...g];
        }),
    }));
    await fails(advantageChecks(inPlace), 'one finite advantage', /read.only|Cannot assign|object is not extensible/);
  });
});
