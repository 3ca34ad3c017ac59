import { expect } from 'chai';
import { registrar } from '../../../../core/registry/container';
import type { SamplingOptions, TrainingSample } from '../../../../core/contracts/policy';
import { PluginRegistry } from '../../../../core/registry/registry';
import { instantiate } from '../../../../core/registry/instantiate';
import { register } from '../../../../plugins/policies';
import { compile, GraphSession } from '../../../../core/tensor/session';
import { buildLogprobGraph } from '../../../../plugins/policies/transformer/graphs';
import { tinyPolicy, transformerOptions } from '../../../fixtures/transformer';

const sampling: SamplingOptions = { n: 3, temperature: 1, topP: 1, maxTokens: 8, seed: 42 };

function flat(ws: Float32Array[]): number[] {
  return ws.flatMap((w) => Array.from(w));
}

describe('plugins/policies/transformer/policy (corl:transformer)', function () {
  this.timeout(120000);

  it('registers like any plugin and builds from defaulted options', async () => {
    const registry = new PluginRegistry();
    await register(registrar(registry, { builtin: true }).api);
    const def = registry.get('policy', 'corl:transformer');
    expect(def.manifest.kind).to.equal('policy');
    const p = await instantiate(
      'policy',
      {
        use: 'corl:transformer',
        options: transformerOptions({
          dModel: 16,
          layers: 1,
          heads: 2,
          context: 16,
          worker: false,
        }) as unknown as Record<string, unknown>,
      },
      { registry, seed: 5, baseDir: '.' },
    );
    const d = p.describe();
    expect(d.kind).to.equal('corl:transformer');
    expect(d.canTrain).to.equal(true);
    expect(d.parameters).to.be.greaterThan(1000);
    await p.close!();
  });

  it('samples aligned groups; deterministic for a seed, different across seeds', async () => {
    const p = tinyPolicy();
    try {
      const reqs = [{ prompt: '1+2=' }, { prompt: '3+4=' }];
      const a = await p.sample(reqs, sampling);
      const b = await p.sample(reqs, sampling);
      const c = await p.sample(reqs, { ...sampling, seed: 43 });
      expect(a).to.have.length(2);
      for (const g of a) {
        expect(g).to.have.length(3);
        for (const x of g) {
          expect(x.tokenIds.length).to.be.within(1, 8);
          expect(x.logprobs).to.have.length(x.tokenIds.length);
          expect(x.logprobs.every((l) => Number.isFinite(l) && l <= 0)).to.equal(true);
          expect(
            x.finishReason === 'length' ? x.tokenIds.length === 8 : x.tokenIds[x.tokenIds.length - 1] === 0,
          ).to.equal(true);
          expect(x.text).to.equal(p.tokenizer.decode(x.tokenIds));
        }
      }
      expect(a).to.deep.equal(b);
      expect(JSON.stringify(a)).to.not.equal(JSON.stringify(c));
    } finally {
      await p.close();
    }
  });

  it('greedy, overrides, stop strings and token statistics', async () => {
    const p = tinyPolicy();
    try {
      const [greedy] = await p.sample([{ prompt: '5+5=', overrides: { temperature: 0 } }], {
        ...sampling,
        tokenStats: true,
      });
      expect(new Set(greedy!.map((c) => c.text)).size).to.equal(1);
      for (const c of greedy!) {
        expect(c.entropies).to.have.length(c.tokenIds.length);
        expect(c.meanLogprobs).to.have.length(c.tokenIds.length);
        expect(c.entropies!.every((h) => h >= 0 && h <= Math.log(p.tokenizer.size) + 1e-9)).to.equal(true);
      }
      const [long] = await p.sample([{ prompt: '1=' }], { ...sampling, n: 4, maxTokens: 20, temperature: 1.5 });
      const stop = long!
        .map((c) => c.text)
        .find((t) => t.length >= 3)!
        .slice(1, 2);
      const [stopped] = await p.sample([{ prompt: '1=' }], {
        ...sampling,
        n: 4,
        maxTokens: 20,
        temperature: 1.5,
        stop: [stop],
      });
      stopped!.forEach((c, k) => {
        expect(c.text.includes(stop)).to.equal(false);
        if (long![k]!.text.includes(stop)) {
          expect(c.finishReason).to.equal('stop');
          expect(c.text).to.equal(long![k]!.text.slice(0, long![k]!.text.indexOf(stop)));
        }
      });
    } finally {
      await p.close();
    }
  });

  it('GRPO updates raise the log-probability of advantaged completions', async () => {
    const p = tinyPolicy({ optimizer: { lr: 1e-2 } });
    try {
      const [g] = await p.sample([{ prompt: '2+2=' }], { ...sampling, n: 4 });
      const samples: TrainingSample[] = g!.map((c, k) => ({
        prompt: '2+2=',
        completion: c,
        advantage: k < 2 ? 1 : -1,
      }));
      const before = flat(p.weights());
      let last;
      for (let step = 0; step < 5; step++) {
        last = await p.update({
          samples,
          loss: { type: 'grpo', clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: 8 },
          temperature: 1,
          step,
          totalSteps: 5,
        });
      }
      expect(flat(p.weights())).to.not.deep.equal(before);
      expect(last!.metrics['optim/steps']).to.equal(1);
      expect(last!.metrics['loss/ratio_mean']).to.be.greaterThan(0);
      // Score the same completions again: the advantaged ones became likelier.
      const lp = await scoreCompletions(p, samples);
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      samples.forEach((s, k) => {
        const old = sum([...s.completion.logprobs]);
        if (k < 2) expect(lp[k]!).to.be.greaterThan(old);
        else expect(lp[k]!).to.be.lessThan(old);
      });
    } finally {
      await p.close();
    }
  });

  it('gradient accumulation over micro-batches equals one fused step; mini-batches take one optimizer step each', async () => {
    const mk = (o: Record<string, unknown>) => tinyPolicy({ optimizer: { lr: 1e-2, gradClip: 0.5 }, ...o }, 3);
    const a = mk({});
    const b = mk({ microBatchTokens: 16 });
    const c = mk({ miniBatchSize: 3 });
    try {
      const [g] = await a.sample([{ prompt: '7-3=' }], { ...sampling, n: 6, maxTokens: 10 });
      const samples = g!.map((x, k) => ({ prompt: '7-3=', completion: x, advantage: (k % 3) - 1 }));
      const batch = {
        samples,
        loss: { type: 'dapo' as const, clipLow: 0.2, clipHigh: 0.28, beta: 0.05, maxCompletionLength: 10 },
        temperature: 1,
        step: 0,
        totalSteps: 1,
      };
      const ra = await a.update(batch);
      const rb = await b.update(batch);
      const rc = await c.update(batch);
      expect(rb.metrics['loss/total']).to.be.closeTo(ra.metrics['loss/total']!, 1e-6);
      expect(rb.metrics['optim/grad_norm']).to.be.closeTo(ra.metrics['optim/grad_norm']!, 1e-5);
      const wa = flat(a.weights());
      const wb = flat(b.weights());
      wa.forEach((x, i) => expect(Math.abs(x - wb[i]!)).to.be.lessThan(1e-6));
      expect(rc.metrics['optim/steps']).to.equal(2);
      expect(c.describe().details!.optimizerSteps).to.equal(2);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('data-parallel worker shards give the same samples and the same update as one in-process shard', async () => {
    const local = tinyPolicy({}, 9);
    const workers = tinyPolicy({ worker: true, threads: 2 }, 9);
    try {
      const reqs = [{ prompt: '1+1=' }, { prompt: '2+3=' }, { prompt: '9-4=' }];
      const sl = await local.sample(reqs, sampling);
      const sw = await workers.sample(reqs, sampling);
      expect(sw.map((g) => g.map((c) => c.tokenIds))).to.deep.equal(sl.map((g) => g.map((c) => c.tokenIds)));
      const samples = sl.flatMap((g, i) =>
        g.map((c, k) => ({ prompt: reqs[i]!.prompt, completion: c, advantage: k - 1 })),
      );
      const batch = {
        samples,
        loss: { type: 'bnpo' as const, clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: 8 },
        temperature: 1,
        step: 0,
        totalSteps: 1,
      };
      const rl = await local.update(batch);
      const rw = await workers.update(batch);
      expect(rw.metrics['loss/total']).to.be.closeTo(rl.metrics['loss/total']!, 1e-6);
      const wl = flat(local.weights());
      const ww = flat(workers.weights());
      wl.forEach((x, i) => expect(Math.abs(x - ww[i]!)).to.be.lessThan(1e-6));
    } finally {
      await local.close();
      await workers.close();
    }
  });

  it('reuses its KV-cache buffers: a small call after a large one samples what a fresh model samples', async () => {
    const used = tinyPolicy({}, 4);
    const fresh = tinyPolicy({}, 4);
    try {
      await used.sample([{ prompt: '12+34=' }, { prompt: '5+6=' }, { prompt: '7=' }], {
        ...sampling,
        n: 4,
        maxTokens: 20,
      });
      const small = [{ prompt: '1+2=' }];
      expect(await used.sample(small, sampling)).to.deep.equal(await fresh.sample(small, sampling));
    } finally {
      await used.close();
      await fresh.close();
    }
  });

  it('a minimum length (benchmarks) never ends a completion early; profiles count jobs and graph runs', async () => {
    for (const worker of [false, true]) {
      const p = tinyPolicy({ worker }, 2);
      try {
        await p.profile(true); // in process, the counters are shared with whatever ran before
        const r = await p.sample(
          [{ prompt: '1+2=' }, { prompt: '3=' }],
          { ...sampling, maxTokens: 12 },
          { minTokens: 12 },
        );
        for (const c of r.flat()) {
          expect(c.tokenIds).to.have.length(12);
          expect(c.tokenIds).to.not.include(0);
          expect(c.finishReason).to.equal('length');
        }
        const [prof] = await p.profile(true);
        expect(prof!.jobs.sample!.calls).to.equal(1);
        expect(prof!.sessions.prefill!.calls).to.equal(1);
        expect(prof!.sessions.decode!.calls).to.equal(11);
        for (const t of Object.values(prof!.sessions)) expect(t.ortMs).to.be.within(0, t.totalMs);
        const [after] = await p.profile(false);
        expect(after!.jobs).to.deep.equal({});
        expect(after!.sessions).to.deep.equal({});
      } finally {
        await p.close();
      }
    }
  });

  it('pretraining lowers the cross-entropy of its texts', async () => {
    const p = tinyPolicy({ optimizer: { lr: 3e-3 } });
    try {
      const texts = Array.from({ length: 16 }, (_, i) => `${i % 10}+1=\\boxed{${(i % 10) + 1}}`);
      const promptLengths = texts.map((t) => t.indexOf('=') + 1);
      const first = await p.pretrainStep({ texts, promptLengths, step: 0, totalSteps: 30 });
      let last = first;
      for (let s = 1; s < 30; s++) last = await p.pretrainStep({ texts, promptLengths, step: s, totalSteps: 30 });
      expect(last.metrics['loss/ce']).to.be.lessThan(first.metrics['loss/ce']! * 0.7);
      expect(first.metrics['pretrain/tokens']).to.equal(
        texts.reduce((s, t, i) => s + t.length - promptLengths[i]! + 1, 0),
      );
    } finally {
      await p.close();
    }
  });

  it('refuses foreign tokens, overlong sequences, bad prompt lengths and use after close', async () => {
    const p = tinyPolicy();
    const loss = { type: 'grpo' as const, clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: 8 };
    const bad = (tokenIds: number[]) => ({
      samples: [
        {
          prompt: '1',
          completion: { text: '', tokenIds, logprobs: tokenIds.map(() => -1), finishReason: 'stop' as const },
          advantage: 1,
        },
      ],
      loss,
      temperature: 1,
      step: 0,
      totalSteps: 1,
    });
    await p.update(bad([999])).then(
      () => expect.fail(),
      (e) => expect(String(e)).to.match(/CORL_ERR_POLICY_OUTPUT.*update sample 0.*token ids in \[0, \d+\)/),
    );
    await p.update(bad(new Array(40).fill(2))).then(
      () => expect.fail(),
      (e) => expect(String(e)).to.match(/CORL_ERR_POLICY_OUTPUT.*context of 32 tokens/),
    );
    await p.pretrainStep({ texts: ['abc'], promptLengths: [9], step: 0, totalSteps: 1 }).then(
      () => expect.fail(),
      (e) => expect(String(e)).to.match(/CORL_ERR_TASK_DATA.*prompt length in \[0, 3\]/),
    );
    await p.close();
    await p.sample([{ prompt: '1' }], sampling).then(
      () => expect.fail(),
      (e) => expect(String(e)).to.match(/CORL_ERR_TENSOR_RUNTIME.*closed/),
    );
  });
});

/** Σ log πθ (T = 1) of each sample's completion under the current weights, by the forward-only graph. */
async function scoreCompletions(
  p: ReturnType<typeof tinyPolicy>,
  samples: readonly TrainingSample[],
): Promise<number[]> {
  const b = buildLogprobGraph(p.arch, p.specs);
  const s = await GraphSession.create(compile(b.graph, { outputs: b.outputs }));
  const w = p.weights();
  const out: number[] = [];
  for (const smp of samples) {
    const seq = [...p.encodePrompt(smp.prompt), ...smp.completion.tokenIds];
    const T = seq.length - 1;
    const r = await s.run({
      ...Object.fromEntries(p.specs.map((sp, i) => [sp.name, { data: w[i]!, dims: sp.shape }])),
      ids: { data: Int32Array.from(seq.slice(0, T)), dims: [1, T] },
      targets: { data: Int32Array.from(seq.slice(1)), dims: [1, T] },
      inv_temperature: { data: Float32Array.of(1), dims: [] },
    });
    const lp = r.logprobs!.toArray();
    out.push(lp.slice(T - smp.completion.tokenIds.length).reduce((a, x) => a + x, 0));
  }
  await s.close();
  return out;
}
