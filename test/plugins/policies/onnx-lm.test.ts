import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Completion } from '../../../core/contracts/completion';
import type { SamplingOptions } from '../../../core/contracts/policy';
import { policyChecks } from '../../../core/testing/policy';
import { register } from '../../../plugins/policies';
import { onnxLmPolicy } from '../../../plugins/policies/onnx-lm';
import type { OnnxLmPolicy } from '../../../plugins/policies/onnx-lm/policy';
import { tempDir } from '../../fixtures/configs';
import {
  openTinyLm,
  referenceLogits,
  TINY_PIECES,
  TINY_VOCAB,
  writeTinyLm,
  type TinyLmSpec,
} from '../../fixtures/onnx-lm';
import { failure } from '../../fixtures/errors';

const V = TINY_VOCAB;

/** log softmax(row / T) in float64 (T = 0 means 1, the greedy convention). */
function logSoftmax(logits: Float32Array, offset: number, T: number): number[] {
  const t = T > 0 ? T : 1;
  const x = Array.from(logits.subarray(offset, offset + V), (v) => v / t);
  const m = Math.max(...x);
  const z = Math.log(x.reduce((a, v) => a + Math.exp(v - m), 0)) + m;
  return x.map((v) => v - z);
}

const entropyOf = (lp: readonly number[]) => -lp.reduce((a, l) => a + Math.exp(l) * l, 0);
const meanOf = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const argmax = (xs: readonly number[]) => xs.reduce((best, v, i) => (v > xs[best]! ? i : best), 0);

const opts = (o: Partial<SamplingOptions> = {}): SamplingOptions => ({
  n: 1,
  temperature: 0,
  topP: 1,
  maxTokens: 10,
  seed: 11,
  ...o,
});

/**
 * Check every generated token of `c` against the no-cache reference over prompt + completion:
 * the logprob, entropy and mean logprob of step t are those of log softmax(reference row / T).
 */
async function checkAgainstReference(
  file: string,
  prompt: readonly number[],
  c: Completion,
  T: number,
  spec: TinyLmSpec = {},
): Promise<{ maxDiff: number; argmaxOk: boolean }> {
  const ref = await referenceLogits(file, [...prompt, ...c.tokenIds], spec);
  let maxDiff = 0;
  let argmaxOk = true;
  c.tokenIds.forEach((tok, t) => {
    const lp = logSoftmax(ref, (prompt.length - 1 + t) * V, T);
    maxDiff = Math.max(maxDiff, Math.abs(lp[tok]! - c.logprobs[t]!));
    if (c.entropies) maxDiff = Math.max(maxDiff, Math.abs(entropyOf(lp) - c.entropies[t]!));
    if (c.meanLogprobs) maxDiff = Math.max(maxDiff, Math.abs(meanOf(lp) - c.meanLogprobs[t]!));
    if (argmax(lp) !== tok) argmaxOk = false;
  });
  return { maxDiff, argmaxOk };
}

