import { expect } from 'chai';
import type { Equivalence } from '../../../core/contracts/equivalence';
import { equivalenceFacade } from '../../../core/contracts/frozen';
import { plainCopy, buildRewardContext, type GroupToScore } from '../../../core/reward/context';

/** An equivalence with a field a careless source might reach for (it must not reach it). */
function equivalence(): Equivalence & { closed: boolean } {
  return {
    closed: false,
    key: (a: string) => a.trim() || null,
    equal: async (a: string, b: string) => Number(a) === Number(b),
    async close() {
      this.closed = true;
    },
  };
}

function group(): GroupToScore & {
  problem: { id: string; prompt: string; testInputs: string[][]; metadata: { tags: string[] } };
  keys: (string | null)[];
  supervisors: { agent: number; keys: (string | null)[] }[];
  reference: { answer: string; expectedOutputs: string[] };
} {
  return {
    problem: { id: 'p1', prompt: 'What is 2+2?', testInputs: [['1']], metadata: { tags: ['easy'] } },
    prompt: 'Say: what is 2+2?',
    agent: 1,
    agents: 3,
    step: 4,
    completions: [
      { text: 'so 4', length: 3, finishReason: 'stop', entropies: Float32Array.of(0.5, 0.25, 1) },
      { text: 'so 5', length: 3, finishReason: 'length' },
    ],
    answers: ['4', '5'],
    keys: ['4', '5'],
    supervisors: [{ agent: 0, keys: ['4', null] }],
    reference: { answer: '4', expectedOutputs: ['4'] },
  };
}

describe('core/reward/context', () => {
  it('builds the context the contract describes: views of the completions, own keys, supervisors, reference', () => {
    const eq = equivalence();
    const ctx = buildRewardContext({ ...group(), round: 2 }, eq);
    expect(ctx.problem).to.deep.equal(group().problem);
    expect(ctx).to.include({ prompt: 'Say: what is 2+2?', round: 2, agent: 1, agents: 3, step: 4 });
    expect(ctx.completions).to.deep.equal([
      { text: 'so 4', answer: '4', key: '4', length: 3, finishReason: 'stop', entropies: [0.5, 0.25, 1] },
      { text: 'so 5', answer: '5', key: '5', length: 3, finishReason: 'length' },
    ]);
    expect(ctx.own).to.deep.equal({ agent: 1, keys: ['4', '5'] });
    expect(ctx.supervisors).to.deep.equal([{ agent: 0, keys: ['4', null] }]);
    expect(ctx.reference).to.deep.equal({ answer: '4', expectedOutputs: ['4'] });
  });

  it('leaves out round and reference when the group has none', () => {
    const { reference: _r, ...rest } = group();
    const ctx = buildRewardContext(rest, equivalence());
    expect('round' in ctx).to.equal(false);
    expect('reference' in ctx).to.equal(false);
  });

  it("is deep-frozen, and built of copies: the caller's arrays and objects are neither shared nor frozen", () => {
    const g = group();
    const ctx = buildRewardContext(g, equivalence());
    for (const part of [
      ctx,
      ctx.problem,
      ctx.problem.testInputs,
      ctx.problem.testInputs![0],
      ctx.problem.metadata,
      ctx.completions,
      ctx.completions[0],
      ctx.completions[0]!.entropies,
      ctx.own,
      ctx.own.keys,
      ctx.supervisors,
      ctx.supervisors[0],
      ctx.supervisors[0]!.keys,
      ctx.reference,
      ctx.reference!.expectedOutputs,
      ctx.equivalence,
    ])
      expect(Object.isFrozen(part)).to.equal(true);
    expect(() => (ctx.supervisors[0]!.keys as (string | null)[]).splice(0, 1, 'x')).to.throw(TypeError);
    for (const [mine, theirs] of [
      [g.problem, ctx.problem],
      [g.problem.testInputs, ctx.problem.testInputs],
      [g.problem.metadata.tags, ctx.problem.metadata!.tags],
      [g.keys, ctx.own.keys],
      [g.supervisors[0]!.keys, ctx.supervisors[0]!.keys],
      [g.reference, ctx.reference],
    ] as const) {
      expect(theirs).to.not.equal(mine);
      expect(Object.isFrozen(mine)).to.equal(false);
    }
    // What the caller changes afterwards does not reach the context either.
    g.keys[0] = 'changed';
    g.supervisors[0]!.keys[0] = 'changed';
    expect(ctx.own.keys[0]).to.equal('4');
    expect(ctx.supervisors[0]!.keys[0]).to.equal('4');
  });

  it("hands the equivalence as a frozen facade of key and equal: the run's instance is neither frozen nor closable", async () => {
    const eq = equivalence();
    const ctx = buildRewardContext(group(), eq);
    expect(Object.keys(ctx.equivalence).sort()).to.deep.equal(['equal', 'key']);
    expect(ctx.equivalence.key(' 7 ')).to.equal('7');
    expect(await ctx.equivalence.equal('4', '4.0')).to.equal(true);
    expect(() => ((ctx.equivalence as { key: unknown }).key = () => 'x')).to.throw(TypeError);
    expect(Object.isFrozen(eq)).to.equal(false);
    expect(ctx.equivalence.close).to.equal(undefined);
    expect(equivalenceFacade(eq)).to.equal(ctx.equivalence);
  });

  it('plainCopy copies arrays and plain objects all the way down and keeps anything else', () => {
    const bytes = Uint8Array.of(1, 2);
    const value = { a: [1, { b: 'x' }], bytes };
    const copy = plainCopy(value);
    expect(copy).to.deep.equal(value);
    expect(copy.a).to.not.equal(value.a);
    expect(copy.a[1]).to.not.equal(value.a[1]);
    expect(copy.bytes).to.equal(bytes);
  });
});
