import { expect } from 'chai';
import { aggregationWeights, grpoLoss } from '../../../../core/grpo/loss';
import { HostTensor } from '../../../../core/tensor/host';
import { readModel } from '../../../../core/tensor/onnx/read';
import { emitOnnx } from '../../../../core/tensor/onnx/emit';
import { evaluate } from '../../../../core/tensor/reference';
import { compile, GraphSession } from '../../../../core/tensor/session';
import { Rng } from '../../../../core/util/rng';
import { initParams, paramSpecs, type Architecture } from '../../../../plugins/policies/transformer/architecture';
import {
  buildDecodeGraph,
  buildInferenceGraph,
  buildLogprobGraph,
  buildPrefillGraph,
  buildStepGraph,
} from '../../../../plugins/policies/transformer/graphs';

const families: [string, Architecture][] = [
  [
    'layernorm, gelu, learned positions, untied head',
    {
      vocab: 5,
      dModel: 8,
      layers: 2,
      heads: 2,
      context: 8,
      mlpRatio: 2,
      norm: 'layernorm',
      activation: 'gelu',
      positions: 'learned',
      tiedEmbeddings: false,
      bias: true,
      normEps: 1e-5,
    },
  ],
  [
    'rmsnorm, relu, sinusoidal positions, tied head, no biases',
    {
      vocab: 5,
      dModel: 8,
      layers: 1,
      heads: 4,
      context: 8,
      mlpRatio: 3,
      norm: 'rmsnorm',
      activation: 'relu',
      positions: 'sinusoidal',
      tiedEmbeddings: true,
      bias: false,
      normEps: 1e-5,
    },
  ],
];

/** Two sequences of 4 inputs: token ids, next-token targets, weights on the last three targets of row 0 and two of row 1. */
function batch() {
  const ids = [0, 2, 3, 4, 0, 1, 4, 2];
  const targets = [2, 3, 4, 0, 1, 4, 2, 3];
  const mask = [0, 1, 1, 1, 0, 0, 1, 1];
  return { ids, targets, mask, B: 2, T: 4 };
}

function hostParams(a: Architecture, seed: number, scale = 10): Record<string, HostTensor> {
  // Larger than the 0.02 initialization, so that every path carries a visible gradient.
  const specs = paramSpecs(a);
  const init = initParams(a, seed);
  return Object.fromEntries(
    specs.map((s, i) => [
      s.name,
      HostTensor.float(
        s.shape,
        Array.from(init[i]!, (v) => (s.init === 'normal' ? v * scale : v + (new Rng(i).next() - 0.5) * 0.2)),
      ),
    ]),
  );
}

