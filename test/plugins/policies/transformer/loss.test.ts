import { expect } from 'chai';
import type { LossType } from '../../../../core/contracts/policy';
import { aggregationWeights, grpoLoss } from '../../../../core/grpo/loss';
import { gradients } from '../../../../core/tensor/autodiff';
import { Graph } from '../../../../core/tensor/graph';
import { HostTensor } from '../../../../core/tensor/host';
import { evaluate } from '../../../../core/tensor/reference';
import { compile, GraphSession } from '../../../../core/tensor/session';
import { Rng } from '../../../../core/util/rng';
import { crossEntropy, grpoObjective } from '../../../../plugins/policies/transformer/loss';

/** Three sequences of different lengths (padded to 5), with ties (ρ = 1), clipped and unclipped tokens. */
function inputs(seed: number) {
  const rng = new Rng(seed);
  const lengths = [5, 2, 3];
  const logprobs = lengths.map((L) => Array.from({ length: L }, () => -0.2 - rng.next() * 2));
  const oldLogprobs = logprobs.map((l, i) => l.map((x, t) => (i === 0 && t === 0 ? x : x + (rng.next() - 0.5) * 0.8)));
  const refLogprobs = logprobs.map((l) => l.map((x) => x + (rng.next() - 0.5) * 0.5));
  return { lengths, logprobs, oldLogprobs, refLogprobs, advantages: [1.3, -0.7, 0.4] };
}

function pad(rows: number[][], T: number, fill = 0): number[] {
  return rows.flatMap((r) => [...r, ...new Array(T - r.length).fill(fill)]);
}

function objectiveGraph(kl: boolean) {
  const g = new Graph('grpo-objective');
  const lp = g.input('lp', 'float32', ['B', 'T']);
  const terms = {
    old: g.input('old', 'float32', ['B', 'T']),
    advantages: g.input('adv', 'float32', ['B', 1]),
    weights: g.input('w', 'float32', ['B', 'T']),
    ratioLow: g.input('lo', 'float32', []),
    ratioHigh: g.input('hi', 'float32', []),
    ...(kl ? { ref: g.input('ref', 'float32', ['B', 'T']), beta: g.input('beta', 'float32', []) } : {}),
  };
  const loss = grpoObjective(g, lp, terms);
  const [grad] = gradients(loss, [lp]);
  return { g, loss, grad: grad! };
}

describe("plugins/policies/transformer/loss (the step graph's GRPO term against core/grpo)", () => {
  const T = 5;
  const types: LossType[] = ['grpo', 'bnpo', 'dr_grpo', 'dapo'];
  const clips = [
    { clipLow: 0.2, clipHigh: 0.2 },
    { clipLow: 0.1, clipHigh: 0.28 },
  ];
  // bnpo also with TRL's micro-batches of two sequences ([5, 2] | [3]).
  const variants: [LossType, number | undefined][] = [
    ...types.map((t) => [t, undefined] as [LossType, undefined]),
    ['bnpo', 2],
  ];
  for (const [type, microBatch] of variants) {
    for (const clip of clips) {
      for (const beta of [0, 0.1]) {
        it(`${type}${microBatch ? ` (micro-batches of ${microBatch})` : ''}, clip ${clip.clipLow}/${clip.clipHigh}, beta ${beta}: same loss and ∂loss/∂logπθ (reference and onnxruntime)`, async () => {
          const x = inputs(
            types.indexOf(type) * 10 + clips.indexOf(clip) * 2 + (beta ? 1 : 0) + (microBatch ? 100 : 0),
          );
          const globalTokens = type === 'dapo' ? 17 : undefined; // a larger accumulated batch
          const o = { type, ...clip, beta, maxCompletionLength: 8, globalTokens, microBatch };
          const want = grpoLoss(
            {
              logprobs: x.logprobs,
              oldLogprobs: x.oldLogprobs,
              refLogprobs: beta > 0 ? x.refLogprobs : undefined,
              advantages: x.advantages,
            },
            o,
          );
          const w = aggregationWeights(x.lengths, type, 8, globalTokens, microBatch);
          const weights = x.lengths.map((L, i) => [...new Array(L).fill(w[i]), ...new Array(T - L).fill(0)]).flat();
          const { g, loss, grad } = objectiveGraph(beta > 0);
          const feeds: Record<string, HostTensor> = {
            lp: HostTensor.float([3, T], pad(x.logprobs, T, -1)),
            old: HostTensor.float([3, T], pad(x.oldLogprobs, T, -1)),
            adv: HostTensor.float([3, 1], x.advantages),
            w: HostTensor.float([3, T], weights),
            lo: HostTensor.float([], [1 - clip.clipLow]),
            hi: HostTensor.float([], [1 + clip.clipHigh]),
            ...(beta > 0
              ? { ref: HostTensor.float([3, T], pad(x.refLogprobs, T, -1)), beta: HostTensor.float([], [beta]) }
              : {}),
          };
          const [l, d] = evaluate(g, feeds, [loss, grad]);
          expect(l!.at(0)).to.be.closeTo(want.loss, 1e-6);
          x.lengths.forEach((L, i) => {
            for (let t = 0; t < T; t++)
              expect(d!.at(i * T + t), `seq ${i} token ${t}`).to.be.closeTo(
                t < L ? want.gradLogprobs[i]![t]! : 0,
                1e-6,
              );
          });
          const s = await GraphSession.create(
            compile(g, {
              outputs: [
                ['loss', loss],
                ['grad', grad],
              ],
            }),
          );
          const f32 = Object.fromEntries(
            Object.entries(feeds).map(([k, v]) => [
              k,
              new HostTensor('float32', v.shape, Float32Array.from(v.data as Float64Array)),
            ]),
          );
          const r = await s.run(f32);
          await s.close();
          expect(r.loss!.at(0)).to.be.closeTo(want.loss, 1e-5 * (1 + Math.abs(want.loss)));
          x.lengths.forEach((L, i) => {
            for (let t = 0; t < L; t++) expect(r.grad!.at(i * T + t)).to.be.closeTo(want.gradLogprobs[i]![t]!, 1e-5);
          });
        });
      }
    }
  }

  it('the tie ρ = 1 sends the gradient through the unclipped branch: ∂ℓ/∂logπθ = −Â·w', () => {
    const { g, loss, grad } = objectiveGraph(false);
    const feeds = {
      lp: HostTensor.float([1, 1], [-1]),
      old: HostTensor.float([1, 1], [-1]),
      adv: HostTensor.float([1, 1], [2]),
      w: HostTensor.float([1, 1], [0.5]),
      lo: HostTensor.float([], [0.8]),
      hi: HostTensor.float([], [1.2]),
    };
    const [l, d] = evaluate(g, feeds, [loss, grad]);
    expect(l!.at(0)).to.be.closeTo(-1, 1e-7);
    expect(d!.at(0)).to.be.closeTo(-1, 1e-7);
  });

  it('cross-entropy is −Σ w logp with gradient −w', () => {
    const g = new Graph('ce');
    const lp = g.input('lp', 'float32', ['B', 'T']);
    const w = g.input('w', 'float32', ['B', 'T']);
    const loss = crossEntropy(g, lp, w);
    const [d] = gradients(loss, [lp]);
    const [l, dv] = evaluate(
      g,
      { lp: HostTensor.float([1, 3], [-1, -2, -3]), w: HostTensor.float([1, 3], [0.5, 0.5, 0]) },
      [loss, d!],
    );
    expect(l!.at(0)).to.be.closeTo(1.5, 1e-12);
    expect(dv!.toArray()).to.deep.equal([-0.5, -0.5, -0]);
  });
});
