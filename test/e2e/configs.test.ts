// The shipped baselines of both regimes (configs/*.json: the slip regime; configs/systematic/*.json),
// their pretraining recipes (configs/pretrain/<regime>/*.json) and the base checkpoints they load
// (models/<regime>/): valid, label-free where they claim to be, differing from the Co-RL config of
// their regime only where their baseline differs, and runnable end to end through the binary.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../core/config/load';
import { RewardServer } from '../../core/serve/server';
import { loadServeConfig } from '../../core/serve/setup';
import { instantiate } from '../../core/registry/instantiate';
import type { RewardSource } from '../../core/contracts/reward-source';
import { createPlugin, rewardContext } from '../../core/testing';
import { learnedVerifierReward } from '../../plugins/rewards/learned-verifier';
import { arithTask } from '../../plugins/tasks';
import { tempDir, writeConfig } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const CONFIGS = path.join(ROOT, 'configs');
const BIN = path.join(ROOT, 'bin/corl.js');

const read = (file: string): any => JSON.parse(fs.readFileSync(file, 'utf8'));
/** A policy's options without what a checkpoint's recipe and an RL config may set apart. */
function architecture(options: Record<string, unknown>): Record<string, unknown> {
  const rest = { ...options };
  for (const k of ['checkpoint', 'checkpointOptimizer', 'threads', 'optimizer']) delete rest[k];
  return rest;
}
const jsonIn = (dir: string): string[] =>
  fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();

/** A regime: its configs folder, its checkpoints (relative to the configs) and its pretraining recipes. */
const REGIMES = [
  { name: 'slips', configs: CONFIGS, models: '../models/slips', recipes: path.join(CONFIGS, 'pretrain', 'slips') },
  {
    name: 'systematic',
    configs: path.join(CONFIGS, 'systematic'),
    models: '../../models/systematic',
    recipes: path.join(CONFIGS, 'pretrain', 'systematic'),
  },
];

/** A config without the fields a baseline is allowed to change. */
function skeleton(c: any): unknown {
  const {
    name,
    description,
    labelFree,
    topology,
    reward,
    diversity,
    interaction,
    agents,
    trainer,
    eval: ev,
    ...rest
  } = c;
  void interaction;
  void name;
  void description;
  void labelFree;
  void topology;
  void reward;
  void diversity;
  void agents;
  const { steps, ...tr } = trainer;
  void steps;
  const { ensemble, ...e } = ev;
  void ensemble;
  return { ...rest, trainer: tr, eval: e };
}

