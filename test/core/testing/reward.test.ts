import { expect } from 'chai';
import type { InjectionToken } from 'tsyringe';
import type { CompletionView, RewardSource } from '../../../core/contracts/reward-source';
import { isCorlError } from '../../../core/errors';
import { AnswerKeys } from '../../../core/reward/answer-keys';
import { RewardPipeline } from '../../../core/reward/pipeline';
import { GROUND_TRUTH, type GroundTruth } from '../../../core/contracts/problem';
import { TASK, type Task } from '../../../core/contracts/task';
import { definePlugin } from '../../../core/registry/define';
import { exactEquivalence, rewardChecks, rewardScenarios } from '../../../core/testing';
import { rewardGroup } from '../../../core/testing/contexts';
import { fails, passes } from './helpers';

const schema = { type: 'object', properties: {}, additionalProperties: false } as const;
const reward = (name: string, create: () => RewardSource, readsGroundTruth = false) =>
  definePlugin({
    manifest: { name, kind: 'reward', description: 'test reward', corl: '^0.1.0', options: schema, readsGroundTruth },
    create,
  });

describe('core/testing/reward (the reward-source suite catches broken sources)', () => {
  it('scenarios cover null answers, empty groups, no supervisors, self-supervision and several peers', () => {
    const titles = rewardScenarios(false, undefined).map((s) => s.title);
    expect(titles).to.include.members([
      'only null answers',
      'an empty group (no completions)',
      'a supervisor with an empty group',
      'no supervisors',
      'self-supervision (TTRL)',
      'two peers, agent 1 of 3',
    ]);
    expect(
      rewardScenarios(false, { answer: '4' }).every((s) => (s.spec.reference as { answer: string }).answer === '4'),
    ).to.equal(true);
    expect(rewardScenarios(false, undefined).some((s) => s.spec.reference !== undefined)).to.equal(false);
  });

  it('a source that reads ctx.reference without declaring readsGroundTruth is caught', async () => {
    const sneaky = reward('test:sneaky', () => ({
      async score(ctx) {
        const target = ctx.reference?.answer ?? null;
        return { rewards: ctx.completions.map((c) => (c.key === target ? 1 : 0)) };
      },
    }));
    await fails(rewardChecks(sneaky), 'depends on it', /changed when a reference was present/);
  });

  it('a source that declares GROUND_TRUTH or TASK among its dependencies without readsGroundTruth is caught', async () => {
    for (const [name, token, says] of [
      ['test:injected', GROUND_TRUTH, /"corl\.GroundTruth"/],
      ['test:loader', TASK, /"corl\.Task"/],
    ] as const) {
      const injected = definePlugin({
        manifest: { name, kind: 'reward', description: 'test reward', corl: '^0.1.0', options: schema },
        inject: { labels: token as InjectionToken<GroundTruth | Task> },
        create(): RewardSource {
          return { score: async (c) => ({ rewards: c.completions.map(() => 0) }) };
        },
      });
      await fails(rewardChecks(injected), 'depends on it', says);
      await fails(rewardChecks(injected), 'is handed nothing that leads to a label', says);
    }
  });

  it('a source that catches the refusal of a task it tries to create and carries on is still caught', async () => {
    const quiet = definePlugin({
      manifest: { name: 'test:quiet', kind: 'reward', description: 'test reward', corl: '^0.1.0', options: schema },
      create(_o, ctx): RewardSource {
        return {
          async score(c) {
            try {
              await ctx.create('task', { use: 'corl:inline', options: { train: [], heldOut: [] } });
            } catch {
              /* try later */
            }
            return { rewards: c.completions.map(() => 0) };
          },
        };
      },
    });
    await fails(rewardChecks(quiet), 'depends on it', /caught the refusal\).*the task "corl:inline"/);
  });

  it('a source that declares the registry or a policy among its dependencies is caught', async () => {
    for (const token of ['corl.PluginRegistry', 'corl.Policy']) {
      const probing = definePlugin({
        manifest: { name: 'test:probe', kind: 'reward', description: 'test reward', corl: '^0.1.0', options: schema },
        inject: { x: token },
        create: (): RewardSource => ({ score: async (c) => ({ rewards: c.completions.map(() => 0) }) }),
      });
      await fails(rewardChecks(probing), 'depends on it', /CORL_ERR_PLUGIN_CAPABILITY/);
    }
  });

  it('a label-free source that strips a reference before delegating passes', async () => {
    const stripping = reward('test:strip', () => ({
      async score(ctx) {
        const { reference, ...rest } = ctx;
        void reference;
        return { rewards: rest.completions.map((c) => (c.key === rest.supervisors[0]?.keys[0] ? 1 : 0)) };
      },
    }));
    await passes(rewardChecks(stripping), 'depends on it');
  });

  it('a source that declares readsGroundTruth may read the reference', async () => {
    const honest = reward(
      'test:honest',
      () => ({
        async score(ctx) {
          return { rewards: ctx.completions.map((c) => (c.key !== null && c.key === ctx.reference?.answer ? 1 : 0)) };
        },
      }),
      true,
    );
    await passes(rewardChecks(honest), 'depends on it');
    await passes(rewardChecks(honest), 'one finite reward');
  });

  it('a source that crashes on null answers or empty groups is caught', async () => {
    const fragile = reward('test:fragile', () => ({
      async score(ctx) {
        const first = ctx.supervisors[0]!.keys[0]!.length; // throws when there is no supervisor or no answer
        return { rewards: ctx.completions.map(() => first) };
      },
    }));
    await fails(rewardChecks(fragile), 'one finite reward', /null|undefined/);
  });

  it('misaligned, non-finite rewards and bad metric names are caught', async () => {
    const short = reward('test:short', () => ({
      async score() {
        return { rewards: [1] };
      },
    }));
    await fails(
      rewardChecks(short),
      'one finite reward',
      /CORL_ERR_REWARD_OUTPUT: reward: expected 4 finite rewards from "test:short" for .*agreeing peer, got 1\./,
    );
    const nan = reward('test:nan', () => ({
      async score(ctx) {
        return { rewards: ctx.completions.map(() => Number.NaN) };
      },
    }));
    await fails(
      rewardChecks(nan),
      'one finite reward',
      /CORL_ERR_REWARD_OUTPUT: reward: expected 4 finite rewards from "test:nan" for .*agreeing peer, got NaN for completion 0\./,
    );
    const metric = reward('test:metric', () => ({
      async score(ctx) {
        return { rewards: ctx.completions.map(() => 0), metrics: { Mean: 1 } };
      },
    }));
    await fails(rewardChecks(metric), 'one finite reward', /namespaced/);
  });

  it('a source that depends on hidden state across instances is caught by the determinism check', async () => {
    let calls = 0;
    const drifting = reward('test:drifting', () => ({
      async score(ctx) {
        calls++;
        return { rewards: ctx.completions.map(() => calls) };
      },
    }));
    await fails(rewardChecks(drifting), 'deterministic', /same for two instances/);
  });

  it('answerKeys of the wrong length is caught', async () => {
    const keyed = reward('test:keyed', () => ({
      async answerKeys() {
        return ['1'];
      },
      async score(ctx) {
        return { rewards: ctx.completions.map(() => 0) };
      },
    }));
    await fails(
      rewardChecks(keyed),
      'answerKeys',
      /expected 5 answer keys \(a string or null each\) from "test:keyed" for the kit texts, got 1: \["1"\]/,
    );
  });

  it('a source that sorts ctx.completions fails the kit with the error a run gives (frozen contexts)', async () => {
    const sorting = reward('test:sorting', () => ({
      async score(ctx) {
        const sorted = (ctx.completions as CompletionView[]).sort((a, b) => a.text.localeCompare(b.text));
        return { rewards: sorted.map(() => 0) };
      },
    }));
    const checks = rewardChecks(sorting);
    await fails(
      checks,
      'one finite reward',
      /^CORL_ERR_REWARD_FAILED: expected the reward of .*agreeing peer to succeed, got Cannot assign to read only property/,
    );
    // The very error of the pipeline that training and serve score through.
    const group = rewardGroup({ keys: ['4', '5'], supervisors: [['4', '4']] });
    const source = await sorting.create({}, {} as never);
    const parts = { reward: source, use: 'test:sorting', equivalence: exactEquivalence };
    let thrown: unknown;
    try {
      await new RewardPipeline({ ...parts, keys: new AnswerKeys({ extract: (t) => t }, exactEquivalence) }).score(
        group,
        'group "p1"',
      );
    } catch (e) {
      thrown = e;
    }
    expect(isCorlError(thrown) && thrown.code).to.equal('CORL_ERR_REWARD_FAILED');
    expect((thrown as Error).message).to.match(
      /expected the reward of group "p1" to succeed, got Cannot assign to read only property/,
    );
  });

  it('a source that writes into a context it was handed fails the kit too (score, scoreMany)', async () => {
    const writing = reward('test:writing', () => ({
      async score(ctx) {
        (ctx.own.keys as (string | null)[])[0] = 'x';
        return { rewards: ctx.completions.map(() => 0) };
      },
    }));
    await fails(rewardChecks(writing), 'one finite reward', /to succeed, got .*read.only/);
  });

  it('answer keys that are no answer (an empty key) become null, as the pipeline reads them', async () => {
    const empty = reward('test:empty-keys', () => ({
      async answerKeys(input) {
        return input.texts.map(() => '');
      },
      async score(ctx) {
        return { rewards: ctx.completions.map(() => 0) };
      },
    }));
    await passes(rewardChecks(empty), 'answerKeys');
  });
});
