import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { container as rootContainer, injectable, inject } from 'tsyringe';
import { EQUIVALENCE, type Equivalence } from '../../../core/contracts/equivalence';
import type { MetricsRecord, MetricsRun, MetricsSink } from '../../../core/contracts/metrics-sink';
import { PLUGIN_OPTIONS } from '../../../core/contracts/plugin';
import { TOPOLOGY, type Topology } from '../../../core/contracts/topology';
import { loadConfig } from '../../../core/config/load';
import { GROUND_TRUTH, MapGroundTruth, type GroundTruth } from '../../../core/contracts/problem';
import type { RewardSource } from '../../../core/contracts/reward-source';
import { isCorlError } from '../../../core/errors';
import { definePlugin, fromClass, registerAll } from '../../../core/registry/define';
import { measuredAgainstReferences } from '../../../core/registry/scope';
import { createRunPlugins } from '../../../core/config/run-plugins';
import { createPlugin, exactEquivalence, groundTruthTripwire, rewardContext } from '../../../core/testing';
import { RunDirectory } from '../../../core/trainer/run-dir';
import { train } from '../../../core/trainer/trainer';
import { coRlConfig, fixture, tempDir, writeConfig } from '../../fixtures/configs';
import { attempts, CANARY, looks, sightings } from '../../fixtures/hostile-plugins';

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
    expect(loaded.readsGroundTruth).to.equal(false);
    const out = path.join(tmp.dir, 'run');
    const run = await RunDirectory.create(out, loaded.config, loaded.source, {
      configFile: loaded.file,
      baseDir: loaded.baseDir,
      supervised: loaded.readsGroundTruth,
    });
    const result = await train(loaded, { run });
    expect(result.readsGroundTruth).to.equal(false);

    const by = (who: string) => attempts.filter((a) => a.by === who);
    for (const who of ['reward', 'reward.score', 'metrics', 'diversity', 'metrics.write', 'diversity.view']) {
      expect(by(who).length, `${who} made its attempts`).to.be.greaterThan(0);
    }
    const leaks = attempts.filter(
      (a) => !/^(refused:CORL_ERR_PLUGIN_(CAPABILITY|INVALID)|absent|blocked)$/.test(a.outcome),
    );
    expect(
      leaks,
      'every attempt refused with a coded error, found nothing, or was blocked by a frozen object',
    ).to.deep.equal([]);
    // No container is handed, under any name; the registration API adds definitions only while register() runs.
    for (const who of ['reward', 'reward.score', 'metrics', 'diversity']) {
      for (const route of ['ctx.container', 'ctx.container.resolve(corl.GroundTruth)', 'walk injected dependencies'])
        expect(by(who).find((a) => a.route === route)?.outcome, `${who}: ${route}`).to.equal('absent');
      for (const route of [
        'mutate ctx.seed',
        'replace ctx.create',
        'add ctx.container',
        "replace equivalence's methods",
      ])
        expect(by(who).find((a) => a.route === route)?.outcome, `${who}: ${route}`).to.equal('blocked');
    }
    expect(by('register').find((a) => a.route === 'walk the registration API')?.outcome).to.equal('absent');
    expect(by('register').find((a) => a.route === 'add a corl: plugin')?.outcome).to.equal(
      'refused:CORL_ERR_PLUGIN_INVALID',
    );
    expect(by('late').find((a) => a.route === 'add after register returned')?.outcome).to.equal(
      'refused:CORL_ERR_PLUGIN_INVALID',
    );
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

  it('only a reward source that declares readsGroundTruth holds GROUND_TRUTH and TASK; other kinds never do', async () => {
    const file = writeConfig(
      tmp.dir,
      'supervised.json',
      coRlConfig({ labelFree: false, task: canaryTask, reward: 'corl:ground-truth' }),
    );
    const loaded = await loadConfig(file);
    expect(loaded.readsGroundTruth).to.equal(true);
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

  it('the same class, declaring readsGroundTruth, is injected the references', async () => {
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
        readsGroundTruth: true,
        options: { type: 'object', properties: {}, additionalProperties: false },
      },
      create: fromClass(Honest),
    });
    const source = await createPlugin(plugin, {}, { groundTruth: new MapGroundTruth([['p1', { answer: '4' }]]) });
    const r = await source.score(rewardContext({ keys: ['4', '5', null], supervisors: [['4']] }));
    expect(r.rewards).to.deep.equal([1, 0, 0]);
  });

  it('closing the run disposes what the run constructed: a class with dispose() is disposed once', async () => {
    const file = writeConfig(tmp.dir, 'plain.json', coRlConfig({ task: canaryTask }));
    const loaded = await loadConfig(file);
    let disposed = 0;
    let injected: unknown;
    @injectable()
    class Keeper implements MetricsSink {
      constructor(@inject(PLUGIN_OPTIONS) readonly options: Readonly<Record<string, unknown>>) {
        injected = options;
      }
      write(): void {}
      dispose(): void {
        disposed++;
      }
    }
    const probe = definePlugin({ manifest: sinkManifest('test:keeper'), create: fromClass(Keeper) });
    loaded.registry.add(probe);
    const withProbe = { ...loaded, config: { ...loaded.config, metrics: [{ use: 'test:keeper', options: {} }] } };
    const p = await createRunPlugins(withProbe as typeof loaded);
    expect(injected).to.deep.equal({});
    await p.close();
    expect(disposed).to.equal(1);
  });

  it('a factory is injected the services it declares, as facades of their methods only', async () => {
    let got: Record<string, unknown> = {};
    const plugin = definePlugin({
      manifest: sinkManifest('test:declares'),
      inject: { equivalence: EQUIVALENCE, topology: TOPOLOGY, options: PLUGIN_OPTIONS },
      create(_o, _ctx, deps) {
        got = deps;
        return { write() {} };
      },
    });
    await createPlugin(plugin, {}, { services: { equivalence: exactEquivalence, topology: ring } });
    expect(Object.keys(got)).to.deep.equal(['equivalence', 'topology', 'options']);
    expect(Object.keys(got.equivalence as object)).to.deep.equal(['key', 'equal']);
    expect(Object.isFrozen(got) && Object.isFrozen(got.equivalence)).to.equal(true);
    expect((got.equivalence as Equivalence).key(' 4 ')).to.equal(exactEquivalence.key(' 4 '));
    expect((got.topology as Topology).supervisors(0, 3)).to.deep.equal([2]);
  });

  it('a declared dependency the plugin is not entitled to, or that the run has not created, is refused at creation', async () => {
    const declaring = (name: string, inject: Record<string, string>) =>
      definePlugin({ manifest: sinkManifest(name), inject, create: () => ({ write() {} }) });
    const wire = groundTruthTripwire({ p1: { answer: CANARY } });
    for (const [name, token, says] of [
      ['test:wants-gt', 'corl.GroundTruth', /does not declare readsGroundTruth/],
      ['test:wants-task', 'corl.Task', /does not declare readsGroundTruth/],
      ['test:wants-registry', 'corl.PluginRegistry', /"corl\.PluginRegistry"/],
      [
        'test:wants-policy',
        'corl.Policy',
        /services the run holds for it \(corl\.PluginOptions, corl\.PluginContext\)/,
      ],
    ] as const) {
      const error = await createPlugin(
        declaring(name, { x: token }),
        {},
        { groundTruth: wire.groundTruth, task: wire.task },
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isCorlError(error, 'CORL_ERR_PLUGIN_CAPABILITY'), name).to.equal(true);
      expect((error as Error).message, name).to.match(says);
    }
    expect(wire.touches).to.deep.equal([]);
  });

  it("no plugin container sees tsyringe's global container: a factory registered there is never called", async () => {
    let handed: unknown;
    rootContainer.register('test.global-factory', {
      useFactory: (c) => {
        handed = c;
        return c;
      },
    });
    @injectable()
    class Reacher implements MetricsSink {
      constructor(@inject('test.global-factory') readonly c: unknown) {}
      write(): void {}
    }
    const error = await createPlugin(
      definePlugin({ manifest: sinkManifest('test:reacher'), create: fromClass(Reacher) }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCorlError(error, 'CORL_ERR_PLUGIN_CAPABILITY')).to.equal(true);
    expect((error as Error).message).to.contain('"test.global-factory"');
    expect(handed).to.equal(undefined);
  });
});

