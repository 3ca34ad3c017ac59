import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir, writeConfig } from '../fixtures/configs';
import { FakeOpenAI } from '../fixtures/openai-server';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');

/** The CLI in a child process, awaited without blocking the fixture server in this process. */
function corl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, CORL_E2E_KEY: 'sk-e2e' } });
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

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A "vision model": it reads the letter written in the image bytes it received and answers it in
 * `<answer>` tags for samples 0 and 1, and answers (D) for sample 2. So pass@1 is 2/3 on every
 * problem and maj@3 is 1, if and only if the images arrived.
 */
function visionReply(_prompt: string, _seed: number, k: number, body: any): string {
  const parts = body.messages.at(-1).content;
  const image = parts.find((p: any) => p.type === 'image_url');
  if (!image) return 'I see no image.';
  const bytes = Buffer.from(image.image_url.url.split(',')[1], 'base64');
  const letter = bytes.subarray(PNG_SIGNATURE.length).toString('utf8').replace('letter ', '');
  return k < 2 ? `The picture shows option ${letter}. <answer>(${letter})</answer>` : 'Unsure. <answer>D</answer>';
}

describe('e2e: evaluation through corl:openai (chat, images, option letters)', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  let server: FakeOpenAI;
  beforeEach(async () => {
    tmp = tempDir('corl-e2e-openai-');
    server = await new FakeOpenAI({
      model: 'vlm-7b',
      apiKey: 'sk-e2e',
      tokenIds: 'field',
      respond: visionReply,
    }).start();
    fs.mkdirSync(path.join(tmp.dir, 'img'));
    for (const l of ['A', 'B', 'C'])
      fs.writeFileSync(
        path.join(tmp.dir, 'img', `${l}.png`),
        Buffer.concat([PNG_SIGNATURE, Buffer.from(`letter ${l}`)]),
      );
  });
  afterEach(async () => {
    await server.close();
    tmp.cleanup();
  });

  const config = () => ({
    name: 'vlm-eval',
    seed: 3,
    labelFree: true,
    task: {
      use: 'corl:inline',
      options: {
        train: [
          { id: 't1', prompt: 'Which letter is shown? (A) A (B) B (C) C (D) none', images: ['img/A.png'], answer: 'A' },
        ],
        heldOut: ['B', 'C', 'A'].map((l, i) => ({
          id: `h${i}`,
          prompt: 'Which letter is shown? (A) A (B) B (C) C (D) none',
          images: [`img/${l}.png`],
          answer: l,
        })),
      },
    },
    extractor: { use: 'corl:choice', options: { letters: 'ABCD' } },
    equivalence: 'corl:exact',
    agents: [
      {
        name: 'vlm',
        policy: {
          use: 'corl:openai',
          options: {
            baseUrl: server.url,
            model: 'vlm-7b',
            endpoint: 'chat',
            apiKeyEnv: 'CORL_E2E_KEY',
            systemPrompt: 'Put the option letter in <answer></answer>.',
            retries: 0,
          },
        },
      },
    ],
    topology: 'corl:self',
    reward: 'corl:vote',
    trainer: { steps: 0 },
    eval: { samples: 3 },
  });

  it('trainer.steps = 0 evaluates the held-out image problems through the server; training is refused', async () => {
    const file = writeConfig(tmp.dir, 'vlm.json', config());
    const out = path.join(tmp.dir, 'run');
    const r = await corl(['train', '-c', file, '--out', out, '-q']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('0 step(s)').and.contain('66.7%');
    const evalRows = fs
      .readFileSync(path.join(out, 'eval', 'step-000000.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(evalRows.map((row) => [row.id, row.keys, row.majCorrect])).to.deep.equal([
      ['h0', ['B', 'B', 'D'], true],
      ['h1', ['C', 'C', 'D'], true],
      ['h2', ['A', 'A', 'D'], true],
    ]);
    const metrics = fs
      .readFileSync(path.join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const ev = metrics.find((m) => m.phase === 'eval' && m.agent === 0).metrics;
    expect(ev['eval/accuracy']).to.be.closeTo(2 / 3, 1e-12);
    expect(ev['eval/maj@3']).to.equal(1);
    expect(server.received).to.have.length(3);
    expect(
      server.received.every(
        (q) => q.headers.authorization === 'Bearer sk-e2e' && q.images.length === 1 && q.body.n === 3,
      ),
    ).to.equal(true);
    expect(server.received[0]!.body.messages[0]).to.deep.equal({
      role: 'system',
      content: 'Put the option letter in <answer></answer>.',
    });

    const refused = await corl(['train', '-c', file, '--out', path.join(tmp.dir, 'train'), '--steps', '2', '-q']);
    expect(refused.code).to.equal(1);
    expect(refused.stderr)
      .to.contain('CORL_ERR_POLICY_CANNOT_TRAIN')
      .and.contain('agents[0].policy')
      .and.contain('corl:openai');
  });

  it('a missing image fails the evaluation with CORL_ERR_BACKEND_IMAGE naming the problem and the file', async () => {
    const cfg = config();
    (cfg.task.options.heldOut[1] as { images: string[] }).images = ['img/missing.png'];
    const r = await corl([
      'train',
      '-c',
      writeConfig(tmp.dir, 'bad.json', cfg),
      '--out',
      path.join(tmp.dir, 'run'),
      '-q',
    ]);
    expect(r.code).to.equal(1);
    expect(r.stderr)
      .to.contain('CORL_ERR_BACKEND_IMAGE')
      .and.contain('problem "h1"')
      .and.contain(path.join(tmp.dir, 'img', 'missing.png'));
  });
});
