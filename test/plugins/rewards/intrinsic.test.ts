import { expect } from 'chai';
import type { CompletionView, RewardContext, RewardSource } from '../../../core/contracts/reward-source';
import { isCorlError } from '../../../core/errors';
import * as path from 'node:path';
import { loadConfigValue } from '../../../core/config/load';
import { RunDirectory } from '../../../core/trainer/run-dir';
import { train } from '../../../core/trainer/trainer';
import { intrinsicReward } from '../../../plugins/rewards/intrinsic';
import { coRlConfig, tempDir } from '../../fixtures/configs';

const view = (
  entropies?: number[],
  meanLogprobs?: number[],
  length = entropies?.length ?? meanLogprobs?.length ?? 0,
): CompletionView => ({ text: '', answer: null, key: null, length, finishReason: 'stop', entropies, meanLogprobs });
const ctx = (completions: CompletionView[]): RewardContext => ({
  problem: { id: 'p', prompt: '' },
  prompt: '',
  agent: 0,
  agents: 1,
  step: 0,
  completions,
  own: { agent: 0, keys: completions.map(() => null) },
  supervisors: [],
  equivalence: { key: (a) => a, equal: async (a, b) => a === b },
});
const make = (method: 'rent' | 'intuitor', vocabSize = 0) =>
  intrinsicReward.create({ method, vocabSize }, {} as never) as RewardSource;

describe('plugins/rewards/intrinsic (corl:intrinsic)', () => {
  it('RENT: reward = −mean token entropy', async () => {
    const r = await make('rent').score(ctx([view([1, 2, 3]), view([0.5, 0.5]), view([])]));
    expect(r.rewards).to.deep.equal([-2, -0.5, 0]);
    expect(r.metrics!['intrinsic/entropy']).to.be.closeTo((2 + 0.5 + 0) / 3, 1e-12);
    expect(r.label).to.equal(undefined);
  });
  it('Intuitor: reward = mean over tokens of KL(U‖p) = −log V − mean_v log p(v)', async () => {
    // V = 4; token 1: p = (1/2, 1/4, 1/8, 1/8), token 2: uniform
    const lp1 = [0.5, 0.25, 0.125, 0.125].map(Math.log);
    const mean1 = lp1.reduce((a, b) => a + b, 0) / 4;
    const mean2 = Math.log(0.25);
    const kl1 = lp1.reduce((s, l) => s + 0.25 * (Math.log(0.25) - l), 0);
    const r = await make('intuitor', 4).score(ctx([view(undefined, [mean1, mean2])]));
    expect(r.rewards[0]).to.be.closeTo((kl1 + 0) / 2, 1e-12);
    // without V the constant −log V is left out (GRPO advantages are shift-invariant within a group)
    const r0 = await make('intuitor').score(ctx([view(undefined, [mean1, mean2])]));
    expect(r0.rewards[0]! - r.rewards[0]!).to.be.closeTo(Math.log(4), 1e-12);
    expect(intrinsicReward.manifest.tokenStats).to.equal(true);
    expect(intrinsicReward.manifest.readsGroundTruth).to.equal(false);
  });
  it('missing, short or non-finite statistics are CORL_ERR_REWARD_TOKEN_STATS naming the completion', async () => {
    for (const [method, c] of [
      ['rent', view(undefined, undefined, 3)],
      ['rent', view([1, 2], undefined, 3)],
      ['intuitor', view(undefined, [NaN])],
      ['intuitor', view([1])],
    ] as const) {
      let err: unknown;
      try {
        await make(method).score(ctx([view([0], [0]), c]));
      } catch (e) {
        err = e;
      }
      expect(isCorlError(err, 'CORL_ERR_REWARD_TOKEN_STATS'), `${method} ${String(err)}`).to.equal(true);
      expect(String((err as Error).message)).to.contain('completion 1');
    }
  });
});

describe('corl:intrinsic in a run', function () {
  this.timeout(60000);
  it('the trainer asks for token statistics; a policy without them stops the run with the coded error', async () => {
    const tmp = tempDir();
    try {
      const loaded = await loadConfigValue(
        coRlConfig({
          reward: { use: 'corl:intrinsic', options: { method: 'rent' } },
          topology: 'corl:self',
          agents: ['a', 'b'].map((name) => ({
            name,
            policy: { use: 'test:categorical', options: { noTokenStats: true } },
          })),
        }),
        { baseDir: tmp.dir },
      );
      expect(loaded.tokenStats).to.equal(true);
      const run = await RunDirectory.create(path.join(tmp.dir, 'run'), loaded.config, loaded.source, {
        baseDir: tmp.dir,
        supervised: false,
      });
      let err: unknown;
      try {
        await train(loaded, { run });
      } catch (e) {
        err = e;
      }
      expect(isCorlError(err, 'CORL_ERR_REWARD_TOKEN_STATS'), String(err)).to.equal(true);
    } finally {
      tmp.cleanup();
    }
  });
});
