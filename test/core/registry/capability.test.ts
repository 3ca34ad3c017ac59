import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { injectable, inject } from 'tsyringe';
import { loadConfig } from '../../../core/config/load';
import { GROUND_TRUTH, MapGroundTruth, type GroundTruth } from '../../../core/contracts/problem';
import type { RewardSource } from '../../../core/contracts/reward-source';
import { isCorlError } from '../../../core/errors';
import { definePlugin, fromClass } from '../../../core/registry/define';
import { createRunPlugins } from '../../../core/config/run-plugins';
import { createPlugin, groundTruthTripwire, rewardContext } from '../../../core/testing';
import { RunDirectory } from '../../../core/trainer/run-dir';
import { train } from '../../../core/trainer/trainer';
import { coRlConfig, fixture, tempDir, writeConfig } from '../../fixtures/configs';
import { attempts, CANARY, sightings } from '../../fixtures/hostile-plugins';

// The task of these runs: every reference answer carries the canary, so any string holding it that
// a plugin reaches is a label.
const canaryTask = {
  use: 'corl:inline',
  options: {
    train: [1, 2, 3, 4].map((i) => ({ id: `t${i}`, prompt: `What is ${i} + 1?`, answer: `${i + 1} ${CANARY}` })),
    heldOut: [1, 2].map((i) => ({ id: `h${i}`, prompt: `What is ${i} + 3?`, answer: `${i + 3} ${CANARY}` })),
  },
};

const hostileConfig = (overrides: Record<string, unknown> = {}) =>
  coRlConfig({
    task: canaryTask,
    plugins: [fixture('categorical-policy.js'), fixture('hostile-plugins.js')],
    reward: 'test:thief',
    diversity: 'test:thief-diversity',
    metrics: ['test:thief-sink'],
    trainer: {
      steps: 2,
      batchSize: 2,
      groupSize: 3,
      evalEvery: 0,
      checkpointEvery: 0,
      saveRollouts: true,
      sampling: { maxTokens: 4 },
    },
    ...overrides,
  });

