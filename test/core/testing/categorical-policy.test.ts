import { expect } from 'chai';
import type { FromSchema } from 'json-schema-to-ts';
import * as fs from 'node:fs';
import type { Completion } from '../../../core/contracts/completion';
import type { UpdateBatch } from '../../../core/contracts/policy';
import { isCorlError } from '../../../core/errors';
import { grpoLoss } from '../../../core/grpo/loss';
import {
  CategoricalPolicy,
  categoricalPolicy,
  createPlugin,
  nucleus,
  temperedSoftmax,
  type CategoricalPolicyOptions,
} from '../../../core/testing';
import { CATEGORICAL_OPTIONS_SCHEMA } from '../../../core/testing/categorical-policy';
import { tempDir } from '../../fixtures/configs';

/** true when each of A and B is assignable to the other. */
type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const opts = (o: Partial<CategoricalPolicyOptions> = {}): CategoricalPolicyOptions => ({
  answers: ['a', 'b'],
  format: 'ans {answer}!',
  learningRate: 0.5,
  initScale: 0,
  prefer: {},
  preferStrength: 2,
  family: 'f',
  ...o,
});

describe('core/testing/categorical-policy (testing:categorical)', () => {
  it('CategoricalPolicyOptions is the type of its schema (checked when this file compiles)', () => {
    // Written out so corl/testing's declarations need no json-schema-to-ts; this fails to build on drift.
    const same: SameShape<CategoricalPolicyOptions, FromSchema<typeof CATEGORICAL_OPTIONS_SCHEMA>> = true;
    expect(same).to.equal(true);
  });

  it('tempered softmax and nucleus by hand', () => {
    const p = temperedSoftmax([0, Math.log(2)], 1);
    expect(p[0]).to.be.closeTo(1 / 3, 1e-12);
    expect(temperedSoftmax([0, Math.log(4)], 2)[1]).to.be.closeTo(2 / 3, 1e-12); // (4^(1/2)) / (1 + 2)
    expect(temperedSoftmax([0, Math.log(2)], 0)).to.deep.equal(p); // T = 0 is read at T = 1
    expect(nucleus([0.5, 0.3, 0.2], 0.7)).to.deep.equal([0, 1]);
    expect(nucleus([0.2, 0.3, 0.5], 0.5)).to.deep.equal([2]);
    expect(nucleus([0.2, 0.3, 0.5], 1)).to.deep.equal([0, 1, 2]);
  });

  it('samples with the formatted text, the tempered log-probability and token statistics', async () => {
    const pol = new CategoricalPolicy(opts({ answers: ['1', '2', '3', '4'] }), 3);
    const [[c]] = (await pol.sample([{ prompt: 'q' }], {
      n: 1,
      temperature: 1,
      topP: 1,
      maxTokens: 4,
      seed: 1,
      tokenStats: true,
    })) as [[Completion]];
    expect(c!.text).to.match(/^ans [1-4]!$/);
    expect(c!.logprobs[0]).to.be.closeTo(Math.log(1 / 4), 1e-12); // initScale 0: uniform
    expect(c!.entropies![0]).to.be.closeTo(Math.log(4), 1e-12);
    expect(c!.meanLogprobs![0]).to.be.closeTo(Math.log(1 / 4), 1e-12);
  });

  it('sampling frequencies follow the softmax, and topP removes the tail', async () => {
    const pol = new CategoricalPolicy(
      opts({ answers: ['x', 'y', 'z'], prefer: { q: 'z' }, preferStrength: Math.log(2) }),
      0,
    );
    const [group] = await pol.sample([{ prompt: 'q' }], { n: 4000, temperature: 1, topP: 1, maxTokens: 1, seed: 9 });
    const share = (i: number) => group!.filter((c) => c.tokenIds[0] === i).length / 4000;
    expect(share(2)).to.be.closeTo(0.5, 0.03); // logits [0, 0, ln 2] → [1/4, 1/4, 1/2]
    expect(share(0)).to.be.closeTo(0.25, 0.03);
    const [nuc] = await pol.sample([{ prompt: 'q' }], { n: 200, temperature: 1, topP: 0.5, maxTokens: 1, seed: 9 });
    expect(new Set(nuc!.map((c) => c.tokenIds[0]))).to.deep.equal(new Set([2]));
  });

  it('one on-policy update moves the logits by lr·A·(onehot − p)/T (hand-computed)', async () => {
    const pol = new CategoricalPolicy(opts(), 0);
    const [[c]] = (await pol.sample([{ prompt: 'q' }], { n: 1, temperature: 1, topP: 1, maxTokens: 1, seed: 2 })) as [
      [Completion],
    ];
    const idx = c!.tokenIds[0]!;
    const batch: UpdateBatch = {
      samples: [{ prompt: 'q', completion: c!, advantage: 1 }],
      loss: { type: 'bnpo', clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: 1 },
      temperature: 1,
      step: 0,
      totalSteps: 1,
    };
    const r = await pol.update(batch);
    const z = pol.logitsOf('q');
    expect(z[idx]).to.be.closeTo(0.25, 1e-12);
    expect(z[1 - idx]).to.be.closeTo(-0.25, 1e-12);
    expect(r.metrics['loss/policy']).to.be.closeTo(-1, 1e-12); // −ρA with ρ = 1
    expect(r.metrics['optim/grad_norm']).to.be.closeTo(Math.SQRT1_2, 1e-12);
  });

  it('the update is a gradient step on the GRPO loss (finite differences, clipping and KL active)', async () => {
    const o = opts({ answers: ['a', 'b', 'c'], initScale: 1, learningRate: 1e-3 });
    const pol = new CategoricalPolicy(o, 4);
    const T = 0.7;
    const z0 = pol.logitsOf('q').slice();
    const zRef = pol.initialLogits('q');
    const mk = (i: number, old: number) => ({
      text: '',
      tokenIds: [i],
      logprobs: [old],
      finishReason: 'stop' as const,
    });
    const samples = [
      { prompt: 'q', completion: mk(0, -2.5), advantage: 1.2 },
      { prompt: 'q', completion: mk(1, -0.2), advantage: -0.7 },
      { prompt: 'q', completion: mk(2, -1.1), advantage: 0.4 },
    ];
    const loss = { type: 'grpo' as const, clipLow: 0.2, clipHigh: 0.28, beta: 0.05, maxCompletionLength: 1 };
    const f = (z: number[]): number => {
      const lp = temperedSoftmax(z, T).map(Math.log);
      const ref = temperedSoftmax(zRef, T).map(Math.log);
      return grpoLoss(
        {
          logprobs: samples.map((s) => [lp[s.completion.tokenIds[0]!]!]),
          oldLogprobs: samples.map((s) => [s.completion.logprobs[0]!]),
          refLogprobs: samples.map((s) => [ref[s.completion.tokenIds[0]!]!]),
          advantages: samples.map((s) => s.advantage),
        },
        loss,
      ).loss;
    };
    const h = 1e-6;
    const numeric = z0.map((_, j) => {
      const up = z0.slice();
      const dn = z0.slice();
      up[j]! += h;
      dn[j]! -= h;
      return (f(up) - f(dn)) / (2 * h);
    });
    const r = await pol.update({ samples, loss, temperature: T, step: 0, totalSteps: 1 });
    const z1 = pol.logitsOf('q');
    z1.forEach((v, j) => expect((z0[j]! - v) / o.learningRate).to.be.closeTo(numeric[j]!, 1e-6));
    expect(r.metrics['loss/clip_fraction']).to.be.greaterThan(0); // sample 0's ratio is far above 1 + ε_high
    expect(r.metrics['loss/kl']).to.equal(0); // the reference is the initial policy and nothing moved yet
  });

  it('save → load is exact; a checkpoint over other answers is CORL_ERR_POLICY_CHECKPOINT', async () => {
    const tmp = tempDir('corl-categorical-');
    try {
      const a = await createPlugin(categoricalPolicy, { initScale: 1 }, { seed: 7 });
      const reqs = [{ prompt: 'q' }, { prompt: 'r' }];
      const s = await a.sample(reqs, { n: 4, temperature: 1, topP: 1, maxTokens: 1, seed: 1 });
      await a.update({
        samples: s.flatMap((g, i) =>
          g.map((c, k) => ({ prompt: reqs[i]!.prompt, completion: c, advantage: k === 0 ? 1 : -1 / 3 })),
        ),
        loss: { type: 'bnpo', clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: 1 },
        temperature: 1,
        step: 0,
        totalSteps: 1,
      });
      await a.save(tmp.dir);
      const b = await createPlugin(categoricalPolicy, { initScale: 1 }, { seed: 99 });
      await b.load(tmp.dir);
      const probe = { n: 16, temperature: 1, topP: 1, maxTokens: 1, seed: 5 };
      expect(await b.sample(reqs, probe)).to.deep.equal(await a.sample(reqs, probe));
      const other = await createPlugin(categoricalPolicy, { answers: ['x'] });
      try {
        await other.load(tmp.dir);
        expect.fail('should throw');
      } catch (e) {
        expect(isCorlError(e, 'CORL_ERR_POLICY_CHECKPOINT'), String(e)).to.equal(true);
      }
      fs.writeFileSync(
        `${tmp.dir}/categorical.json`,
        '{"format": "corl-testing-categorical", "answers": ["1","2","3","4"], "logits": [["q", [1, "x"]]]}',
      );
      try {
        await b.load(tmp.dir);
        expect.fail('should throw');
      } catch (e) {
        expect(isCorlError(e, 'CORL_ERR_POLICY_CHECKPOINT'), String(e)).to.equal(true);
      }
    } finally {
      tmp.cleanup();
    }
  });
});
