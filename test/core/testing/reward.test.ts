import { expect } from 'chai';
import type { RewardSource } from '../../../core/contracts/reward-source';
import { GROUND_TRUTH, type GroundTruth } from '../../../core/contracts/problem';
import { TASK, type Task } from '../../../core/contracts/task';
import { definePlugin } from '../../../core/registry/define';
import { rewardChecks, rewardScenarios } from '../../../core/testing';
import { fails, passes } from './helpers';

const schema = { type: 'object', properties: {}, additionalProperties: false } as const;
const reward = (name: string, create: () => RewardSource, usesGroundTruth = false) =>
  definePlugin({
    manifest: { name, kind: 'reward', description: 'test reward', corl: '^0.1.0', options: schema, usesGroundTruth },
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

  it('a source that reads ctx.reference without declaring usesGroundTruth is caught', async () => {
    const sneaky = reward('test:sneaky', () => ({
      async score(ctx) {
        const target = ctx.reference?.answer ?? null;
        return { rewards: ctx.completions.map((c) => (c.key === target ? 1 : 0)) };
      },
    }));
    await fails(rewardChecks(sneaky), 'depends on it', /changed when a reference was present/);
  });

  it('a source that resolves GROUND_TRUTH from its container is caught', async () => {
    const injected = definePlugin({
      manifest: { name: 'test:injected', kind: 'reward', description: 'test reward', corl: '^0.1.0', options: schema },
      create(_o, ctx): RewardSource {
        const gt = ctx.container.resolve<GroundTruth>(GROUND_TRUTH);
        return {
          async score(c) {
            return { rewards: c.completions.map((v) => (gt.get(c.problem.id)?.answer === v.key ? 1 : 0)) };
          },
        };
      },
    });
    await fails(rewardChecks(injected), 'depends on it', /reached for ground truth: .*"corl\.GroundTruth"/);
  });

  it('a source that loads the task (and so its references) from the container is caught', async () => {
    const loader = definePlugin({
      manifest: { name: 'test:loader', kind: 'reward', description: 'test reward', corl: '^0.1.0', options: schema },
      create(_o, ctx): RewardSource {
        return {
          async score(c) {
            await ctx.container.resolve<Task>(TASK).load();
            return { rewards: c.completions.map(() => 0) };
          },
        };
      },
    });
    await fails(rewardChecks(loader), 'depends on it', /reached for ground truth: .*"corl\.Task"/);
  });

  it('a source that catches the refusal and carries on is still caught (the tripwire counts attempts)', async () => {
    const quiet = definePlugin({
      manifest: { name: 'test:quiet', kind: 'reward', description: 'test reward', corl: '^0.1.0', options: schema },
      create(_o, ctx): RewardSource {
        let gt: GroundTruth | undefined;
        try {
          gt = ctx.container.resolve<GroundTruth>('corl.GroundTruth');
        } catch {
          /* try later */
        }
        return {
          async score(c) {
            return { rewards: c.completions.map((v) => (gt?.get(c.problem.id)?.answer === v.key ? 1 : 0)) };
          },
        };
      },
    });
    await fails(rewardChecks(quiet), 'depends on it', /caught the refusal\).*"corl\.GroundTruth"/);
  });

  it('a source that reaches for the registry, a policy, or resets its container is caught', async () => {
    const routes: ((ctx: import('../../../core/contracts/plugin').PluginContext) => unknown)[] = [
      (ctx) => ctx.container.resolve('corl.PluginRegistry'),
      (ctx) => ctx.container.resolve('corl.Policy'),
      (ctx) => ctx.container.createChildContainer().resolve('corl.Task'),
      (ctx) => ctx.container.reset(),
    ];
    for (const [i, route] of routes.entries()) {
      const probing = definePlugin({
        manifest: {
          name: `test:probe${i}`,
          kind: 'reward',
          description: 'test reward',
          corl: '^0.1.0',
          options: schema,
        },
        create(_o, ctx): RewardSource {
          return {
            async score(c) {
              try {
                route(ctx);
              } catch {
                /* swallowed */
              }
              return { rewards: c.completions.map(() => 0) };
            },
          };
        },
      });
      await fails(rewardChecks(probing), 'depends on it', /CORL_ERR_PLUGIN_CAPABILITY|caught the refusal/);
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

  it('a source that declares usesGroundTruth may read the reference', async () => {
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
    await fails(rewardChecks(short), 'one finite reward', /one reward per completion/);
    const nan = reward('test:nan', () => ({
      async score(ctx) {
        return { rewards: ctx.completions.map(() => Number.NaN) };
      },
    }));
    await fails(rewardChecks(nan), 'one finite reward', /reward 0 should be a finite number/);
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
    await fails(rewardChecks(keyed), 'answerKeys', /one key per text/);
  });
});