describe('e2e: shipped configs and base checkpoints', function () {
  this.timeout(600000);

  it('the shipped serve configs (configs/serve/) load, are label-free, and serve a Co-RL exchange', async () => {
    const dir = path.join(CONFIGS, 'serve');
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(files).to.include.members(['co-rl.json', 'ttrl.json']);
    const tmp = tempDir('corl-serve-cfg-');
    try {
      for (const f of files) {
        const served = await loadServeConfig(path.join(dir, f));
        expect(served.loaded.readsGroundTruth, f).to.equal(false);
        expect(served.config.name, f).to.equal(`serve-${f.replace(/\.json$/, '')}`);
      }
      const server = await RewardServer.start(await loadServeConfig(path.join(dir, 'co-rl.json')), {
        port: 0,
        journal: path.join(tmp.dir, 'j.jsonl'),
      });
      try {
        const url = `http://127.0.0.1:${server.address.port}/v1/groups`;
        const post = (agent: string, answers: string[]) =>
          fetch(url, {
            method: 'POST',
            body: JSON.stringify({
              agent,
              step: 0,
              groups: [{ id: 'p', completions: answers.map((a) => `so \\boxed{${a}}`) }],
            }),
          }).then((r) => r.json() as Promise<any>);
        // agent-0 says 3 (x5) / 4 (x3); agent-1 says 4 (x6) / 3 (x2). Ring: 0 is rewarded by 1's label (4), 1 by 0's (3).
        const [r0, r1] = await Promise.all([
          post('agent-0', ['3', '3', '4', '3', '3', '4', '3', '4']),
          post('agent-1', ['4', '4', '3', '4', '4', '4', '3', '4']),
        ]);
        expect(r0.groups[0].rewards).to.deep.equal([0, 0, 1, 0, 0, 1, 0, 1]);
        expect(r1.groups[0].rewards).to.deep.equal([0, 0, 1, 0, 0, 0, 1, 0]);
      } finally {
        await server.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  for (const R of REGIMES) {
    const shipped = jsonIn(R.configs);
    it(`${R.name}: ships every baseline the benchmark names, each valid, named after its file and carrying $schema`, async () => {
      const names = shipped.map((f) => f.replace(/\.json$/, ''));
      expect(names).to.include.members([
        'base',
        'gt',
        'ttrl',
        'co-rl',
        'co-rl-same',
        'co-rl-diff',
        'co-rl-diff-plus',
        'rent',
        'intuitor',
        'n3-ring',
        'families',
      ]);
      for (const f of [
        ...shipped.map((s) => path.join(R.configs, s)),
        ...jsonIn(R.recipes).map((s) => path.join(R.recipes, s)),
      ]) {
        const raw = read(f);
        expect(raw.$schema, f).to.be.a('string');
        expect(fs.existsSync(path.resolve(path.dirname(f), raw.$schema)), `${f}: $schema resolves`).to.equal(true);
        const loaded = await loadConfig(f);
        if (!f.startsWith(R.recipes)) expect(loaded.config.name, f).to.equal(path.basename(f, '.json'));
      }
    });

    it(`${R.name}: only the ground-truth baselines (gt, MAPoRL's verifiers) use labels; the rest are provably label-free`, async () => {
      const readers = ['gt.json', 'maporl.json'];
      // MAPoRL's learned verifier reads no labels, but was trained on them.
      const trained = ['maporl-learned.json'];
      for (const f of shipped) {
        const loaded = await loadConfig(path.join(R.configs, f));
        expect(loaded.readsGroundTruth, f).to.equal(readers.includes(f));
        expect(loaded.trainedOnLabels, f).to.equal(trained.includes(f));
        expect(loaded.config.labelFree, f).to.equal(!readers.includes(f) && !trained.includes(f));
      }
    });

    it(`${R.name}: baselines differ from co-rl only in the selections that define them`, () => {
      const co = read(path.join(R.configs, 'co-rl.json'));
      for (const f of shipped) expect(skeleton(read(path.join(R.configs, f))), f).to.deep.equal(skeleton(co));
      const diff = read(path.join(R.configs, 'co-rl-diff.json'));
      expect({ ...diff, name: 'co-rl', description: co.description }).to.deep.equal(co);
      expect(read(path.join(R.configs, 'ttrl.json')).topology).to.equal('corl:self');
      expect(read(path.join(R.configs, 'gt.json')).reward).to.equal('corl:ground-truth');
      expect(read(path.join(R.configs, 'rent.json')).reward).to.deep.equal({
        use: 'corl:intrinsic',
        options: { method: 'rent' },
      });
      expect(read(path.join(R.configs, 'intuitor.json')).reward).to.deep.equal({
        use: 'corl:intrinsic',
        options: { method: 'intuitor' },
      });
      expect(read(path.join(R.configs, 'co-rl-diff-plus.json')).diversity.use).to.equal('corl:rephrase');
      // MAPoRL: co-rl-diff with a debate scored by the ground-truth verifier. Only the slip regime's
      // folder has it: the systematic models were not pretrained on discussion turns, so the systematic
      // regime's CoMAS setting is its own folder over its own checkpoints (configs/systematic/interaction/).
      if (shipped.includes('maporl.json')) {
        const { interaction, reward, labelFree, name, description, ...maporl } = read(
          path.join(R.configs, 'maporl.json'),
        );
        void name;
        void description;
        expect([interaction.use, reward, labelFree]).to.deep.equal(['corl:debate', 'corl:gt-verifier', false]);
        const { reward: _r, labelFree: _l, name: _n, description: _d, ...rest } = diff;
        expect(maporl).to.deep.equal(rest);
      }
      if (R.name === 'slips') expect(shipped).to.include('maporl.json');
      // MAPoRL with its learned verifier: maporl.json with the reward swapped, nothing else.
      if (R.name === 'slips') {
        const { reward, name, description, ...learned } = read(path.join(R.configs, 'maporl-learned.json'));
        const { reward: _r, name: _n, description: _d, ...maporl } = read(path.join(R.configs, 'maporl.json'));
        expect([name, reward]).to.deep.equal([
          'maporl-learned',
          { use: 'corl:learned-verifier', options: { checkpoint: '../models/verifiers/arith-slips' } },
        ]);
        expect(description).to.be.a('string');
        expect(learned).to.deep.equal(maporl);
      } else expect(shipped).to.not.include('maporl-learned.json');
      expect(read(path.join(R.configs, 'base.json')).trainer.steps).to.equal(0);
      // Families: co-rl-diff pairs alpha with beta, co-rl-same alpha with its second seed, n3-ring all three.
      const families = (f: string) =>
        read(path.join(R.configs, f)).agents.map(
          (a: any) => a.policy.options.family + ':' + a.policy.options.checkpoint,
        );
      expect(families('co-rl-diff.json')).to.deep.equal([`alpha:${R.models}/alpha`, `beta:${R.models}/beta`]);
      expect(families('co-rl-same.json')).to.deep.equal([`alpha:${R.models}/alpha`, `alpha:${R.models}/alpha-s1`]);
      expect(families('n3-ring.json')).to.deep.equal([
        `alpha:${R.models}/alpha`,
        `beta:${R.models}/beta`,
        `alpha:${R.models}/alpha-s1`,
      ]);
      // CoMAS: co-rl-diff (the two families in a ring, the vote scoring turns for monitoring) plus its
      // interaction; in configs/systematic/ only under interaction/, like MAPoRL.
      if (R.name === 'slips') {
        const comas = read(path.join(R.configs, 'comas.json'));
        expect({ ...comas, interaction: undefined, name: diff.name, description: diff.description }).to.deep.equal({
          ...diff,
          interaction: undefined,
        });
        expect(comas.interaction.use).to.equal('corl:comas');
      } else expect(shipped).to.not.include('comas.json');
    });

    it(`${R.name}: each shipped checkpoint loads under the architecture its configs and its pretraining recipe give`, async () => {
      const n3 = await loadConfig(path.join(R.configs, 'n3-ring.json'));
      for (const [i, agent] of n3.config.agents.entries()) {
        const policy = await instantiate('policy', agent.policy, {
          registry: n3.registry,
          seed: i,
          baseDir: n3.baseDir,
        });
        try {
          const d = policy.describe();
          expect(d.family).to.equal((agent.policy.options as any).family);
          expect(d.details).to.include({ optimizerSteps: 0, pretrainSteps: 0 }); // checkpointOptimizer: false
          const sidecar = read(path.resolve(R.configs, R.models, agent.name!, 'corl.json'));
          expect(sidecar.training.pretrainSteps).to.equal(3000);
        } finally {
          await policy.close?.();
        }
        // The recipe that made the checkpoint builds the same architecture.
        const recipe = (await loadConfig(path.join(R.recipes, `${agent.name}.json`))).config.agents[0]!.policy.options;
        expect(architecture(recipe), agent.name).to.deep.equal(architecture(agent.policy.options));
      }
    });
  }

  // The CoMAS setting of each regime: co-rl-diff, ttrl, maporl, comas (and base) over checkpoints that
  // were pretrained with discussion turns. The slip regime's are its own configs; the systematic
  // regime's live in configs/systematic/interaction/ and load models/systematic-discussion/.
  const INTERACTION = [
    { name: 'slips', configs: CONFIGS, models: '../models/slips', recipes: path.join(CONFIGS, 'pretrain', 'slips') },
    {
      name: 'systematic',
      configs: path.join(CONFIGS, 'systematic', 'interaction'),
      models: '../../../models/systematic-discussion',
      recipes: path.join(CONFIGS, 'pretrain', 'systematic-discussion'),
    },
  ];
  const SETTING = ['base', 'co-rl-diff', 'ttrl', 'maporl', 'comas'];

  for (const R of INTERACTION) {
    it(`${R.name}: the CoMAS setting's configs are valid, named after their files, label-free except MAPoRL, and differ from co-rl-diff only where the method does`, async () => {
      for (const n of SETTING) {
        const f = path.join(R.configs, `${n}.json`);
        const raw = read(f);
        expect(fs.existsSync(path.resolve(path.dirname(f), raw.$schema)), `${f}: $schema resolves`).to.equal(true);
        const loaded = await loadConfig(f);
        expect(loaded.config.name, f).to.equal(n);
        expect(loaded.readsGroundTruth, f).to.equal(n === 'maporl');
      }
      const { name: _n, description: _d, ...diff } = read(path.join(R.configs, 'co-rl-diff.json'));
      const method = (n: string): unknown => {
        const { name, description, ...rest } = read(path.join(R.configs, `${n}.json`));
        void name;
        void description;
        return rest;
      };
      expect(method('base')).to.deep.equal({ ...diff, trainer: { ...diff.trainer, steps: 0 } });
      expect(method('ttrl')).to.deep.equal({ ...diff, topology: 'corl:self' });
      expect(method('maporl')).to.deep.equal({
        ...diff,
        labelFree: false,
        reward: 'corl:gt-verifier',
        interaction: { use: 'corl:debate', options: { rounds: 2, share: 'answer' } },
      });
      expect(method('comas')).to.deep.equal({
        ...diff,
        interaction: {
          use: 'corl:comas',
          options: {
            cycles: 1,
            share: 'answer',
            judge: { use: 'corl:policy-judge', options: { agent: 'all', samples: 4 } },
          },
        },
      });
      const families = read(path.join(R.configs, 'co-rl-diff.json')).agents.map(
        (a: any) => a.policy.options.family + ':' + a.policy.options.checkpoint,
      );
      expect(families).to.deep.equal([`alpha:${R.models}/alpha`, `beta:${R.models}/beta`]);
    });
  }

  it("systematic: the CoMAS setting keeps the systematic regime's budget and recipes, adding only discussion turns and a validation split", () => {
    const sys = path.join(CONFIGS, 'systematic');
    const recipe = (dir: string, a: string) => read(path.join(CONFIGS, 'pretrain', dir, `${a}.json`));
    // Configs: configs/systematic/co-rl-diff.json with the new checkpoints, alpha's wider context
    // (a discussion prompt and its solution do not fit in 64 characters) and a validation split.
    const plain = read(path.join(sys, 'co-rl-diff.json'));
    const inter = read(path.join(sys, 'interaction', 'co-rl-diff.json'));
    const expected = JSON.parse(JSON.stringify(plain));
    expected.$schema = '../../../schema/corl.schema.json';
    expected.description = inter.description;
    expected.task.options.validation = 200;
    for (const a of expected.agents) a.policy.options.checkpoint = `../../../models/systematic-discussion/${a.name}`;
    expected.agents[0].policy.options.context = 96;
    expect(inter).to.deep.equal(expected);
    expect(inter.trainer).to.deep.include({ steps: 150, batchSize: 16, groupSize: 8, loss: { type: 'bnpo' } });
    // Recipes: the systematic ones plus the slip recipes' discussion turns, the validation split kept
    // out of the corpus, and alpha's context (its thread count does not change the recipe).
    for (const a of ['alpha', 'beta']) {
      const r = recipe('systematic', a);
      const d = recipe('systematic-discussion', a);
      const want = JSON.parse(JSON.stringify(r));
      want.name = `pretrain-systematic-discussion-${a}`;
      want.description = d.description;
      want.task.options.pretrain.discussion = recipe('slips', a).task.options.pretrain.discussion;
      want.task.options.validation = 200;
      want.agents[0].policy.options.context = d.agents[0].policy.options.context;
      want.agents[0].policy.options.threads = d.agents[0].policy.options.threads;
      expect(d, a).to.deep.equal(want);
      const inConfig = inter.agents.find((x: any) => x.name === a).policy.options.context;
      expect(d.agents[0].policy.options.context, a).to.equal(inConfig);
    }
  });

  it('systematic: the discussion-reading checkpoints load under the architecture their configs and recipes give', async () => {
    const dir = path.join(CONFIGS, 'systematic', 'interaction');
    const co = await loadConfig(path.join(dir, 'co-rl-diff.json'));
    for (const [i, agent] of co.config.agents.entries()) {
      const policy = await instantiate('policy', agent.policy, {
        registry: co.registry,
        seed: i,
        baseDir: co.baseDir,
      });
      try {
        expect(policy.describe().family).to.equal((agent.policy.options as any).family);
        expect(policy.describe().details).to.include({ optimizerSteps: 0, pretrainSteps: 0 });
      } finally {
        await policy.close?.();
      }
      const folder = path.join(ROOT, 'models', 'systematic-discussion', agent.name!);
      expect(fs.readdirSync(folder).sort()).to.deep.equal([
        'corl.json',
        'model.onnx',
        'optimizer.bin',
        'pretrain-metrics.jsonl',
      ]);
      expect(read(path.join(folder, 'corl.json')).training.pretrainSteps).to.equal(3000);
      const recipe = (await loadConfig(path.join(CONFIGS, 'pretrain', 'systematic-discussion', `${agent.name}.json`)))
        .config.agents[0]!.policy.options;
      expect(architecture(recipe), agent.name).to.deep.equal(architecture(agent.policy.options));
    }
  });

  it('the default job runs through the binary: co-rl.json on a small budget prints base and final accuracy and the report', () => {
    const tmp = tempDir('corl-default-');
    try {
      const c = read(path.join(CONFIGS, 'co-rl.json'));
      for (const a of c.agents) a.policy.options.checkpoint = path.resolve(CONFIGS, a.policy.options.checkpoint);
      c.$schema = path.join(ROOT, 'schema/corl.schema.json');
      c.trainer = { ...c.trainer, steps: 2, batchSize: 2, groupSize: 4, evalEvery: 0, checkpointEvery: 0 };
      c.eval = { ...c.eval, maxProblems: 6, samples: 4, ensemble: 2 };
      const file = writeConfig(tmp.dir, 'co-rl.json', c);
      const out = path.join(tmp.dir, 'run');
      const r = spawnSync(process.execPath, [BIN, 'train', '-c', file, '--out', out], { encoding: 'utf8' });
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout)
        .to.contain('label-free run: 2 step(s)')
        .and.match(/alpha\s+alpha\s+\d+\.\d%\s+\d+\.\d%/)
        .and.match(/beta\s+beta\s+\d+\.\d%/);
      expect(r.stdout).to.contain(`report: ${path.join(out, 'report.html')}`);
      const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
      expect(html)
        .to.contain('<svg')
        .and.not.match(/<script[^>]+src=|<link[^>]+href="http/);
      const metrics = fs
        .readFileSync(path.join(out, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const evalRows = metrics.filter((m) => m.phase === 'eval' && m.agent === 0);
      expect(evalRows.map((m) => m.step)).to.deep.equal([0, 2]);
      expect(evalRows[0].metrics).to.have.property('eval/maj@4');
      expect(metrics.some((m) => m.phase === 'eval' && m.metrics['ensemble/maj@4'] !== undefined)).to.equal(true);
      expect(metrics.some((m) => m.phase === 'eval' && m.metrics['pair/0-1/kappa'] !== undefined)).to.equal(true);
    } finally {
      tmp.cleanup();
    }
  });

  it('maporl-learned.json runs a short debate through the binary, its turns scored by the shipped verifier', async () => {
    const tmp = tempDir('corl-maporl-learned-');
    try {
      const c = read(path.join(CONFIGS, 'maporl-learned.json'));
      for (const a of c.agents) a.policy.options.checkpoint = path.resolve(CONFIGS, a.policy.options.checkpoint);
      c.reward.options.checkpoint = path.resolve(CONFIGS, c.reward.options.checkpoint);
      c.$schema = path.join(ROOT, 'schema/corl.schema.json');
      c.trainer = { ...c.trainer, steps: 1, batchSize: 2, groupSize: 2, evalEvery: 0, checkpointEvery: 0 };
      c.trainer.saveRollouts = true;
      c.eval = { ...c.eval, maxProblems: 2, samples: 2, ensemble: 2 };
      const file = writeConfig(tmp.dir, 'maporl-learned.json', c);
      const out = path.join(tmp.dir, 'run');
      const r = spawnSync(process.execPath, [BIN, 'train', '-c', file, '--out', out], { encoding: 'utf8' });
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout).to.contain('supervised run (a reward source was trained on labels): 1 step(s)');
      // Every turn's score is the one the plugin gives in this process for the same problem and text.
      const reward = (await createPlugin(learnedVerifierReward, c.reward.options)) as RewardSource;
      try {
        const task = (await loadConfig(file)).config.task;
        const arith = await createPlugin(arithTask, task.options);
        const prompts = new Map((await arith.load()).train.map((p) => [p.id, p.prompt] as const));
        const rollouts = fs
          .readFileSync(path.join(out, 'rollouts.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l));
        expect(rollouts).to.have.length(2 * 2 * 3);
        for (const row of rollouts) {
          const problem = { id: row.id, prompt: prompts.get(row.id)! };
          const texts = row.completions.map((x: { text: string }) => x.text);
          const ctx = rewardContext({ keys: texts.map(() => null), texts, problem });
          const expected = (await reward.score(ctx)).rewards;
          row.completions.forEach((x: { score: number }, k: number) => {
            expect(x.score).to.be.within(0, 1);
            expect(x.score).to.be.closeTo(expected[k]!, 1e-9);
          });
        }
      } finally {
        await reward.close?.();
      }
    } finally {
      tmp.cleanup();
    }
  });
});
