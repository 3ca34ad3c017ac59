import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir, writeConfig } from '../fixtures/configs';
import { openTinyLm, writeTinyLm } from '../fixtures/onnx-lm';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');

function corl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('e2e: evaluation through corl:onnx-lm (a generated optimum-layout model)', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-e2e-onnx-lm-');
    // Room for corl rephrase's instructions (about 200 tokens of this character-level tokenizer).
    writeTinyLm(path.join(tmp.dir, 'models', 'tiny'), { maxPositions: 320 });
  });
  after(() => tmp.cleanup());

  const heldOut = [
    { id: 'h0', prompt: '2+2=', answer: '4' },
    { id: 'h1', prompt: 'abc 12+3=', answer: '15' },
    { id: 'h2', prompt: 'x = 7, y = ', answer: '7' },
  ];
  const config = () => ({
    name: 'onnx-eval',
    seed: 3,
    labelFree: true,
    task: { use: 'corl:inline', options: { train: [{ id: 't1', prompt: '1+1=', answer: '2' }], heldOut } },
    extractor: 'corl:math',
    equivalence: 'corl:exact',
    // The path is relative to the config file's folder.
    agents: [{ name: 'tiny', policy: { use: 'corl:onnx-lm', options: { path: 'models/tiny', threads: 1 } } }],
    topology: 'corl:self',
    reward: 'corl:vote',
    trainer: { steps: 0 },
    eval: { samples: 2, sampling: { temperature: 0, topP: 1, maxTokens: 8 } },
  });

  it('trainer.steps = 0 evaluates the held-out problems through the model (greedy, as the policy samples in process); training is refused', async () => {
    const file = writeConfig(tmp.dir, 'onnx.json', config());
    const out = path.join(tmp.dir, 'run');
    const r = await corl(['train', '-c', file, '--out', out, '-q']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('0 step(s)');
    const rows = fs
      .readFileSync(path.join(out, 'eval', 'step-000000.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((row) => row.id)).to.deep.equal(['h0', 'h1', 'h2']);
    // The same greedy completions, computed here through the policy directly.
    const p = await openTinyLm(path.join(tmp.dir, 'models', 'tiny'));
    try {
      const direct = await p.sample(
        heldOut.map((h) => ({ prompt: h.prompt })),
        { n: 2, temperature: 0, topP: 1, maxTokens: 8, seed: 0 },
      );
      rows.forEach((row, i) => {
        expect(row.meanLength).to.equal(direct[i]![0]!.tokenIds.length);
        expect(row.keys[0]).to.equal(row.keys[1]);
      });
    } finally {
      await p.close();
    }
    const refused = await corl(['train', '-c', file, '--out', path.join(tmp.dir, 'train'), '--steps', '2', '-q']);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('CORL_ERR_POLICY_CANNOT_TRAIN').and.contain('corl:onnx-lm');
  });

  it('corl rephrase runs through the model and writes one row per problem', async () => {
    const file = writeConfig(tmp.dir, 'rephrase.json', config());
    const out = path.join(tmp.dir, 'variants.jsonl');
    const r = await corl(['rephrase', '-c', file, '--out', out, '--variants', '2']);
    expect(r.code, r.stderr).to.equal(0);
    const rows = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((row) => row.id)).to.deep.equal(['t1', 'h0', 'h1', 'h2']);
    for (const row of rows) expect(row.variants).to.be.an('array');
  });

  it('a model folder without a KV cache fails the run with CORL_ERR_BACKEND_MODEL before any sampling', async () => {
    writeTinyLm(path.join(tmp.dir, 'models', 'no-past'), { past: false });
    const cfg = config();
    cfg.agents[0]!.policy.options.path = 'models/no-past';
    const r = await corl([
      'train',
      '-c',
      writeConfig(tmp.dir, 'bad.json', cfg),
      '--out',
      path.join(tmp.dir, 'bad-run'),
      '-q',
    ]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('CORL_ERR_BACKEND_MODEL').and.contain('past_key_values');
  });
});