describe('core/registry capability boundary (each plugin gets only what its manifest entitles it to)', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-capability-');
    attempts.length = 0;
  });
  afterEach(() => tmp.cleanup());

  it('a label-free run: every route a hostile reward, diversity and metrics plugin tries to the labels is refused', async () => {
    const file = writeConfig(tmp.dir, 'hostile.json', hostileConfig());
    const loaded = await loadConfig(file);
    expect(loaded.supervised).to.equal(false);
    const out = path.join(tmp.dir, 'run');
    const run = await RunDirectory.create(out, loaded.config, loaded.source, {
      configFile: loaded.file,
      baseDir: loaded.baseDir,
      supervised: loaded.supervised,
    });
    const result = await train(loaded, { run });
    expect(result.supervised).to.equal(false);

    const by = (who: string) => attempts.filter((a) => a.by === who);
    for (const who of ['reward', 'reward.score', 'metrics', 'diversity', 'metrics.write', 'diversity.view']) {
      expect(by(who).length, `${who} made its attempts`).to.be.greaterThan(0);
    }
    const leaks = attempts.filter((a) => !/^(refused:CORL_ERR_PLUGIN_CAPABILITY|absent|blocked)$/.test(a.outcome));
    expect(
      leaks,
      'every attempt refused with a coded error, found nothing, or was blocked by a frozen object',
    ).to.deep.equal([]);
    // The attack of the report, exactly: refused with a coded error, at creation and while scoring.
    for (const who of ['reward', 'reward.score', 'metrics', 'diversity']) {
      expect(by(who).find((a) => a.route === 'resolve(corl.GroundTruth).get')?.outcome, who).to.equal(
        'refused:CORL_ERR_PLUGIN_CAPABILITY',
      );
      expect(by(who).find((a) => a.route === 'resolve(corl.Task)')?.outcome, who).to.equal(
        'refused:CORL_ERR_PLUGIN_CAPABILITY',
      );
      expect(by(who).find((a) => a.route === 'container.parent')?.outcome, who).to.equal('absent');
    }
    expect(by('reward').find((a) => a.route === 'create(task)')?.outcome).to.equal(
      'refused:CORL_ERR_PLUGIN_CAPABILITY',
    );
    expect(by('reward').find((a) => a.route === 'create(reward with ground truth)')?.outcome).to.equal(
      'refused:CORL_ERR_PLUGIN_CAPABILITY',
    );
    for (const route of [
      'mutate problem.prompt',
      'mutate completions',
      'mutate supervisor keys',
      'add reference',
      'replace equivalence.key',
      'setPrototypeOf(ctx)',
    ]) {
      expect(by('reward.score').find((a) => a.route === route)?.outcome, route).to.equal('blocked');
    }
    expect(by('reward.score').find((a) => a.route === 'RewardContext.reference')?.outcome).to.equal('absent');
    // Nothing the run wrote holds a reference answer either (the rewards did not follow the labels).
    const rollouts = fs.readFileSync(path.join(out, 'rollouts.jsonl'), 'utf8');
    expect(rollouts).to.not.contain(CANARY);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8')).supervised).to.equal(false);
  });

  it('only a reward source that declares usesGroundTruth holds GROUND_TRUTH and TASK; other kinds never do', async () => {
    const file = writeConfig(
      tmp.dir,
      'supervised.json',
      coRlConfig({ labelFree: false, task: canaryTask, reward: 'corl:ground-truth' }),
    );
    const loaded = await loadConfig(file);
    expect(loaded.supervised).to.equal(true);
    const p = await createRunPlugins(loaded);
    try {
      // The trainer keeps the references for monitoring; plugins of other kinds are still refused.
      expect(p.data!.groundTruth.get('t1')?.answer).to.equal(`2 ${CANARY}`);
      expect(Object.isFrozen(p.data!.train[0])).to.equal(true);
    } finally {
      await p.close();
    }
  });

  it('an @injectable class that @injects GROUND_TRUTH without declaring it is refused with the coded error, not a tsyringe message', async () => {
    @injectable()
    class Sneaky implements RewardSource {
      constructor(@inject(GROUND_TRUTH) private readonly gt: GroundTruth) {}
      async score(ctx: Parameters<RewardSource['score']>[0]) {
        return { rewards: ctx.completions.map(() => (this.gt.size > 0 ? 1 : 0)) };
      }
    }
    const plugin = definePlugin({
      manifest: {
        name: 'test:sneaky-class',
        kind: 'reward',
        description: 'injects ground truth',
        corl: '^0.1.0',
        options: { type: 'object', properties: {}, additionalProperties: false },
      },
      create: fromClass(Sneaky),
    });
    const wire = groundTruthTripwire({ p1: { answer: CANARY } });
    let error: unknown;
    try {
      await createPlugin(
        plugin,
        {},
        {
          groundTruth: wire.groundTruth,
          task: wire.task,
          setup: (c) => {
            c.register(GROUND_TRUTH, { useValue: wire.groundTruth });
          },
        },
      );
    } catch (e) {
      error = e;
    }
    expect(isCorlError(error) && error.code).to.equal('CORL_ERR_PLUGIN_CAPABILITY');
    expect((error as Error).message)
      .to.contain('"corl.GroundTruth"')
      .and.contain('test:sneaky-class');
    expect(wire.touches).to.deep.equal([]);
  });

  it('the same class, declaring usesGroundTruth, is injected the references', async () => {
    @injectable()
    class Honest implements RewardSource {
      constructor(@inject(GROUND_TRUTH) private readonly gt: GroundTruth) {}
      async score(ctx: Parameters<RewardSource['score']>[0]) {
        const answer = this.gt.get(ctx.problem.id)?.answer;
        return { rewards: ctx.completions.map((c) => (c.key === answer ? 1 : 0)) };
      }
    }
    const plugin = definePlugin({
      manifest: {
        name: 'test:honest-class',
        kind: 'reward',
        description: 'reads ground truth',
        corl: '^0.1.0',
        usesGroundTruth: true,
        options: { type: 'object', properties: {}, additionalProperties: false },
      },
      create: fromClass(Honest),
    });
    const source = await createPlugin(plugin, {}, { groundTruth: new MapGroundTruth([['p1', { answer: '4' }]]) });
    const r = await source.score(rewardContext({ keys: ['4', '5', null], supervisors: [['4']] }));
    expect(r.rewards).to.deep.equal([1, 0, 0]);
  });

  it('closing the run disposes every plugin container: a container kept by a plugin resolves nothing afterwards', async () => {
    const file = writeConfig(tmp.dir, 'plain.json', coRlConfig({ task: canaryTask }));
    const loaded = await loadConfig(file);
    let kept: import('tsyringe').DependencyContainer | undefined;
    const probe = definePlugin({
      manifest: {
        name: 'test:keeper',
        kind: 'metrics',
        description: 'keeps its container',
        corl: '^0.1.0',
        options: { type: 'object', properties: {}, additionalProperties: false },
      },
      create(_o, ctx) {
        kept = ctx.container;
        return { write() {} };
      },
    });
    loaded.registry.add(probe);
    const withProbe = { ...loaded, config: { ...loaded.config, metrics: [{ use: 'test:keeper', options: {} }] } };
    const p = await createRunPlugins(withProbe as typeof loaded);
    expect(kept!.resolve('corl.PluginOptions')).to.deep.equal({});
    await p.close();
    expect(() => kept!.resolve('corl.PluginOptions')).to.throw();
  });
});

describe("core/registry: the routes to labels through corl's own API (issue 30), as hostile plugins", function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-label-routes-');
    sightings.length = 0;
  });
  afterEach(() => tmp.cleanup());

  const run = async (overrides: Record<string, unknown>) => {
    const file = writeConfig(
      tmp.dir,
      'routes.json',
      hostileConfig({ reward: 'corl:vote', diversity: 'corl:none', metrics: [], ...overrides }),
    );
    const loaded = await loadConfig(file);
    const out = fs.mkdtempSync(path.join(tmp.dir, 'run-'));
    const run = await RunDirectory.create(out, loaded.config, loaded.source, {
      configFile: loaded.file,
      baseDir: loaded.baseDir,
      supervised: loaded.supervised,
    });
    const t = loaded.config.trainer as unknown as Record<string, unknown>;
    expect(t.steps).to.equal(2);
    return train(loaded, { run });
  };

  it('route 1: a label-free equivalence is never handed a reference (grading uses an equivalence trusted with them)', async () => {
    await run({ equivalence: 'test:peek-equivalence', trainer: { ...trainerOf(), evalEvery: 1 } });
    expect(sightings).to.deep.equal([]);
  });

  it('route 2: a usesGroundTruth getter or function that changes its answer gets no label', async () => {
    await run({ reward: 'test:flip-getter' });
    await run({ reward: 'test:flip-function' });
    expect(sightings).to.deep.equal([]);
  });

  it("route 3: a module's register() cannot reach the registry", async () => {
    await run({});
    expect(sightings).to.deep.equal([]);
  });

  it("route 4: tsyringe's useFactory hands no path back to the registry", async () => {
    await run({ metrics: ['test:factory-thief', 'test:global-thief'] });
    expect(sightings).to.deep.equal([]);
  });
});

function trainerOf(): Record<string, unknown> {
  return (hostileConfig().trainer as Record<string, unknown>) ?? {};
}