describe('core/registry: what reaches plugins beyond the four routes', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('corl-label-more-')));
  afterEach(() => tmp.cleanup());

  it('a sink the run does not trust with references gets no evaluation record and no metric measured against them', async () => {
    const got: Record<string, MetricsRecord[]> = { plain: [], trusted: [] };
    const configs: Record<string, unknown> = {};
    const recorder = (name: string, key: string, readsReferences?: boolean) =>
      definePlugin({
        manifest: { ...sinkManifest(name), ...(readsReferences ? { readsReferences } : {}) },
        create: () => ({
          start: (run: MetricsRun) => void (configs[key] = run.config),
          write: (r: MetricsRecord) => void got[key]!.push(r),
        }),
      });
    const bare = await loadConfig(writeConfig(tmp.dir, 'bare.json', coRlConfig({ task: canaryTask })));
    bare.registry.add(recorder('test:plain-sink', 'plain'));
    bare.registry.add(recorder('test:trusted-sink', 'trusted', true));
    const metrics = [
      { use: 'test:plain-sink', options: {} },
      { use: 'test:trusted-sink', options: {} },
      { use: 'corl:jsonl', options: { path: path.join(tmp.dir, 'copy.jsonl') } },
    ];
    const withSinks = { ...bare, config: { ...bare.config, metrics } } as typeof bare;
    const out = path.join(tmp.dir, 'run');
    const run = await RunDirectory.create(out, withSinks.config, withSinks.source, {
      baseDir: withSinks.baseDir,
      supervised: false,
    });
    await train(withSinks, { run });
    // An inline task's options are its problems and their answers: only a trusted sink sees them.
    expect(JSON.stringify(configs.trusted)).to.contain(CANARY);
    expect(JSON.stringify(configs.plain)).to.not.contain(CANARY);
    expect((configs.plain as { task: unknown }).task).to.deep.equal({ use: 'corl:inline' });
    const names = (rs: MetricsRecord[]) => [...new Set(rs.flatMap((r) => Object.keys(r.metrics)))];
    expect(got.trusted!.some((r) => r.phase === 'eval')).to.equal(true);
    expect(names(got.trusted!)).to.include.members(['label/accuracy', 'train/accuracy', 'reward/accuracy']);
    expect(got.plain!.some((r) => r.phase === 'eval')).to.equal(false);
    expect(names(got.plain!).filter((n) => /accuracy|^label\/count\//.test(n))).to.deep.equal([]);
    expect(names(got.plain!)).to.include.members(['reward/mean', 'label/labeled_fraction']);
    // The built-in sink, trusted, mirrors metrics.jsonl line for line.
    expect(fs.readFileSync(path.join(tmp.dir, 'copy.jsonl'), 'utf8')).to.equal(
      fs.readFileSync(path.join(out, 'metrics.jsonl'), 'utf8'),
    );
  });

  it('the metrics docs mark exactly the metrics the run withholds from an untrusted sink', () => {
    const doc = fs.readFileSync(path.join(__dirname, '../../../../docs/reference/metrics.md'), 'utf8');
    const marked = [...doc.matchAll(/^\| ([^|]+) \|[^\n]*\*\(ground truth\)\*/gm)].flatMap((m) =>
      [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!.replace(/<[^>]+>/g, 'x')),
    );
    expect(marked.length).to.be.greaterThan(6);
    for (const name of marked) expect(measuredAgainstReferences(name, 'train'), name).to.equal(true);
    for (const name of ['reward/mean', 'label/labeled_fraction', 'label/peer_agreement', 'vote/own_labeled', 'loss/kl'])
      expect(measuredAgainstReferences(name, 'train'), name).to.equal(false);
    expect(measuredAgainstReferences('pair/kappa', 'eval')).to.equal(true);
  });

  it('a reward that does not declare trainedOnLabels cannot create one that was trained on labels', async () => {
    const learned = definePlugin({
      manifest: {
        name: 'test:learned',
        kind: 'reward',
        description: 'trained on labels',
        corl: '^0.1.0',
        trainedOnLabels: true,
        options: { type: 'object', properties: {}, additionalProperties: false },
      },
      create: (): RewardSource => ({ score: async (c) => ({ rewards: c.completions.map(() => 1) }) }),
    });
    const nesting = (name: string, trainedOnLabels: boolean) =>
      definePlugin({
        manifest: {
          name,
          kind: 'reward',
          description: 'creates the learned one',
          corl: '^0.1.0',
          trainedOnLabels,
          options: { type: 'object', properties: {}, additionalProperties: false },
        },
        async create(_o, ctx): Promise<RewardSource> {
          return ctx.create('reward', { use: 'test:learned', options: {} });
        },
      });
    const register = registerAll(learned);
    const error = await createPlugin(nesting('test:hides-it', false), {}, { register }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCorlError(error, 'CORL_ERR_PLUGIN_CAPABILITY'), String(error)).to.equal(true);
    expect((error as Error).message).to.contain('"test:learned", which was trained on labels');
    await createPlugin(nesting('test:says-so', true), {}, { register });
  });
});

