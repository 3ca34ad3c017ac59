import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError } from '../../../../core/errors';
import { readProblemsJsonl } from '../../../../core/rephrase/input';
import { cleanReply, rephrase, type RephraseOptions } from '../../../../core/rephrase/rephrase';
import { rephraseDiversity } from '../../../../plugins/diversity/rephrase';
import { OpenAIPolicy } from '../../../../plugins/policies/openai/policy';
import { tempDir, writeConfig } from '../../../fixtures/configs';
import { FakeOpenAI } from '../../../fixtures/openai-server';

const BIN = path.resolve(__dirname, '../../../../../bin/corl.js');

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

/**
 * A rephrasing "model": sample 0 rewrites faithfully; sample 1 changes the first number on odd
 * seeds' problems containing "apples", answers empty on "pens" problems, and otherwise reveals "42".
 */
function rephraser(prompt: string, _seed: number, k: number): string {
  const problem = prompt.slice(prompt.lastIndexOf('Problem:\n') + 'Problem:\n'.length);
  if (k === 0) return `Rewritten problem: Here is the same question, put differently. ${problem}`;
  if (problem.includes('apples')) return problem.replace(/\d+/, (d) => String(Number(d) + 1));
  if (problem.includes('pens')) return '   ';
  return `${problem} (It is 42.)`;
}

const PROBLEMS = [
  { id: 'p1', prompt: 'Tom has 3 apples and eats 1. How many are left?', answer: '2' },
  { id: 7, question: 'A box holds 12 pens; 5 are red. How many are not red?', answer: 'Twelve minus five.\n#### 7' },
  { id: 'p3', problem: 'What is 40 + 2?', answer: '42' },
];