describe('corl:onnx-lm policy', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  let dir: string;
  let policy: OnnxLmPolicy;
  const file = () => path.join(dir, 'model.onnx');

  before(async () => {
    tmp = tempDir('corl-onnx-lm-');
    dir = writeTinyLm(path.join(tmp.dir, 'tiny'));
    policy = await openTinyLm(dir);
  });
  after(async () => {
    await policy?.close();
    tmp.cleanup();
  });

  it('reads the layout from the session: 2 layers, 2 KV heads of size 8 (GQA, 4 query heads), position_ids, eos 0 from config.json', () => {
    expect(policy.signature).to.include({
      layers: 2,
      kvHeads: 2,
      headDim: 8,
      positionIds: true,
      useCacheBranch: false,
      idType: 'int64',
    });
    const d = policy.describe();
    expect(d).to.include({ kind: 'corl:onnx-lm', family: 'tiny-corl', canTrain: false });
    expect(d.details).to.include({ layers: 2, maxContext: 64 });
    expect(d.details!.eosTokenIds).to.deep.equal([0]);
  });

  it('tokenizer round trip through tokenizer.json: merges apply, decode inverts encode', () => {
    const text = 'abc 12+3=? xyz';
    const ids = policy.encodePrompt(text);
    expect(ids[0]).to.equal(TINY_PIECES.indexOf('abc'));
    expect(ids).to.have.length(12);
    expect(policy.decode(ids)).to.equal(text);
    expect(policy.decode([...policy.encodePrompt('ab'), 0])).to.equal('ab'); // the end token is never text
  });

  it('greedy KV-cached decoding equals the argmax of a no-cache forward over the whole sequence, step by step, with the same logprobs and statistics', async () => {
    const prompt = 'abc 12+3=';
    const [[c]] = (await policy.sample([{ prompt }], opts({ maxTokens: 16, tokenStats: true }))) as [[Completion]];
    expect(c!.tokenIds.length).to.be.greaterThan(3);
    const { maxDiff, argmaxOk } = await checkAgainstReference(file(), policy.encodePrompt(prompt), c!, 0);
    expect(argmaxOk).to.equal(true);
    expect(maxDiff).to.be.lessThan(1e-4);
  });

  it('sampled logprobs are log softmax(logits / T) at the sampled ids and the entropy is that of softmax(logits / T) (T 0.7, top-p 0.9)', async () => {
    const prompt = 'x = 4, y = ';
    const groups = await policy.sample(
      [{ prompt }],
      opts({ n: 3, temperature: 0.7, topP: 0.9, maxTokens: 12, tokenStats: true }),
    );
    for (const c of groups[0]!) {
      const { maxDiff } = await checkAgainstReference(file(), policy.encodePrompt(prompt), c, 0.7);
      expect(maxDiff).to.be.lessThan(1e-4);
    }
    // A hand computation of one step: the first token's distribution from the reference.
    const c = groups[0]![0]!;
    const ref = await referenceLogits(file(), policy.encodePrompt(prompt));
    const row = Array.from(ref.subarray(ref.length - V), (v) => v / 0.7);
    const z = row.reduce((a, v) => a + Math.exp(v), 0);
    const p = row.map((v) => Math.exp(v) / z);
    const h = -p.reduce((a, q) => a + (q > 0 ? q * Math.log(q) : 0), 0);
    expect(c.entropies![0]).to.be.closeTo(h, 1e-4);
    expect(c.logprobs[0]).to.be.closeTo(Math.log(p[c.tokenIds[0]!]!), 1e-4);
  });

  it('a left-padded batch gives each sequence the same tokens and logprobs as sampling it alone', async () => {
    const prompts = ['a', 'abc 12+3=? xyz', 'hello 7'];
    const o = opts({ n: 2, maxTokens: 8, tokenStats: true });
    const batched = await policy.sample(
      prompts.map((prompt) => ({ prompt })),
      o,
    );
    let maxDiff = 0;
    for (let i = 0; i < prompts.length; i++) {
      const [alone] = await policy.sample([{ prompt: prompts[i]! }], o);
      for (let k = 0; k < 2; k++) {
        const a = alone![k]!;
        const b = batched[i]![k]!;
        expect(b.tokenIds).to.deep.equal(a.tokenIds);
        expect(b.text).to.equal(a.text);
        a.logprobs.forEach((l, t) => {
          maxDiff = Math.max(maxDiff, Math.abs(l - b.logprobs[t]!), Math.abs(a.entropies![t]! - b.entropies![t]!));
        });
      }
    }
    expect(maxDiff).to.be.lessThan(1e-4);
    // Prefill split into groups (a vocabulary of 2^23 in config.json leaves room for 4 tokens per
    // call): caches of different padded lengths are merged into one decode batch, same results.
    const split = writeTinyLm(path.join(tmp.dir, 'split-prefill'), { config: { vocab_size: 2 ** 23 } });
    const q = await openTinyLm(split);
    try {
      const grouped = await q.sample(
        prompts.map((prompt) => ({ prompt })),
        o,
      );
      expect(grouped.map((g) => g.map((c) => c.tokenIds))).to.deep.equal(batched.map((g) => g.map((c) => c.tokenIds)));
      grouped.forEach((g, i) =>
        g.forEach((c, k) =>
          c.logprobs.forEach((l, t) => {
            maxDiff = Math.max(maxDiff, Math.abs(l - batched[i]![k]!.logprobs[t]!));
          }),
        ),
      );
    } finally {
      await q.close();
    }
    expect(maxDiff).to.be.lessThan(1e-4);
    // And against the no-cache reference, for the longest and shortest prompt of the batch.
    for (const i of [0, 1]) {
      const { maxDiff: d } = await checkAgainstReference(file(), policy.encodePrompt(prompts[i]!), batched[i]![0]!, 0);
      expect(d).to.be.lessThan(1e-4);
    }
  });

  it('seeded sampling is deterministic, differs by seed and across the K completions of a prompt', async () => {
    const reqs = [{ prompt: 'abc' }, { prompt: '1+1=' }];
    const o = opts({ n: 4, temperature: 1, maxTokens: 12, seed: 21 });
    const a = await policy.sample(reqs, o);
    const b = await policy.sample(reqs, o);
    expect(b).to.deep.equal(a);
    const other = await policy.sample(reqs, { ...o, seed: 22 });
    expect(other.map((g) => g.map((c) => c.tokenIds))).to.not.deep.equal(a.map((g) => g.map((c) => c.tokenIds)));
    const distinct = new Set(a[0]!.map((c) => c.tokenIds.join(',')));
    expect(distinct.size).to.be.greaterThan(1);
    // A per-request seed override changes that request only.
    const over = await policy.sample([reqs[0]!, { ...reqs[1]!, overrides: { seed: 99 } }], o);
    expect(over[0]).to.deep.equal(a[0]);
    expect(over[1]!.map((c) => c.tokenIds)).to.not.deep.equal(a[1]!.map((c) => c.tokenIds));
  });

  it('stops on an end token (kept in tokenIds, not in the text), on a stop string (cut from the text), on maxTokens and at the context limit', async () => {
    const prompt = 'abc 12+3=';
    const [[greedy]] = (await policy.sample([{ prompt }], opts({ maxTokens: 6 }))) as [[Completion]];
    expect(greedy!.finishReason).to.equal('length');
    expect(greedy!.tokenIds).to.have.length(6);
    // Declare the third greedy token an end token: the completion ends there.
    const eos = greedy!.tokenIds[2]!;
    const withEos = await openTinyLm(dir, { eosTokenIds: [eos] });
    try {
      const [[c]] = (await withEos.sample([{ prompt }], opts({ maxTokens: 6 }))) as [[Completion]];
      expect(c!.tokenIds).to.deep.equal(greedy!.tokenIds.slice(0, c!.tokenIds.length));
      expect(c!.tokenIds.at(-1)).to.equal(eos);
      expect(c!.finishReason).to.equal('stop');
      expect(c!.text).to.equal(withEos.decode(c!.tokenIds.slice(0, -1)));
    } finally {
      await withEos.close();
    }
    const piece = policy.decode([greedy!.tokenIds[3]!]);
    const [[s]] = (await policy.sample([{ prompt }], opts({ maxTokens: 6, stop: [piece] }))) as [[Completion]];
    expect(s!.finishReason).to.equal('stop');
    expect(s!.text).to.not.contain(piece);
    expect(s!.text).to.equal(policy.decode(greedy!.tokenIds).split(piece)[0]);
    // Context of 10 tokens: the 7-token prompt ("abc" is one token) leaves room for 3 generated tokens.
    expect(policy.encodePrompt(prompt)).to.have.length(7);
    const short = await openTinyLm(dir, { maxContext: 10 });
    try {
      const [[c]] = (await short.sample([{ prompt }], opts({ maxTokens: 10 }))) as [[Completion]];
      expect(c!.tokenIds).to.deep.equal(greedy!.tokenIds.slice(0, 3));
      expect(c!.finishReason).to.equal('length');
      const e = await failure(short.sample([{ prompt: 'abcdefghijklmnop', id: 'long' }], opts()));
      expect(e.code).to.equal('CORL_ERR_BACKEND_CONTEXT');
      expect(e.message).to.contain('problem "long"').and.contain('10 tokens');
    } finally {
      await short.close();
    }
  });

  it('cannot train: update() is CORL_ERR_POLICY_CANNOT_TRAIN; save/load identify the model file', async () => {
    const e = await failure(policy.update());
    expect(e.code).to.equal('CORL_ERR_POLICY_CANNOT_TRAIN');
    const ckpt = path.join(tmp.dir, 'ckpt');
    await policy.save(ckpt);
    await policy.load(ckpt);
    expect((await failure(policy.load(path.join(tmp.dir, 'nowhere')))).code).to.equal('CORL_ERR_POLICY_CHECKPOINT');
  });

  it('exports without position_ids, in onnx/model.onnx, and merged decoders with use_cache_branch decode like the reference', async () => {
    for (const spec of [
      { positionIds: false, seed: 3 },
      { file: path.join('onnx', 'model.onnx'), useCacheBranch: true, seed: 4, layers: 1, heads: 2, kvHeads: 2 },
    ] as TinyLmSpec[]) {
      const d = writeTinyLm(path.join(tmp.dir, `variant-${spec.seed}`), spec);
      const p = await openTinyLm(d);
      try {
        expect(p.signature.positionIds).to.equal(spec.positionIds !== false);
        expect(p.signature.useCacheBranch).to.equal(!!spec.useCacheBranch);
        const prompts = ['abc', '12+3=?'];
        const out = await p.sample(
          prompts.map((prompt) => ({ prompt })),
          opts({ maxTokens: 8, tokenStats: true }),
        );
        for (let i = 0; i < prompts.length; i++) {
          const { maxDiff, argmaxOk } = await checkAgainstReference(
            path.join(d, spec.file ?? 'model.onnx'),
            p.encodePrompt(prompts[i]!),
            out[i]![0]!,
            0,
            spec,
          );
          expect(argmaxOk).to.equal(true);
          expect(maxDiff).to.be.lessThan(1e-4);
        }
      } finally {
        await p.close();
      }
    }
  });

  it('a missing folder, model, tokenizer or KV cache, mismatched heads and a missing end token are coded errors naming what was expected', async () => {
    const notFolder = await failure(openTinyLm(path.join(tmp.dir, 'missing')));
    expect(notFolder.code).to.equal('CORL_ERR_BACKEND_MODEL');
    expect(notFolder.where).to.equal('options.path');

    const noModel = path.join(tmp.dir, 'no-model');
    fs.mkdirSync(noModel);
    const e1 = await failure(openTinyLm(noModel));
    expect(e1.code).to.equal('CORL_ERR_BACKEND_MODEL');
    expect(e1.message).to.contain('model.onnx').and.contain(path.join('onnx', 'model.onnx'));

    const noTok = writeTinyLm(path.join(tmp.dir, 'no-tokenizer'), { tokenizer: false });
    const e2 = await failure(openTinyLm(noTok));
    expect(e2.code).to.equal('CORL_ERR_BACKEND_TOKENIZER');
    expect(e2.message).to.contain('tokenizer.json');

    const noPast = writeTinyLm(path.join(tmp.dir, 'no-past'), { past: false });
    const e3 = await failure(openTinyLm(noPast));
    expect(e3.code).to.equal('CORL_ERR_BACKEND_MODEL');
    expect(e3.message).to.contain('past_key_values.{i}.key');
    expect(e3.hint).to.contain('text-generation-with-past');

    const badHeads = writeTinyLm(path.join(tmp.dir, 'bad-heads'), { config: { num_key_value_heads: 4 } });
    const e4 = await failure(openTinyLm(badHeads));
    expect(e4.code).to.equal('CORL_ERR_BACKEND_MODEL');
    expect(e4.message).to.contain('expected 4 key/value heads').and.contain('got 2');

    const badLayers = writeTinyLm(path.join(tmp.dir, 'bad-layers'), { config: { num_hidden_layers: 3 } });
    expect((await failure(openTinyLm(badLayers))).message).to.contain('expected 3 layers');

    const noEos = writeTinyLm(path.join(tmp.dir, 'no-eos'), { config: { eos_token_id: null } });
    fs.writeFileSync(path.join(noEos, 'tokenizer_config.json'), '{}');
    const e5 = await failure(openTinyLm(noEos));
    expect(e5.code).to.equal('CORL_ERR_BACKEND_TOKENIZER');
    expect(e5.where).to.equal('options.eosTokenIds');
    const ok = await openTinyLm(noEos, { eosTokenIds: [] });
    await ok.close();

    const img = await failure(policy.sample([{ prompt: 'a', images: ['x.png'] }], opts()));
    expect(img.code).to.equal('CORL_ERR_BACKEND_UNSUPPORTED');
  });

  it('passes the corl/testing policy contract', async () => {
    const checks = policyChecks(onnxLmPolicy, {
      options: { path: dir, threads: 1 },
      optionSets: [{ path: dir, threads: 1, template: 'q: {prompt}\na:', eosTokenIds: [0, 3] }],
      register: (c) => register(c),
      tokenStats: true,
      optionalWithoutDefault: ['file', 'eosTokenIds', 'maxContext', 'family'],
      baseDir: tmp.dir,
    });
    for (const c of checks) await c.run();
  });
});
