import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, inlineTask, tempDir, writeConfig } from '../../../fixtures/configs';

const BIN = path.resolve(__dirname, '../../../../../bin/corl.js');

function corl(args: string[], cwd: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', cwd });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const tiny = { dModel: 16, layers: 1, heads: 2, context: 48, optimizer: { lr: 0.003 } };
const solutions = {
  use: 'corl:inline',
  options: {
    train: inlineTask.options.train.map((r) => ({ ...r, solution: ` so \\boxed{${r.answer}}` })),
    heldOut: inlineTask.options.heldOut,
  },
};

function config(agents: unknown[], task: unknown = solutions) {
  return {
    name: 'pretrain-fixture',
    seed: 5,
    task,
    agents,
    topology: agents.length > 1 ? 'corl:ring' : 'corl:self',
    reward: 'corl:vote',
    eval: { maxProblems: 2, sampling: { temperature: 0, maxTokens: 12 } },
    pretrain: { steps: 6, batchSize: 4, logEvery: 3 },
  };
}

describe('core/cli/commands/pretrain (corl pretrain)', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-pretrain-');
  });
  afterEach(() => tmp.cleanup());

  it('pretrains one agent into a checkpoint that a training config then starts from', () => {
    const agents = [
      { name: 'a', policy: { use: 'corl:transformer', options: tiny } },
      { name: 'b', policy: { use: 'corl:transformer', options: { ...tiny, norm: 'rmsnorm' } } },
    ];
    const file = writeConfig(tmp.dir, 'p.json', config(agents));
    const r = corl(['pretrain', '-c', file, '--agent', '1', '--out', 'models/b'], tmp.dir);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr)
      .to.match(/pretrain b step 3\/6 loss \d/)
      .and.match(/step 6\/6/);
    expect(r.stdout).to.contain('transformer-rmsnorm');
    const dir = path.join(tmp.dir, 'models/b');
    expect(fs.readdirSync(dir).sort()).to.deep.equal([
      'corl.json',
      'model.onnx',
      'optimizer.bin',
      'pretrain-metrics.jsonl',
    ]);
    const side = JSON.parse(fs.readFileSync(path.join(dir, 'corl.json'), 'utf8'));
    expect(side.training).to.deep.equal({ optimizerSteps: 6, updates: 0, pretrainSteps: 6 });
    const lines = fs
      .readFileSync(path.join(dir, 'pretrain-metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => `${l.phase}:${l.step}`)).to.deep.equal(['pretrain:3', 'pretrain:6', 'pretrain-eval:6']);
    // The same agent starts training from it.
    const train = writeConfig(tmp.dir, 't.json', {
      ...config([
        agents[0],
        {
          name: 'b',
          policy: { use: 'corl:transformer', options: { ...tiny, norm: 'rmsnorm', checkpoint: 'models/b' } },
        },
      ]),
      trainer: { steps: 1, batchSize: 2, groupSize: 2, evalEvery: 0, sampling: { maxTokens: 8 } },
      eval: { atStart: false, maxProblems: 1, sampling: { maxTokens: 8 } },
    });
    const t = corl(['train', '-c', train, '--out', 'run', '-q'], tmp.dir);
    expect(t.code, t.stderr).to.equal(0);
    // A checkpoint of another architecture is refused, naming the field.
    const wrong = writeConfig(tmp.dir, 'w.json', {
      ...config([{ name: 'b', policy: { use: 'corl:transformer', options: { ...tiny, checkpoint: 'models/b' } } }]),
    });
    const w = corl(['pretrain', '-c', wrong, '--out', 'x'], tmp.dir);
    expect(w.code).to.equal(1);
    expect(w.stderr).to.match(/CORL_ERR_POLICY_CHECKPOINT.*architecture.norm/);
  });

  it('several agents get a folder each', () => {
    const agents = [
      { name: 'a', policy: { use: 'corl:transformer', options: tiny } },
      { name: 'b', policy: { use: 'corl:transformer', options: tiny } },
    ];
    const file = writeConfig(tmp.dir, 'p.json', config(agents));
    const r = corl(['pretrain', '-c', file, '--out', 'models', '--steps', '2', '-q'], tmp.dir);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.equal('');
    expect(fs.readdirSync(path.join(tmp.dir, 'models')).sort()).to.deep.equal(['a', 'b', 'pretrain-metrics.jsonl']);
  });

  it('bad input: no pretraining text, a policy that cannot pretrain, an unknown agent, no --out', () => {
    const agents = [{ name: 'a', policy: { use: 'corl:transformer', options: tiny } }];
    const noText = writeConfig(tmp.dir, 'n.json', config(agents, inlineTask));
    const r1 = corl(['pretrain', '-c', noText, '--out', 'm'], tmp.dir);
    expect(r1.code).to.equal(1);
    expect(r1.stderr).to.match(/CORL_ERR_TASK_DATA.*pretraining text/);
    const cat = writeConfig(tmp.dir, 'c.json', { ...coRlConfig(), task: solutions });
    const r2 = corl(['pretrain', '-c', cat, '--out', 'm'], tmp.dir);
    expect(r2.code).to.equal(1);
    expect(r2.stderr).to.match(/CORL_ERR_POLICY_CANNOT_TRAIN.*pretrainStep/);
    const file = writeConfig(tmp.dir, 'p.json', config(agents));
    const r3 = corl(['pretrain', '-c', file, '--agent', '3', '--out', 'm'], tmp.dir);
    expect(r3.code).to.equal(2);
    expect(r3.stderr).to.match(/CORL_ERR_CLI_USAGE.*--agent in \[0, 0\]/);
    const r4 = corl(['pretrain', '-c', file], tmp.dir);
    expect(r4.code).to.equal(2);
    expect(r4.stderr).to.match(/CORL_ERR_CLI_USAGE.*--out/);
  });

  it("pretrain.corpus trains on its rows instead of the task's text, prompts as context only, and skips pass@1", () => {
    const rows = [
      { prompt: '1+1=2 Verdict:', completion: 'Y', extra: 'ignored' },
      { prompt: '1+1=3 Verdict:', completion: 'N' },
    ];
    fs.writeFileSync(path.join(tmp.dir, 'verdicts.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n\n');
    const agents = [{ name: 'v', policy: { use: 'corl:transformer', options: tiny } }];
    const c = config(agents);
    const file = writeConfig(tmp.dir, 'v.json', { ...c, pretrain: { ...c.pretrain, corpus: 'verdicts.jsonl' } });
    const r = corl(['pretrain', '-c', file, '--out', 'models/v'], tmp.dir);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/v\s+\S+\s+6\s+\d+\.\d+\s+-\s/);
    const lines = fs
      .readFileSync(path.join(tmp.dir, 'models/v/pretrain-metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // Trained tokens per step: each of the 4 texts trains its verdict and the end token (2), never
    // its prompt; the task's worked solutions would train more.
    for (const l of lines.filter((x) => x.phase === 'pretrain')) expect(l.metrics['pretrain/tokens']).to.equal(8);
    for (const l of lines) expect(l.metrics).to.not.have.property('eval/accuracy');
    // Bad corpora: a missing file, a row without a completion, a line that is not JSON.
    const bad = (name: string, text: string | null) => {
      if (text !== null) fs.writeFileSync(path.join(tmp.dir, name), text);
      const f = writeConfig(tmp.dir, `bad-${name}.json`, { ...c, pretrain: { ...c.pretrain, corpus: name } });
      return corl(['pretrain', '-c', f, '--out', 'models/bad'], tmp.dir);
    };
    expect(bad('missing.jsonl', null).stderr).to.match(/^CORL_ERR_TASK_DATA.*readable pretraining corpus/);
    expect(bad('no-completion.jsonl', '{"prompt": "a"}\n').stderr)
      .to.match(/^CORL_ERR_TASK_DATA/)
      .and.contain('no-completion.jsonl:1');
    expect(bad('not-json.jsonl', '{"prompt": "a", "completion": "Y"}\n{oops\n').stderr)
      .to.match(/^CORL_ERR_TASK_DATA/)
      .and.contain('not-json.jsonl:2');
  });
});