function sinkManifest(name: string) {
  return {
    name,
    kind: 'metrics' as const,
    description: 'a test sink',
    corl: '^0.1.0',
    options: { type: 'object', properties: {}, additionalProperties: false } as const,
  };
}

const ring: Topology = { selfSupervised: false, validate: () => undefined, supervisors: (n, N) => [(n + N - 1) % N] };

describe("core/registry: the routes to labels through corl's own API (issue 30), as hostile plugins", function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-label-routes-');
    sightings.length = 0;
    for (const k of Object.keys(looks)) delete looks[k];
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
      supervised: loaded.readsGroundTruth,
    });
    const t = loaded.config.trainer as unknown as Record<string, unknown>;
    expect(t.steps).to.equal(2);
    return train(loaded, { run });
  };

  it('route 1: a label-free equivalence is never handed a reference (grading uses an equivalence trusted with them)', async () => {
    // Grading with it is refused, naming the field and what to do.
    const error = await run({ equivalence: 'test:peek-equivalence' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCorlError(error, 'CORL_ERR_CONFIG_GRADING'), String(error)).to.equal(true);
    expect((error as Error).message).to.match(/equivalence: .*"test:peek-equivalence".*set "grading"/);
    // With a trusted grader, it keys every answer rewards compare and sees no reference: evaluation,
    // monitoring and the supervised baseline's comparisons all go through the grader.
    await run({
      equivalence: 'test:peek-equivalence',
      grading: 'corl:math',
      trainer: { ...trainerOf(), evalEvery: 1 },
    });
    await run({
      labelFree: false,
      reward: 'corl:ground-truth',
      equivalence: 'test:peek-equivalence',
      grading: 'corl:math',
    });
    expect(looks.equivalence).to.be.greaterThan(20);
    expect(sightings).to.deep.equal([]);
  });

  it('route 2: a readsGroundTruth getter or function that changes its answer gets no label', async () => {
    await run({ reward: 'test:flip-getter' });
    await run({ reward: 'test:flip-function' });
    expect(looks['flip-getter']).to.be.greaterThan(2);
    expect(looks['flip-function']).to.be.greaterThan(2);
    expect(sightings).to.deep.equal([]);
  });

  it("route 3: a module's register() cannot reach the registry", async () => {
    await run({});
    expect(looks.register).to.be.greaterThan(0);
    expect(sightings).to.deep.equal([]);
  });

  it("route 4: tsyringe's useFactory hands no path back to the registry", async () => {
    await run({ metrics: ['test:factory-thief', 'test:global-thief'] });
    expect(looks['factory-thief']).to.equal(1);
    expect(looks['global-thief']).to.equal(1);
    expect(sightings).to.deep.equal([]);
  });
});

function trainerOf(): Record<string, unknown> {
  return (hostileConfig().trainer as Record<string, unknown>) ?? {};
}