describe('corl rephrase', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  let server: FakeOpenAI;
  beforeEach(async () => {
    tmp = tempDir('corl-rephrase-');
    server = await new FakeOpenAI({ model: 'chat-model', respond: rephraser }).start();
  });
  afterEach(async () => {
    await server.close();
    tmp.cleanup();
  });

  const inFile = (): string => {
    const f = path.join(tmp.dir, 'problems.jsonl');
    fs.writeFileSync(f, PROBLEMS.map((p) => JSON.stringify(p)).join('\n') + '\n');
    return f;
  };
  const config = (): string =>
    writeConfig(tmp.dir, 'cfg.json', {
      name: 'rephrase-test',
      seed: 5,
      task: {
        use: 'corl:inline',
        options: {
          train: [{ id: 'a', prompt: 'Sam has 3 apples.', answer: '3' }],
          heldOut: [{ id: 'b', prompt: 'Buy 2 pens for 4 coins each.', answer: '8' }],
        },
      },
      agents: [
        {
          name: 'writer',
          policy: { use: 'corl:openai', options: { baseUrl: server.url, model: 'chat-model', retries: 0 } },
        },
      ],
      topology: 'corl:self',
      reward: 'corl:vote',
      trainer: { steps: 0 },
    });

  it('writes row-aligned variants (same ids and answers), reports and drops the ones that fail the meaning check, and corl:rephrase reads them', async () => {
    const backend = path.join(tmp.dir, 'backend.json');
    fs.writeFileSync(
      backend,
      JSON.stringify({
        use: 'corl:openai',
        options: { baseUrl: server.url, model: 'chat-model', endpoint: 'chat', retries: 0 },
      }),
    );
    const out = path.join(tmp.dir, 'variants.jsonl');
    const r = await corl([
      'rephrase',
      '-c',
      config(),
      '--backend',
      backend,
      '--in',
      inFile(),
      '--out',
      out,
      '--variants',
      '2',
      '--batch',
      '2',
    ]);
    expect(r.code, r.stderr).to.equal(0);
    const rows = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const faithful = (p: string): string => `Here is the same question, put differently. ${p}`;
    expect(rows).to.deep.equal([
      { id: 'p1', variants: [faithful(PROBLEMS[0]!.prompt!)], answer: '2' },
      { id: '7', variants: [faithful(PROBLEMS[1]!.question!)], answer: '7' },
      { id: 'p3', variants: [faithful(PROBLEMS[2]!.problem!)], answer: '42' },
    ]);
    expect(r.stderr).to.contain('line 1 id p1: variant 1 dropped: numbers differ: original {1, 3}, variant {1, 4}');
    expect(r.stderr).to.contain('line 2 id 7: variant 1 dropped: empty rephrasing');
    // p3's original has 40 and 2; the leaked 42 is an extra number, caught by the number check first
    expect(r.stderr).to.contain(
      'line 3 id p3: variant 1 dropped: numbers differ: original {2, 40}, variant {2, 40, 42}',
    );
    expect(r.stderr)
      .to.contain('rephrase: 2/3 problems')
      .and.contain('rephrase: 3/3 problems, 3 variant(s) kept, 3 dropped');
    expect(r.stdout).to.contain('3 problem(s): 3 variant(s) kept, 3 dropped');
    expect(fs.existsSync(`${out}.partial`)).to.equal(false);
    expect(server.received.map((q) => q.body.messages.length)).to.deep.equal([1, 1, 1]);
    expect(server.received[0]!.body.n).to.equal(2);

    const diversity = rephraseDiversity.create({ assign: [null, 0], file: out, missing: 'error' }, {
      baseDir: tmp.dir,
    } as any) as any;
    expect(diversity.view({ id: '7', prompt: 'original' }, 1, 2).prompt).to.equal(faithful(PROBLEMS[1]!.question!));
    expect(diversity.view({ id: '7', prompt: 'original' }, 0, 2).prompt).to.equal('original');

    const again = await corl(['rephrase', '-c', config(), '--backend', backend, '--in', inFile(), '--out', out]);
    expect(again.code).to.equal(2);
    expect(again.stderr).to.contain('CORL_ERR_CLI_USAGE').and.contain('--force');
    expect(fs.readFileSync(out, 'utf8').trim().split('\n')).to.have.length(3);
  });

  it("uses the config's agent and task when there is no --backend or --in, with answers from the task", async () => {
    const out = path.join(tmp.dir, 'v.jsonl');
    const r = await corl(['rephrase', '-c', config(), '--agent', 'writer', '--out', out, '-q']);
    expect(r.code, r.stderr).to.equal(0);
    const rows = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((x) => [x.id, x.variants.length, x.answer])).to.deep.equal([
      ['a', 1, '3'],
      ['b', 1, '8'],
    ]);
    expect(r.stderr).to.not.contain('rephrase:');
    const bad = await corl(['rephrase', '-c', config(), '--agent', 'nobody', '--out', path.join(tmp.dir, 'w.jsonl')]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('CORL_ERR_CLI_USAGE').and.contain('"writer"');
  });

  describe('the runner', () => {
    const options = (o: Partial<RephraseOptions>): RephraseOptions => ({
      policy: new OpenAIPolicy(
        {
          baseUrl: server.url,
          model: 'chat-model',
          endpoint: 'chat',
          family: 'x',
          timeoutSeconds: 30,
          retries: 0,
          backoffSeconds: 0,
          maxBackoffSeconds: 0,
          concurrency: 4,
          logprobs: true,
          vllmTokenIds: false,
          splitN: false,
          sendSeed: true,
          extraBody: {},
        },
        1,
        tmp.dir,
      ),
      rows: readProblemsJsonl(inFile()),
      out: path.join(tmp.dir, 'out.jsonl'),
      variants: 1,
      instruction: 'Problem:\n{prompt}',
      temperature: 0.7,
      topP: 1,
      maxTokens: 256,
      seed: 1,
      batch: 1,
      resume: false,
      force: false,
      log: () => {},
      ...o,
    });

    it('resumes a partial file after its complete rows, cutting a torn last line, and asks only for the rest', async () => {
      const o = options({});
      fs.writeFileSync(`${o.out}.partial`, '{"id":"p1","variants":["kept before"],"answer":"2"}\n{"id":"7","vari');
      const refused = await rephrase(o).catch((e) => e);
      expect(isCorlError(refused, 'CORL_ERR_CLI_USAGE')).to.equal(true);
      expect(refused.message).to.contain('--resume');
      const s = await rephrase({ ...o, resume: true });
      expect(s).to.deep.equal({ problems: 3, resumed: 1, kept: 2, dropped: 0 });
      const rows = fs
        .readFileSync(o.out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(rows.map((r) => r.id)).to.deep.equal(['p1', '7', 'p3']);
      expect(rows[0].variants).to.deep.equal(['kept before']);
      expect(server.received).to.have.length(2);
    });

    it('refuses a partial file that belongs to other input, and an instruction without {prompt}', async () => {
      const o = options({ resume: true });
      fs.writeFileSync(`${o.out}.partial`, '{"id":"zz","variants":[]}\n');
      const e = await rephrase(o).catch((x) => x);
      expect(isCorlError(e, 'CORL_ERR_CLI_USAGE')).to.equal(true);
      expect(e.message).to.contain('"p1"').and.contain('"zz"');
      const f = await rephrase(options({ instruction: 'no placeholder' })).catch((x) => x);
      expect(f.message).to.contain('{prompt}');
    });

    it('replaces an existing output with --force only when the new one is complete', async () => {
      const o = options({ force: true });
      fs.writeFileSync(o.out, 'old\n');
      server.faults.push({ kind: 'status', status: 400 });
      await rephrase(o).catch(() => undefined);
      expect(fs.readFileSync(o.out, 'utf8')).to.equal('old\n');
      fs.rmSync(`${o.out}.partial`);
      await rephrase(o);
      expect(fs.readFileSync(o.out, 'utf8').split('\n').filter(Boolean)).to.have.length(3);
    });
  });

  it('reads problem files strictly: ids, text fields, GSM8K answers, images; bad rows name the line', () => {
    const f = path.join(tmp.dir, 'p.jsonl');
    fs.writeFileSync(
      f,
      '{"id": 1, "question": "q", "answer": "work\\n#### 1,000", "images": ["i.png"]}\n\n{"id": "x", "prompt": "p"}\n',
    );
    expect(readProblemsJsonl(f)).to.deep.equal([
      { id: '1', prompt: 'q', answer: '1,000', images: [path.join(tmp.dir, 'i.png')], line: 1 },
      { id: 'x', prompt: 'p', line: 3 },
    ]);
    for (const [text, msg] of [
      ['{"prompt": "p"}', '"id"'],
      ['{"id": "a"}', '"prompt"'],
      ['nope', 'invalid JSON'],
      ['{"id": "a", "prompt": "p"}\n{"id": "a", "prompt": "q"}', 'twice'],
    ] as const) {
      fs.writeFileSync(f, text);
      try {
        readProblemsJsonl(f);
        expect.fail('should throw');
      } catch (e) {
        expect(isCorlError(e, 'CORL_ERR_TASK_DATA'), String(e)).to.equal(true);
        expect((e as Error).message)
          .to.contain(msg)
          .and.contain(`${f}:`);
      }
    }
  });

  it('cleans replies: whitespace, a label, wrapping quotes', () => {
    expect(cleanReply('  Rephrased problem: "How many?"  ')).to.equal('How many?');
    expect(cleanReply('Problem: x')).to.equal('x');
    expect(cleanReply('"a" and "b"')).to.equal('a" and "b');
  });
});
