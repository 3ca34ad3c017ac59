import { expect } from 'chai';
import { grpo, type Completion, type UpdateBatch } from 'corl';
import { createPlugin, policyContract } from 'corl/testing';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BigramPolicy, softmax } from '../src/bigram';
import { examplePolicy, register } from '../src';

// The contract every policy keeps: shapes, finite log-probabilities, determinism, updates, exact checkpoints.
policyContract(examplePolicy, { register, tokenStats: true, maxTokens: 6, optionSets: [{ alphabet: 'ab', initScale: 2 }], invalidOptions: [{ options: { alphabet: 'aa' }, field: 'alphabet' }] });

const sampling = { n: 1, temperature: 1, topP: 1, maxTokens: 4, seed: 1 };
const options = (o: Partial<ConstructorParameters<typeof BigramPolicy>[0]> = {}) => ({ alphabet: 'ab', learningRate: 0.5, initScale: 0, family: 'f', ...o });

describe('example:policy', () => {
  it('samples from the tempered softmax with per-token statistics (uniform start, by hand)', async () => {
    const p = new BigramPolicy(options(), 0); // initScale 0: every next token has probability 1/3 (a, b, end)
    const [[c]] = await p.sample([{ prompt: 'Q' }], { ...sampling, tokenStats: true });
    c!.logprobs.forEach((l) => expect(l).to.be.closeTo(Math.log(1 / 3), 1e-12));
    c!.entropies!.forEach((h) => expect(h).to.be.closeTo(Math.log(3), 1e-12));
    c!.meanLogprobs!.forEach((m) => expect(m).to.be.closeTo(Math.log(1 / 3), 1e-12));
    expect(c!.text).to.equal(c!.tokenIds.filter((t) => t < 2).map((t) => 'ab'[t]).join(''));
  });

  it('greedy decoding stops at maxTokens, or at a stop string it then removes', async () => {
    const p = new BigramPolicy(options({ alphabet: 'a' }), 0); // a and end tie; greedy takes the first: a
    const [[long]] = await p.sample([{ prompt: '' }], { ...sampling, temperature: 0, maxTokens: 3 });
    expect(long).to.include({ text: 'aaa', finishReason: 'length' });
    const [[stopped]] = await p.sample([{ prompt: '' }], { ...sampling, temperature: 0, stop: ['aa'] });
    expect(stopped).to.deep.include({ text: '', tokenIds: [0, 0], finishReason: 'stop' });
  });

  it('an update is a gradient step on the GRPO loss (finite differences)', async () => {
    const p = new BigramPolicy(options({ initScale: 1, learningRate: 1e-4 }), 3);
    const mk = (ids: number[], old: number[]): Completion => ({ text: '', tokenIds: ids, logprobs: old, finishReason: 'stop' });
    const samples = [
      { prompt: 'a', completion: mk([1, 0], [-0.4, -2.0]), advantage: 1 },
      { prompt: 'a', completion: mk([0], [-1.5]), advantage: -0.5 },
    ];
    const loss = { type: 'grpo' as const, clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: 4 };
    const T = 0.8;
    // Only the rows after "a" (state a) and after "b" (state b) are used; perturb the row after "a".
    const rowA = p.logitsAfter('a');
    const rowB = p.logitsAfter('b');
    const f = (za: number[]): number => {
      const pa = softmax(za, T).map(Math.log);
      const pb = softmax(rowB, T).map(Math.log);
      return grpo.grpoLoss({ logprobs: [[pa[1]!, pb[0]!], [pa[0]!]], oldLogprobs: samples.map((s) => s.completion.logprobs), advantages: [1, -0.5] }, loss).loss;
    };
    const h = 1e-6;
    const numeric = rowA.map((_, j) => { const up = rowA.slice(); const dn = rowA.slice(); up[j]! += h; dn[j]! -= h; return (f(up) - f(dn)) / (2 * h); });
    const batch: UpdateBatch = { samples, loss, temperature: T, step: 0, totalSteps: 1 };
    await p.update(batch);
    p.logitsAfter('a').forEach((v, j) => expect((rowA[j]! - v) / 1e-4).to.be.closeTo(numeric[j]!, 1e-5));
  });

  it('learns from advantages: rewarding answers that start with "7" makes greedy decoding write 7', async () => {
    const p = await createPlugin(examplePolicy, { learningRate: 1 }, { seed: 5 });
    const req = [{ prompt: 'Q:' }];
    for (let step = 0; step < 40; step++) {
      const [group] = await p.sample(req, { n: 8, temperature: 1, topP: 1, maxTokens: 2, seed: step });
      const rewards = group!.map((c) => (c.text.startsWith('7') ? 1 : 0));
      const [adv] = grpo.grpoAdvantages([rewards], { scale: 'group', epsilon: 1e-6, unbiased: true });
      await p.update({ samples: group!.map((c, k) => ({ prompt: 'Q:', completion: c, advantage: adv![k]! })), loss: { type: 'bnpo', clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: 2 }, temperature: 1, step, totalSteps: 40 });
    }
    const [[greedy]] = await p.sample(req, { n: 1, temperature: 0, topP: 1, maxTokens: 2, seed: 0 });
    expect(greedy!.text.startsWith('7'), greedy!.text).to.equal(true);
  });

  it('a checkpoint of another alphabet is CORL_ERR_POLICY_CHECKPOINT', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bigram-'));
    try {
      await (await createPlugin(examplePolicy, {})).save(dir);
      const other = await createPlugin(examplePolicy, { alphabet: 'xyz' });
      try {
        await other.load(dir);
        expect.fail('should throw');
      } catch (e) {
        expect((e as { code?: string }).code).to.equal('CORL_ERR_POLICY_CHECKPOINT');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
