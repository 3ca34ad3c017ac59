import { expect } from 'chai';
import { exactEquivalence, groundTruthTripwire, rewardContext } from '../../../core/testing';

describe('core/testing/contexts (reward contexts from answer keys, ground-truth tripwires)', () => {
  it('builds a context as the trainer would: views, own keys, supervisors teacher first', () => {
    const ctx = rewardContext({ keys: ['4', null], supervisors: [['4', '4'], { agent: 0, keys: ['5'] }], agent: 2 });
    expect(ctx.completions.map((c) => [c.key, c.answer, c.finishReason])).to.deep.equal([
      ['4', '4', 'stop'],
      [null, null, 'stop'],
    ]);
    expect(ctx.completions[0]!.text).to.contain('\\boxed{4}');
    expect(ctx.completions[0]!.length).to.equal(ctx.completions[0]!.text.length);
    expect(ctx.own).to.deep.equal({ agent: 2, keys: ['4', null] });
    expect(ctx.supervisors).to.deep.equal([
      { agent: 3, keys: ['4', '4'] },
      { agent: 0, keys: ['5'] },
    ]);
    expect(ctx.agents).to.equal(4);
    expect('reference' in ctx).to.equal(false);
    expect(rewardContext({ keys: ['1'], reference: '1' }).reference).to.deep.equal({ answer: '1' });
  });

  it('adds seeded token statistics of the right length on request', () => {
    const a = rewardContext({ keys: ['4'], tokenStats: true, seed: 3 });
    const b = rewardContext({ keys: ['4'], tokenStats: true, seed: 3 });
    expect(a.completions[0]!.entropies).to.have.length(a.completions[0]!.length);
    expect(a.completions[0]!.meanLogprobs!.every((v) => v < 0)).to.equal(true);
    expect(a.completions).to.deep.equal(b.completions);
  });

  it('exactEquivalence keys trimmed answers and compares them exactly', async () => {
    expect(exactEquivalence.key('  4 ')).to.equal('4');
    expect(exactEquivalence.key('   ')).to.equal(null);
    expect(await exactEquivalence.equal('4', '4.0')).to.equal(false);
  });

  it('the tripwire records every reach for ground truth', async () => {
    const wire = groundTruthTripwire();
    expect(wire.touches).to.deep.equal([]);
    wire.groundTruth.get('p1');
    void wire.groundTruth.size;
    await wire.task.load();
    expect(wire.touches).to.deep.equal(['GroundTruth.get("p1")', 'GroundTruth.size', 'Task.load()']);
  });
});
