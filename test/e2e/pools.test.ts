// A planned comparison over checkpoint pools and a fresh held-out set, through the corl binary:
// each seed index loads the pool members the plan's rule draws, the report's plan check verifies
// them run by run, and a member changed after the plan stops the comparison with a coded error.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileSha256 } from '../../core/compare/plan';
import { tempDir, writeConfig } from '../fixtures/configs';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');
const corl = (args: string[], cwd: string) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', cwd });
const json = (file: string): any => JSON.parse(fs.readFileSync(file, 'utf8'));

const tiny = { family: 'fa', dModel: 16, layers: 1, heads: 2, context: 96, threads: 1, optimizer: { lr: 0.003 } };
const task = { use: 'corl:arith', options: { train: 8, heldOut: 4, heldOutSeed: 1, pretrain: { size: 64 } } };
const common = {
  seed: 5,
  labelFree: true,
  task,
  topology: 'corl:ring',
  reward: 'corl:vote',
  eval: { samples: 2, sampling: { temperature: 1, maxTokens: 40 } },
};

describe('e2e: a plan with checkpoint pools and a fresh held-out set', function () {
  this.timeout(300000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-pools-e2e-');
    // four pretraining seeds of one recipe: agents a0..a3 of one config (agent seed = seed + index)
    const recipe = writeConfig(tmp.dir, 'recipe.json', {
      ...common,
      name: 'recipe',
      agents: [0, 1, 2, 3].map((i) => ({ name: `a${i}`, policy: { use: 'corl:transformer', options: tiny } })),
      pretrain: { steps: 4, batchSize: 4, logEvery: 2 },
    });
    const r = corl(['pretrain', '-c', recipe, '--out', 'models/pool', '-q'], tmp.dir);
    expect(r.status, r.stderr).to.equal(0);
    const agents = [0, 1].map((i) => ({
      name: `agent${i}`,
      policy: {
        use: 'corl:transformer',
        options: { ...tiny, checkpoint: './models/pool/a0', checkpointOptimizer: false },
      },
    }));
    const trainer = { steps: 1, batchSize: 2, groupSize: 2, evalEvery: 1, sampling: { maxTokens: 40 } };
    writeConfig(tmp.dir, 'base.json', { ...common, name: 'base', agents, trainer: { ...trainer, steps: 0 } });
    writeConfig(tmp.dir, 'co.json', { ...common, name: 'co', agents, trainer });
    const member = (i: number) => {
      const dir = path.join(tmp.dir, 'models', 'pool', `a${i}`);
      return {
        path: `models/pool/a${i}`,
        sha256: {
          'model.onnx': fileSha256(path.join(dir, 'model.onnx')),
          'corl.json': fileSha256(path.join(dir, 'corl.json')),
        },
      };
    };
    fs.writeFileSync(
      path.join(tmp.dir, 'plan.json'),
      JSON.stringify({
        plan: 1,
        name: 'pools',
        configs: ['base', 'co'].map((n) => ({
          file: `${n}.json`,
          name: n,
          sha256: fileSha256(path.join(tmp.dir, `${n}.json`)),
        })),
        split: 'held-out',
        primary: 'change',
        pairs: [{ a: 'co', b: 'base', role: 'primary' }],
        margin: 90,
        alpha: 0.05,
        seeds: { first: 0, looks: [2] },
        boundary: 'fixed',
        stop: 'last-look',
        heldOut: { seed: 1, size: 4 },
        checkpoints: { pools: { fa: [0, 1, 2, 3].map(member) } },
      }),
    );
  });
  after(() => tmp.cleanup());

  it('each seed index loads the members the rule draws; the plan check verifies them and the fresh set; a changed member stops it', () => {
    const r = corl(['compare', '--plan', 'plan.json', '--out', 'cmp', '--progress', 'none'], tmp.dir);
    expect(r.status, r.stderr).to.equal(0);
    // seed index i: agent 0 gets member i mod 4, agent 1 member (i + 1) mod 4, in every config alike
    for (const c of ['base', 'co'])
      for (const i of [0, 1]) {
        const source = json(path.join(tmp.dir, 'cmp', c, `seed-${i}`, 'config.source.json'));
        expect(
          source.agents.map((a: any) => a.policy.options.checkpoint),
          `${c} seed ${i}`,
        ).to.deep.equal([`./models/pool/a${i}`, `./models/pool/a${i + 1}`]);
        expect(json(path.join(tmp.dir, 'cmp', c, `seed-${i}`, 'config.json')).task.options).to.include({
          heldOutSeed: 1,
          heldOut: 4,
        });
      }
    const v = json(path.join(tmp.dir, 'cmp', 'verdicts.json'));
    expect(v.followed, JSON.stringify(v.checks)).to.equal(true);
    expect(v.checks.map((c: any) => c.text).join('\n'))
      .to.contain("base checkpoints drawn from the plan's pools (fa 4) by seed index")
      .and.contain('the fresh set of heldOutSeed 1 (4 problems)');
    // a member retrained after the plan: the next call refuses before running anything
    fs.appendFileSync(path.join(tmp.dir, 'models', 'pool', 'a2', 'model.onnx'), 'x');
    const again = corl(['compare', '--plan', 'plan.json', '--out', 'cmp2', '--progress', 'none'], tmp.dir);
    expect(again.status).to.not.equal(0);
    expect(again.stderr)
      .to.contain('CORL_ERR_PLAN_CONFIG_CHANGED')
      .and.contain('models/pool/a2/model.onnx')
      .and.not.match(/\n\s+at /);
    expect(fs.existsSync(path.join(tmp.dir, 'cmp2', 'co'))).to.equal(false);
  });
});
