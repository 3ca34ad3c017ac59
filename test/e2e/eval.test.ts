import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, dataFixture, tempDir, writeConfig } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/corl.js');
const TESTING = path.resolve(__dirname, '../../core/testing/index.js');
const MATH_TEMPLATE = '{question}\nPut the final answer in \\boxed{}.';

function corl(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const questions = (file: string, field: string): string[] =>
  fs
    .readFileSync(dataFixture(file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l)[field] as string);

const jsonl = (file: string): any[] =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/**
 * Two agents of the deterministic categorical policy at temperature 0: each answers every prompt
 * with the answer `prefer` raises (by 50, far above the seeded initial logits), so every figure
 * below is known in advance.
 */
function evalConfig(preferA: Record<string, string>, preferB: Record<string, string>): Record<string, unknown> {
  const answers = ['7', '1200', '1,200', '6', '3', '5', '12', '0.75', '8', '2'];
  const policy = (family: string, prefer: Record<string, string>) => ({
    use: 'testing:categorical',
    options: { answers, prefer, preferStrength: 50, family },
  });
  return {
    name: 'eval-fixture',
    seed: 3,
    plugins: [TESTING],
    task: { use: 'corl:inline', options: { train: [{ id: 'unused', prompt: 'unused', answer: '1' }] } },
    agents: [
      { name: 'a', policy: policy('fam-a', preferA) },
      { name: 'b', policy: policy('fam-b', preferB) },
    ],
    topology: 'corl:ring',
    reward: 'corl:vote',
    eval: { samples: 2, sampling: { temperature: 0, maxTokens: 4 } },
  };
}

describe('e2e: corl eval and corl agreement', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-e2e-eval-');
  });
  afterEach(() => tmp.cleanup());

  const gsm = questions('gsm8k.jsonl', 'question'); // references 7, 1200 (written 1,200), 6, 3
  // A: right, right ("1,200" = 1200 through corl:math), right, wrong (5). B: right, right, wrong (5), wrong (5).
  const preferA = { [gsm[0]!]: '7', [gsm[1]!]: '1,200', [gsm[2]!]: '6', [gsm[3]!]: '5' };
  const preferB = { [gsm[0]!]: '7', [gsm[1]!]: '1200', [gsm[2]!]: '5', [gsm[3]!]: '5' };

  it('GSM8K: pass@1, maj@K, the budget-fair ensemble and per-problem outputs; agreement gives the exact kappa', () => {
    const file = writeConfig(tmp.dir, 'eval.json', evalConfig(preferA, preferB));
    const out = path.join(tmp.dir, 'out');
    const r = corl([
      'eval',
      '-c',
      file,
      '--data',
      dataFixture('gsm8k.jsonl'),
      '--format',
      'gsm8k',
      '--ensemble',
      '1',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('eval: 0/8').and.contain('eval: 8/8'); // plain progress lines off a terminal
    expect(r.stdout)
      .to.contain('4 problem(s) from')
      .and.contain('maj@2')
      .and.contain('a + b')
      .and.contain('maj@2 (1 + 1)');

    const a = jsonl(path.join(out, 'a.jsonl'));
    expect(a.map((x) => x.id)).to.deep.equal(['gsm8k-1', 'gsm8k-2', 'gsm8k-4', 'gsm8k-5']);
    expect(a[1]).to.deep.equal({
      id: 'gsm8k-2',
      agent: 0,
      agentName: 'a',
      answers: ['1,200', '1,200'],
      keys: a[1].keys,
      majority: a[1].keys[0],
      correct: [true, true],
      majCorrect: true,
      reference: '1200',
    });
    expect(a.map((x) => x.correct)).to.deep.equal([
      [true, true],
      [true, true],
      [true, true],
      [false, false],
    ]);
    expect(jsonl(path.join(out, 'b.jsonl')).map((x) => x.majCorrect)).to.deep.equal([true, true, false, false]);

    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    expect(summary).to.include({ problems: 4, samples: 2, format: 'gsm8k', data: dataFixture('gsm8k.jsonl') });
    expect(summary.agents.map((x: any) => [x.name, x.family, x.pass1, x.majority, x.file])).to.deep.equal([
      ['a', 'fam-a', 0.75, 0.75, 'a.jsonl'],
      ['b', 'fam-b', 0.5, 0.5, 'b.jsonl'],
    ]);
    // maj@2 over A's first and B's first sample: 7/7 right, 1,200/1200 one cluster right, 6/5 tie → A's 6 (seen first) right, 5/5 wrong.
    expect(summary.ensembles).to.deep.equal([{ agents: ['a', 'b'], m: 1, k: 2, accuracy: 0.75 }]);
    // a = 2 (q1, q2), b = 1 (q3), c′ = 0, d = 1 (q4, both "5"). p_o = 3/4, p_A = 3/4, p_B = 1/2,
    // p_e = 3/4·1/2 + 1/4·1/2 = 1/2, κ = (3/4 − 1/2)/(1 − 1/2) = 1/2; c = 1/4, w = 1/4, u = 3/4.
    // Pooled over both aligned sample pairs (each agent's two samples agree here), every count doubles and the rates stay.
    expect(summary.pairs).to.deep.equal([
      {
        agents: ['a', 'b'],
        kappa: 0.5,
        complementarity: 0.25,
        sameWrong: 0.25,
        coverage: 0.75,
        counts: { a: 4, b: 2, c: 0, d: 2, dSame: 2 },
      },
    ]);

    const g = corl(['agreement', path.join(out, 'a.jsonl'), path.join(out, 'b.jsonl'), '--json']);
    expect(g.code, g.stderr).to.equal(0);
    expect(JSON.parse(g.stdout)).to.deep.include({
      n: 4,
      counts: { a: 2, b: 1, c: 0, d: 1, dSame: 1 },
      kappa: 0.5,
      complementarity: 0.25,
      sameWrong: 0.25,
      coverage: 0.75,
      accuracyA: 0.75,
      accuracyB: 0.5,
      use: 'first',
    });
    const t = corl(['agreement', path.join(out, 'a.jsonl'), path.join(out, 'b.jsonl'), '--use', 'majority']);
    expect(t.code, t.stderr).to.equal(0);
    expect(t.stdout)
      .to.contain('4 problem(s), plurality answer of each')
      .and.match(/kappa\s+0\.500/)
      .and.match(/coverage u\s+75\.0%/)
      .and.contain('d = 1 (same answer: 1)');
  });

  it("MATH-500 through a config's corl:jsonl task with a template, one agent; then bad inputs to agreement", () => {
    const math = questions('math500.jsonl', 'problem').map((q) => MATH_TEMPLATE.replace('{question}', q)); // references 3/4, 8, 2
    const config = evalConfig({ [math[0]!]: '0.75', [math[1]!]: '8', [math[2]!]: '3' }, {});
    config.task = {
      use: 'corl:jsonl',
      options: { heldOut: dataFixture('math500.jsonl'), format: 'math', template: MATH_TEMPLATE },
    };
    config.trainer = { steps: 0 };
    const file = writeConfig(tmp.dir, 'math.json', config);
    const out = path.join(tmp.dir, 'math');
    const r = corl(['eval', '-c', file, '--agent', 'a', '--samples', '3', '--out', out, '-q']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.equal('');
    const rows = jsonl(path.join(out, 'a.jsonl'));
    expect(rows.map((x) => [x.id, x.answers[0], x.reference, x.majCorrect])).to.deep.equal([
      ['test/prealgebra/1.json', '0.75', '\\frac{3}{4}', true],
      ['test/algebra/2.json', '8', '8', true],
      ['test/algebra/3.json', '3', '2', false],
    ]);
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    expect(summary.agents.map((x: any) => x.name)).to.deep.equal(['a']);
    expect(summary.agents[0].pass1).to.be.closeTo(2 / 3, 1e-12);
    expect(summary).to.include({ samples: 3, data: null });
    expect(fs.existsSync(path.join(out, 'b.jsonl'))).to.equal(false);

    // agreement: ids that differ, a file that is not an eval output, an empty one, a missing one
    const gsmOut = path.join(tmp.dir, 'gsm');
    expect(
      corl(['eval', '-c', file, '--agent', '0', '--data', dataFixture('gsm8k.jsonl'), '--out', gsmOut, '-q']).code,
    ).to.equal(0);
    const mismatch = corl(['agreement', path.join(out, 'a.jsonl'), path.join(gsmOut, 'a.jsonl')]);
    expect(mismatch.code).to.equal(1);
    expect(mismatch.stderr)
      .to.contain('CORL_ERR_EVAL_MISMATCH')
      .and.contain('3 only in')
      .and.contain('"test/prealgebra/1.json"');
    const notEval = corl(['agreement', path.join(out, 'summary.json'), path.join(out, 'a.jsonl')]);
    expect(notEval.code).to.equal(1);
    expect(notEval.stderr).to.match(/CORL_ERR_EVAL_INPUT: .*summary\.json:1: expected one JSON object per line/);
    const empty = path.join(tmp.dir, 'empty.jsonl');
    fs.writeFileSync(empty, '\n');
    expect(corl(['agreement', empty, path.join(out, 'a.jsonl')]).stderr)
      .to.contain('CORL_ERR_EVAL_INPUT')
      .and.contain('empty file');
    expect(corl(['agreement', path.join(tmp.dir, 'nope.jsonl'), empty]).stderr).to.contain(
      'nope.jsonl: expected a readable evaluation output, got no such file',
    );
    expect(corl(['agreement', empty, empty, '--use', 'best']).code).to.equal(2);
  });

  it("on a config's held-out split with --batch 0, corl eval reproduces the trainer's evaluation exactly", () => {
    const file = writeConfig(tmp.dir, 'ring.json', coRlConfig());
    const run = path.join(tmp.dir, 'run');
    expect(corl(['train', '-c', file, '--steps', '0', '--out', run, '-q']).code).to.equal(0);
    const out = path.join(tmp.dir, 'eval');
    const r = corl(['eval', '-c', file, '--batch', '0', '--out', out, '-q']);
    expect(r.code, r.stderr).to.equal(0);
    const trained = jsonl(path.join(run, 'eval/step-000000.jsonl'));
    const evaluated = [...jsonl(path.join(out, 'a.jsonl')), ...jsonl(path.join(out, 'b.jsonl'))];
    expect(evaluated.map((x) => [x.agent, x.id, x.keys, x.correct, x.majCorrect])).to.deep.equal(
      trained.map((x) => [x.agent, x.id, x.keys, x.correct, x.majCorrect]),
    );
    const metrics = jsonl(path.join(run, 'metrics.jsonl')).filter(
      (m) => m.phase === 'eval' && m.step === 0 && m.agent !== null,
    );
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    expect(summary.agents.map((x: any) => x.pass1)).to.deep.equal(metrics.map((m) => m.metrics['eval/accuracy']));
    expect(summary.agents.map((x: any) => x.majority)).to.deep.equal(metrics.map((m) => m.metrics['eval/maj@3']));
  });

  it("corl eval on a run's checkpoint grades the same samples as the trainer's evaluation of that step did", () => {
    // The two shipped slip-regime families, one update step on the embedded benchmark, evaluated and
    // checkpointed after it; then corl eval with each policy loaded from that checkpoint.
    const comas = JSON.parse(fs.readFileSync(path.join(ROOT, 'configs/comas.json'), 'utf8'));
    const agents = (from: (i: number) => string) =>
      comas.agents.map((a: any, i: number) => ({
        ...a,
        policy: { ...a.policy, options: { ...a.policy.options, checkpoint: from(i) } },
      }));
    const config = (from: (i: number) => string) => ({
      name: 'eval-checkpoint',
      seed: 5,
      labelFree: true,
      task: { use: 'corl:arith', options: { seed: 1234, train: 50, heldOut: 12 } },
      agents: agents(from),
      topology: 'corl:ring',
      reward: 'corl:vote',
      trainer: { steps: 1, batchSize: 2, groupSize: 2, evalEvery: 1, checkpointEvery: 1, sampling: { maxTokens: 40 } },
      eval: { samples: 2, atStart: false, sampling: { temperature: 1, maxTokens: 40 } },
    });
    const base = (i: number) => path.join(ROOT, 'models/slips', comas.agents[i].policy.options.family);
    const run = path.join(tmp.dir, 'run');
    const train = corl(['train', '-c', writeConfig(tmp.dir, 'train.json', config(base)), '--out', run, '-q']);
    expect(train.code, train.stderr).to.equal(0);
    const saved = (i: number) => path.join(run, 'checkpoints/step-000001', `agent-${i}`);
    const out = path.join(tmp.dir, 'eval');
    const file = writeConfig(tmp.dir, 'eval.json', config(saved));
    const r = corl(['eval', '-c', file, '--batch', '0', '--out', out, '-q']);
    expect(r.code, r.stderr).to.equal(0);
    const trained = jsonl(path.join(run, 'eval/step-000001.jsonl'));
    const evaluated = [...jsonl(path.join(out, 'alpha.jsonl')), ...jsonl(path.join(out, 'beta.jsonl'))];
    const graded = (rows: any[]) => rows.map((x) => [x.agent, x.id, x.answers, x.keys, x.correct, x.majCorrect]);
    expect(graded(evaluated)).to.deep.equal(graded(trained));
    // Not a vacuous match: the 12 problems × 2 agents × 2 samples hold right and wrong answers.
    const verdicts = trained.flatMap((x) => x.correct);
    expect(verdicts).to.have.length(48);
    expect(verdicts).to.include(true).and.to.include(false);
  });

  it('refuses bad invocations and bad data with coded errors', () => {
    const file = writeConfig(tmp.dir, 'eval.json', evalConfig(preferA, preferB));
    const usage: [string[], string][] = [
      [['eval'], 'expected a config (`corl eval <config>` or `corl eval -c <config>`)'],
      [['eval', '-c', file, '--format', 'math'], 'expected --format only with --data'],
      [
        ['eval', '-c', file, '--data', dataFixture('gsm8k.jsonl'), '--format', 'csv'],
        'expected --format to be one of gsm8k, math, plain, got "csv"',
      ],
      [
        ['eval', '-c', file, '--data', dataFixture('gsm8k.jsonl'), '--ensemble', '3'],
        'expected --ensemble at most the samples per problem (2), got 3',
      ],
      [
        ['eval', '-c', file, '--data', dataFixture('gsm8k.jsonl'), '--agent', 'c'],
        'expected --agent to be all, an index below 2 or one of "a", "b", got "c"',
      ],
      [
        ['eval', '-c', file, '--data', dataFixture('gsm8k.jsonl'), '--agent', '1', '--ensemble', '1'],
        'expected --ensemble with at least two agents, got 1',
      ],
      [
        ['eval', '-c', file, '--data', dataFixture('gsm8k.jsonl'), '--template', 'no placeholder'],
        'expected --template to contain {question}',
      ],
    ];
    for (const [args, message] of usage) {
      const r = corl(args);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stderr).to.contain('CORL_ERR_CLI_USAGE').and.contain(message);
    }
    const missing = corl(['eval', '-c', file, '--data', path.join(tmp.dir, 'gone.jsonl'), '--format', 'gsm8k']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr)
      .to.contain('CORL_ERR_TASK_DATA')
      .and.contain(path.join(tmp.dir, 'gone.jsonl'))
      .and.contain('no such file');
    const bad = path.join(tmp.dir, 'bad.jsonl');
    fs.writeFileSync(bad, '{"question": "a?", "answer": "#### 1"}\n{"question": "b?", "answer": "2"}\n');
    const badLine = corl(['eval', '-c', file, '--data', bad]);
    expect(badLine.code).to.equal(1);
    expect(badLine.stderr).to.contain(
      `CORL_ERR_TASK_DATA: ${bad}:2: expected a GSM8K answer ending in "#### <number>"`,
    );
    const noRef = path.join(tmp.dir, 'noref.jsonl');
    fs.writeFileSync(noRef, '{"problem": "a?"}\n');
    const unscored = corl(['eval', '-c', file, '--data', noRef]);
    expect(unscored.code).to.equal(1);
    expect(unscored.stderr)
      .to.contain('CORL_ERR_TASK_DATA')
      .and.contain('expected a reference answer for every problem, got none for 1 (first: "noref-1")');
  });
});
