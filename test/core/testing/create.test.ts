import { expect } from 'chai';
import type { PluginContext } from '../../../core/contracts/plugin';
import { isCorlError } from '../../../core/errors';
import { definePlugin } from '../../../core/registry/define';
import { createPlugin, pluginOptions } from '../../../core/testing';
import { voteReward } from '../../../plugins/rewards';

describe('core/testing/create (plugins built outside a config, as a run builds them)', () => {
  it('applies defaults, freezes the options and hands seed, agent and base folder to the factory', async () => {
    let seen: { options: unknown; ctx: PluginContext } | undefined;
    const probe = definePlugin({
      manifest: {
        name: 'test:probe',
        kind: 'topology',
        description: 'records its inputs',
        corl: '^0.1.0',
        options: {
          type: 'object',
          properties: {
            k: { type: 'integer', default: 3 },
            sub: {
              type: 'object',
              default: {},
              properties: { x: { type: 'string', default: 'y' } },
              additionalProperties: false,
            },
          },
          additionalProperties: false,
        },
      },
      create(options, ctx) {
        seen = { options, ctx };
        return { selfSupervised: true, validate: () => undefined, supervisors: (n) => [n] };
      },
    });
    await createPlugin(probe, {}, { seed: 5, agent: 1, baseDir: '/tmp/x' });
    expect(seen!.options).to.deep.equal({ k: 3, sub: { x: 'y' } });
    expect(Object.isFrozen(seen!.options) && Object.isFrozen((seen!.options as { sub: object }).sub)).to.equal(true);
    expect(seen!.ctx).to.include({ seed: 5, agent: 1, baseDir: '/tmp/x' });
  });

  it('nested plugin selections resolve to built-ins (composites can be tested alone)', async () => {
    const composite = definePlugin({
      manifest: {
        name: 'test:wrap',
        kind: 'reward',
        description: 'wraps another reward',
        corl: '^0.1.0',
        options: {
          type: 'object',
          properties: { inner: { corlPlugin: 'reward', default: 'corl:vote' } },
          additionalProperties: false,
        },
      },
      async create(options: { inner: { use: string; options: Record<string, unknown> } }, ctx) {
        return ctx.create('reward', options.inner);
      },
    });
    expect(await pluginOptions(composite, {})).to.deep.equal({
      inner: { use: 'corl:vote', options: { threshold: 0, rule: 'pool' } },
    });
    const inner = await createPlugin(composite, { inner: { use: 'corl:vote', options: { rule: 'teacher' } } });
    expect(inner.score).to.be.a('function');
  });

  it('invalid options are CORL_ERR_PLUGIN_OPTIONS with every issue and its path', async () => {
    try {
      await createPlugin(voteReward, { threshold: 2, rule: 'x', extra: 1 });
      expect.fail('should throw');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_PLUGIN_OPTIONS'), String(e)).to.equal(true);
      const issues = (e as { data: { issues: { path: string }[] } }).data.issues.map((i) => i.path).sort();
      expect(issues).to.deep.equal(['extra', 'rule', 'threshold']);
      expect((e as Error).message).to.contain('options.threshold: expected a number <= 1, got number 2');
    }
  });

  it('a plugin whose name collides with a different built-in is CORL_ERR_PLUGIN_DUPLICATE', async () => {
    const impostor = definePlugin({ ...voteReward, manifest: { ...voteReward.manifest } });
    try {
      await createPlugin(impostor, {});
      expect.fail('should throw');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_PLUGIN_DUPLICATE'), String(e)).to.equal(true);
    }
  });
});