describe('plugins/policies/transformer/graphs', () => {
  for (const [name, a] of families) {
    describe(name, () => {
      const specs = paramSpecs(a);

      it('GRPO + KL step: weight gradients match central differences and the loss matches core/grpo', () => {
        const { ids, targets, mask, B, T } = batch();
        const params = hostParams(a, 3);
        const built = buildStepGraph(a, specs, { objective: 'grpo-kl', gradClip: 0 });
        const g = built.graph;
        const out = Object.fromEntries(built.outputs);
        const lengths = [3, 2];
        const w = aggregationWeights(lengths, 'grpo', 4);
        const rng = new Rng(5);
        const weights = mask.map((m, i) => (m ? w[i < T ? 0 : 1]! : 0));
        const baseFeeds = {
          ...params,
          ids: HostTensor.int([B, T], ids),
          targets: HostTensor.int([B, T], targets),
          inv_temperature: HostTensor.float([], [1 / 0.7]),
        };
        const lpGraph = buildLogprobGraph(a, specs);
        const lp = evaluate(lpGraph.graph, baseFeeds, [lpGraph.outputs[0]![1]])[0]!.toArray();
        const old = lp.map((x) => x + (rng.next() - 0.5) * 0.6);
        const ref = lp.map((x) => x + (rng.next() - 0.5) * 0.4);
        const feeds = {
          ...baseFeeds,
          weights: HostTensor.float([B, T], weights),
          old_logprobs: HostTensor.float([B, T], old),
          advantages: HostTensor.float([B, 1], [0.9, -1.4]),
          ratio_low: HostTensor.float([], [0.8]),
          ratio_high: HostTensor.float([], [1.25]),
          ref_logprobs: HostTensor.float([B, T], ref),
          beta: HostTensor.float([], [0.2]),
        };
        const names = specs.map((s) => s.name);
        const values = evaluate(g, feeds, [out.loss!, ...names.map((n) => out[`grad.${n}`]!)]);
        const rows = (v: number[]) => [v.slice(1, 4), v.slice(T + 2, T + 4)];
        const want = grpoLoss(
          { logprobs: rows(lp), oldLogprobs: rows(old), refLogprobs: rows(ref), advantages: [0.9, -1.4] },
          { type: 'grpo', clipLow: 0.2, clipHigh: 0.25, beta: 0.2, maxCompletionLength: 4 },
        );
        expect(values[0]!.at(0)).to.be.closeTo(want.loss, 1e-6);
        const h = 1e-6;
        const lossAt = (n: string, i: number, d: number) => {
          const p = Float64Array.from(params[n]!.data as Float64Array);
          p[i]! += d;
          return evaluate(g, { ...feeds, [n]: new HostTensor('float32', params[n]!.shape, p) }, [out.loss!])[0]!.at(0);
        };
        let nonzero = 0;
        names.forEach((n, k) => {
          const grad = values[k + 1]!;
          const size = grad.size;
          for (const i of [0, Math.floor(size / 2), size - 1]) {
            const fd = (lossAt(n, i, h) - lossAt(n, i, -h)) / (2 * h);
            expect(
              Math.abs(grad.at(i) - fd),
              `∂loss/∂${n}[${i}]: autodiff ${grad.at(i)}, finite difference ${fd}`,
            ).to.be.at.most(1e-5 * (1 + Math.abs(fd)));
            if (Math.abs(fd) > 1e-6) nonzero++;
          }
        });
        expect(nonzero).to.be.greaterThan(names.length);
      });

      it('cross-entropy step: gradients match central differences', () => {
        const { ids, targets, mask, B, T } = batch();
        const params = hostParams(a, 4);
        const built = buildStepGraph(a, specs, { objective: 'ce', gradClip: 0 });
        const out = Object.fromEntries(built.outputs);
        const feeds = {
          ...params,
          ids: HostTensor.int([B, T], ids),
          targets: HostTensor.int([B, T], targets),
          inv_temperature: HostTensor.float([], [1]),
          weights: HostTensor.float(
            [B, T],
            mask.map((m) => m / 5),
          ),
        };
        const n = specs[specs.length - 1]!.name;
        const [loss, grad] = evaluate(built.graph, feeds, [out.loss!, out[`grad.${n}`]!]);
        const lp = evaluate(built.graph, feeds, [out.logprobs!])[0]!.toArray();
        expect(loss!.at(0)).to.be.closeTo(-lp.reduce((s, x, i) => s + (x * mask[i]!) / 5, 0), 1e-9);
        const h = 1e-6;
        for (const i of [0, grad!.size - 1]) {
          const at = (d: number) => {
            const p = Float64Array.from(params[n]!.data as Float64Array);
            p[i]! += d;
            return evaluate(built.graph, { ...feeds, [n]: new HostTensor('float32', params[n]!.shape, p) }, [
              out.loss!,
            ])[0]!.at(0);
          };
          const fd = (at(h) - at(-h)) / (2 * h);
          expect(grad!.at(i)).to.be.closeTo(fd, 1e-5 * (1 + Math.abs(fd)));
        }
      });

      it("prefill + KV-cached decoding give the full forward pass's logits (onnxruntime)", async () => {
        const init = initParams(a, 9).map((p) => p.map((x) => x * 20));
        const pfeeds = Object.fromEntries(specs.map((s, i) => [s.name, { data: init[i]!, dims: s.shape }]));
        const seq = [0, 3, 1, 4, 2, 2, 3];
        const P = 3;
        const lpb = buildPrefillGraph(a, specs);
        const db = buildDecodeGraph(a, specs);
        const ib = buildInferenceGraph(a, specs);
        const [prefill, decode, full] = await Promise.all(
          [lpb, db, ib].map((b) => GraphSession.create(compile(b.graph, { outputs: b.outputs }))),
        );
        try {
          const fullLogits = (
            await full!.run({
              ...pfeeds,
              input_ids: { data: BigInt64Array.from(seq.map(BigInt)), dims: [1, seq.length] },
            })
          ).logits!;
          const V = a.vocab;
          const H = a.heads;
          const dh = a.dModel / H;
          const pre = await prefill!.run({ ...pfeeds, ids: { data: Int32Array.from(seq.slice(0, P)), dims: [1, P] } });
          for (let p = 0; p < P; p++)
            for (let v = 0; v < V; v++) expect(pre.logits!.at(p * V + v)).to.be.closeTo(fullLogits.at(p * V + v), 1e-4);
          const S = seq.length;
          const cache = Array.from({ length: a.layers }, (_, l) =>
            ['k', 'v'].map((kv) => {
              const c = new Float32Array(H * S * dh);
              const src = pre[`${kv}${l}`]!.data as Float32Array;
              for (let h = 0; h < H; h++) c.set(src.subarray(h * P * dh, (h + 1) * P * dh), h * S * dh);
              return c;
            }),
          );
          for (let p = P; p < seq.length; p++) {
            const bias = new Float32Array(S).fill(-1e9).fill(0, 0, p);
            const feeds: Record<string, { data: Float32Array | Int32Array; dims: number[] }> = {
              ...pfeeds,
              ids: { data: Int32Array.of(seq[p]!), dims: [1, 1] },
              positions: { data: Int32Array.of(p), dims: [1, 1] },
              cache_bias: { data: bias, dims: [1, 1, 1, S] },
            };
            cache.forEach(([k, v], l) => {
              feeds[`cache_k${l}`] = { data: k!, dims: [1, H, S, dh] };
              feeds[`cache_v${l}`] = { data: v!, dims: [1, H, S, dh] };
            });
            const r = await decode!.run(feeds);
            for (let v = 0; v < V; v++)
              expect(r.logits!.at(v), `position ${p} token ${v}`).to.be.closeTo(fullLogits.at(p * V + v), 1e-4);
            cache.forEach(([k, v], l) => {
              for (let h = 0; h < H; h++) {
                k!.set((r[`k${l}`]!.data as Float32Array).subarray(h * dh, (h + 1) * dh), (h * S + p) * dh);
                v!.set((r[`v${l}`]!.data as Float32Array).subarray(h * dh, (h + 1) * dh), (h * S + p) * dh);
              }
            });
          }
        } finally {
          for (const s of [prefill, decode, full]) await s!.close();
        }
      });

      it('the inference model is standard ONNX (no contrib operators) and agrees with the training graph', async () => {
        const init = initParams(a, 2).map((p) => p.map((x) => x * 20));
        const ib = buildInferenceGraph(a, specs);
        const model = emitOnnx(ib.graph, {
          outputs: ib.outputs,
          initializers: new Map(ib.params.map((t, i) => [t, init[i]!])),
        });
        const read = readModel(model.bytes);
        expect(Object.keys(read.opsets)).to.deep.equal(['']);
        expect(read.inputs).to.deep.equal(['input_ids']);
        const lb = buildLogprobGraph(a, specs);
        const [inf, lps] = await Promise.all([
          GraphSession.create({
            name: 'inference',
            bytes: model.bytes,
            inputs: [{ name: 'input_ids', dtype: 'int64', shape: ['batch', 'sequence'] }],
            outputs: ['logits'],
            nodeCount: model.nodeCount,
          }),
          GraphSession.create(compile(lb.graph, { outputs: lb.outputs })),
        ]);
        try {
          const ids = [0, 1, 2, 3, 4, 0];
          const logits = (await inf.run({ input_ids: { data: BigInt64Array.from(ids.map(BigInt)), dims: [1, 6] } }))
            .logits!;
          const targets = [1, 2, 3, 4, 0, 1];
          const lp = (
            await lps.run({
              ...Object.fromEntries(specs.map((s, i) => [s.name, { data: init[i]!, dims: s.shape }])),
              ids: { data: Int32Array.from(ids), dims: [1, 6] },
              targets: { data: Int32Array.from(targets), dims: [1, 6] },
              inv_temperature: { data: Float32Array.of(1), dims: [] },
            })
          ).logprobs!;
          const V = a.vocab;
          targets.forEach((t, p) => {
            const row = Array.from({ length: V }, (_, v) => logits.at(p * V + v));
            const mx = Math.max(...row);
            const lse = mx + Math.log(row.reduce((s, x) => s + Math.exp(x - mx), 0));
            expect(lp.at(p)).to.be.closeTo(row[t]! - lse, 1e-4);
          });
        } finally {
          await inf.close();
          await lps.close();
        }
      });
    });
  }
});
