import { expect } from 'chai';
import type { RewardContext, RewardSource } from '../../../core/contracts/reward-source';
import { loadConfigValue } from '../../../core/config/load';
import { instantiate } from '../../../core/registry/instantiate';
import { coRlConfig, fixture } from '../../fixtures/configs';

const spy = require('../../fixtures/spy-reward') as typeof import('../../fixtures/spy-reward');

const withReward = (reward: unknown, extra: Record<string, unknown> = {}) =>
  coRlConfig({
    plugins: [fixture('categorical-policy.js'), fixture('spy-reward.js')],
    reward,
    labelFree: false,
    ...extra,
  });

const ctx = (reference?: string): RewardContext => ({
  problem: { id: 'p', prompt: '' },
  prompt: '',
  agent: 0,
  agents: 2,
  step: 0,
  completions: ['3', '3', '4'].map((k) => ({
    text: `\\boxed{${k}}`,
    answer: k,
    key: k,
    length: 1,
    finishReason: 'stop' as const,
  })),
  own: { agent: 0, keys: ['3', '3', '4'] },
  supervisors: [{ agent: 1, keys: ['4', '4', '3'] }],
  equivalence: { key: (a) => a, equal: async (a, b) => a === b },
  ...(reference !== undefined ? { reference: { answer: reference } } : {}),
});

describe('plugins/rewards/weighted (corl:weighted)', () => {
  beforeEach(() => {
    spy.seen.length = 0;
    spy.closed.length = 0;
  });

  it('validates nested selections (defaults applied) and sums rewards with weights', async () => {
    const loaded = await loadConfigValue(
      withReward({
        use: 'corl:weighted',
        options: { sources: [{ source: 'corl:vote' }, { source: 'corl:format', weight: 0.25 }] },
      }),
    );
    const parts = (
      loaded.config.reward.options as {
        sources: { source: { use: string; options: Record<string, unknown> }; weight: number }[];
      }
    ).sources;
    expect(parts[0]!.source).to.deep.equal({ use: 'corl:vote', options: { threshold: 0, rule: 'pool' } });
    expect(parts[0]!.weight).to.equal(1);
    expect(loaded.readsGroundTruth).to.equal(false);
    expect(loaded.tokenStats).to.equal(false);
    const reward = await instantiate('reward', loaded.config.reward, {
      registry: loaded.registry,
      seed: 0,
      baseDir: '.',
    });
    const r = await reward.score(ctx());
    // vote: peer label 4 → [0, 0, 1]; format: every completion boxed → 0.25 each
    expect(r.rewards).to.deep.equal([0.25, 0.25, 1.25]);
    expect(r.label).to.equal('4');
    expect(r.ownLabel).to.equal('3');
    expect(r.metrics).to.include({
      'weighted/0/reward': 1 / 3,
      'weighted/1/reward': 1,
      'weighted/1/format/fraction': 1,
      'weighted/0/vote/majority_ratio': 2 / 3,
    });
  });

  it('is supervised when a part is, and only that part sees the reference', async () => {
    const sel = {
      use: 'corl:weighted',
      options: {
        sources: [
          { source: { use: 'test:spy', options: { name: 'free' } } },
          { source: { use: 'test:spy', options: { name: 'gt', groundTruth: true } }, weight: 2 },
        ],
      },
    };
    const loaded = await loadConfigValue(withReward(sel));
    expect(loaded.readsGroundTruth).to.equal(true);
    const reward = (await instantiate('reward', loaded.config.reward, {
      registry: loaded.registry,
      seed: 0,
      baseDir: '.',
    })) as RewardSource;
    const r = await reward.score(ctx('3'));
    expect(r.rewards).to.deep.equal([3, 3, 3]);
    expect(spy.seen).to.deep.equal([
      { name: 'free', reference: false },
      { name: 'gt', reference: true },
    ]);
    await reward.close!();
    expect(spy.closed).to.deep.equal(['free', 'gt']);
    let err: Error | undefined;
    try {
      await loadConfigValue(withReward(sel, { labelFree: true }));
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).to.contain('CORL_ERR_CONFIG_LABEL_FREE');
  });

  it('asks for token statistics when a part needs them (an intrinsic part)', async () => {
    const loaded = await loadConfigValue(
      withReward({
        use: 'corl:weighted',
        options: {
          sources: [
            { source: 'corl:vote' },
            { source: { use: 'corl:intrinsic', options: { method: 'rent' } }, weight: 0.1 },
          ],
        },
      }),
    );
    expect(loaded.tokenStats).to.equal(true);
    expect(loaded.readsGroundTruth).to.equal(false);
  });

  it('bad nested options are reported at their path; all-zero weights are refused', async () => {
    let err: Error | undefined;
    try {
      await loadConfigValue(
        withReward({
          use: 'corl:weighted',
          options: { sources: [{ source: { use: 'corl:vote', options: { rule: 'nope' } } }] },
        }),
      );
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message)
      .to.contain('CORL_ERR_CONFIG_INVALID')
      .and.contain('reward.options.sources[0].source.options.rule');
    const loaded = await loadConfigValue(
      withReward({ use: 'corl:weighted', options: { sources: [{ source: 'corl:vote', weight: 0 }] } }),
    );
    let zero: Error | undefined;
    try {
      await instantiate('reward', loaded.config.reward, {
        registry: loaded.registry,
        seed: 0,
        baseDir: '.',
      });
    } catch (e) {
      zero = e as Error;
    }
    expect(zero?.message).to.contain('CORL_ERR_REWARD_OPTIONS');
  });
});
