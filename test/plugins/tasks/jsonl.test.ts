import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import type { TaskData } from '../../../core/contracts/task';
import { createPlugin } from '../../../core/testing';
import { gsm8kReference, heldOutIndices, jsonlTask, readJsonlProblems } from '../../../plugins/tasks/jsonl';
import { dataFixture, tempDir } from '../../fixtures/configs';

/** Build the task as a run does (validated options with defaults, relative paths against baseDir). */
async function load(
  options: Record<string, unknown>,
  baseDir = path.dirname(dataFixture('gsm8k.jsonl')),
): Promise<TaskData> {
  const task = await createPlugin(jsonlTask, options, { baseDir });
  return task.load();
}

async function refusal(fn: () => Promise<unknown> | unknown): Promise<Error & { code?: string }> {
  try {
    await fn();
  } catch (e) {
    expect(isCorlError(e), String((e as Error)?.stack)).to.equal(true);
    return e as Error & { code?: string };
  }
  throw new Error('expected a refusal');
}

describe('plugins/tasks/jsonl', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-jsonl-');
  });
  afterEach(() => tmp.cleanup());
  const write = (name: string, lines: string[]): string => {
    const f = path.join(tmp.dir, name);
    fs.writeFileSync(f, lines.join('\n') + '\n');
    return f;
  };

  it('GSM8K: the reference is what follows "####", commas removed; the worked text is the solution; ids number the lines', async () => {
    const d = await load({ heldOut: 'gsm8k.jsonl' });
    expect(d.train).to.deep.equal([]);
    expect(d.heldOut.map((p) => p.id)).to.deep.equal(['gsm8k-1', 'gsm8k-2', 'gsm8k-4', 'gsm8k-5']); // line 3 is blank
    expect(d.heldOut.map((p) => d.groundTruth.get(p.id)!.answer)).to.deep.equal(['7', '1200', '6', '3']);
    expect(d.groundTruth.get('gsm8k-1')!.solution).to.equal('She has 3 + 4 = <<3+4=7>>7 apples.');
    expect(d.heldOut[0]!.prompt).to.equal('Ann has 3 apples and buys 4 more. How many apples does she have?');
    expect(JSON.stringify(d.heldOut)).to.not.contain('####');
    expect(gsm8kReference('x\n#### -1,234.5 ')).to.deep.equal({ answer: '-1234.5', solution: 'x' });
    expect(gsm8kReference('no marker')).to.equal(null);
  });

  it('MATH-500: "answer" when present, else the last \\boxed{} of the solution; unique_id as id; level and subject as metadata', async () => {
    const d = await load({
      train: 'math500.jsonl',
      format: 'math',
      template: '{question}\nPut the final answer in \\boxed{}.',
    });
    expect(d.train.map((p) => p.id)).to.deep.equal([
      'test/prealgebra/1.json',
      'test/algebra/2.json',
      'test/algebra/3.json',
    ]);
    expect(d.train.map((p) => d.groundTruth.get(p.id)!.answer)).to.deep.equal(['\\frac{3}{4}', '8', '2']);
    expect(d.train[1]).to.deep.equal({
      id: 'test/algebra/2.json',
      prompt: 'Compute $2^3$.\nPut the final answer in \\boxed{}.',
      metadata: { level: 1, subject: 'Algebra' },
    });
    expect(d.groundTruth.get('test/algebra/2.json')!.solution).to.contain('\\boxed{8}');
  });

  it('one file split by a seeded fraction: the same split every time, in file order, disjoint', async () => {
    const d = await load({ train: 'gsm8k.jsonl', heldOutFraction: 0.5, splitSeed: 3 });
    const again = await load({ train: 'gsm8k.jsonl', heldOutFraction: 0.5, splitSeed: 3 });
    expect(d.heldOut.length).to.equal(2);
    expect(d.train.length).to.equal(2);
    expect(again.heldOut.map((p) => p.id)).to.deep.equal(d.heldOut.map((p) => p.id));
    const held = [...heldOutIndices(4, 0.5, 3)].sort();
    const ids = ['gsm8k-1', 'gsm8k-2', 'gsm8k-4', 'gsm8k-5'];
    expect(d.heldOut.map((p) => p.id)).to.deep.equal(held.map((i) => ids[i]));
    expect(d.train.map((p) => p.id)).to.deep.equal(ids.filter((_, i) => !held.includes(i)));
    expect(heldOutIndices(10, 0.25, 1).size).to.equal(3); // round(2.5) = 3
  });

  it('limit keeps the first problems of each split; named fields and plain answers', async () => {
    const f = write('qa.jsonl', [
      '{"key": "k1", "q": "one?", "a": " 1 "}',
      '{"key": "k2", "q": "two?", "a": 2}',
      '{"key": "k3", "q": "three?", "a": "3"}',
    ]);
    const d = await load({ train: f, format: 'plain', fields: { id: 'key', question: 'q', answer: 'a' }, limit: 2 });
    expect(d.train.map((p) => [p.id, p.prompt, d.groundTruth.get(p.id)!.answer])).to.deep.equal([
      ['k1', 'one?', '1'],
      ['k2', 'two?', '2'],
    ]);
    expect(d.groundTruth.size).to.equal(2);
  });

  it('bad lines are coded errors naming the file, the line and the fix', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['{"question": "a", "answer": "#### 1"}', '{not json'],
        /bad\.jsonl:2: expected one JSON object per line, got invalid JSON/,
      ],
      [['[1, 2]'], /bad\.jsonl:1: expected a JSON object, got \[1,2\]/],
      [
        ['{"problem": "a", "answer": "#### 1"}'],
        /bad\.jsonl:1: expected the problem text in "question" \(format gsm8k\), got no such field.*options\.fields\.question/,
      ],
      [
        ['{"question": "a", "answer": "#### 1"}', '{"question": "b", "answer": "7"}'],
        /bad\.jsonl:2: expected a GSM8K answer ending in "#### <number>" in "answer", got "7".*format "plain"/,
      ],
      [['{"question": "a", "answer": {"x": 1}}'], /bad\.jsonl:1: expected a GSM8K answer/],
      [
        ['{"id": "x", "question": "a", "answer": "#### 1"}', '{"id": "x", "question": "b", "answer": "#### 2"}'],
        /bad\.jsonl:2: expected unique problem ids, got "x" again \(first at .*bad\.jsonl:1\)/,
      ],
    ];
    for (const [lines, re] of cases) {
      const f = write('bad.jsonl', lines);
      const e = await refusal(() => load({ train: f }));
      expect(e.code).to.equal('CORL_ERR_TASK_DATA');
      expect(e.message).to.match(re);
    }
    const m = write('m.jsonl', ['{"problem": "a", "solution": "no box here"}']);
    expect((await refusal(() => load({ train: m, format: 'math' }))).message).to.match(
      /m\.jsonl:1: expected "answer", or a "solution" with a \\boxed\{\.\.\.\} final answer/,
    );
    const id = write('i.jsonl', ['{"question": "a", "answer": "#### 1"}']);
    expect((await refusal(() => load({ train: id, fields: { id: 'uid' } }))).message).to.match(
      /i\.jsonl:1: expected an id \(string or number\) in "uid"/,
    );
  });

  it('a missing file is a coded error naming the resolved path and the option', async () => {
    const e = await refusal(() => load({ train: 'gsm8k.jsonl', heldOut: 'nope/test.jsonl' }));
    expect(e.code).to.equal('CORL_ERR_TASK_DATA');
    expect(e.message)
      .to.contain(path.join(path.dirname(dataFixture('gsm8k.jsonl')), 'nope/test.jsonl'))
      .and.contain('no such file')
      .and.contain('task.options.heldOut');
    expect(() => readJsonlProblems(tmp.dir, 'gsm8k')).to.throw(/a folder/);
  });

  it('refuses contradictory options with CORL_ERR_PLUGIN_OPTIONS', async () => {
    const ctx = { baseDir: tmp.dir } as any;
    const base = {
      heldOutFraction: 0,
      splitSeed: 0,
      format: 'gsm8k',
      fields: {},
      limit: 0,
      template: '{question}',
    } as const;
    expect(() => jsonlTask.create({ ...base }, ctx)).to.throw(/CORL_ERR_PLUGIN_OPTIONS.*"train" or "heldOut"/);
    expect(() => jsonlTask.create({ ...base, train: 'a', heldOut: 'b', heldOutFraction: 0.5 }, ctx)).to.throw(
      /either a heldOut file or heldOutFraction/,
    );
    expect(() => jsonlTask.create({ ...base, heldOut: 'b', heldOutFraction: 0.5 }, ctx)).to.throw(
      /a train file to split/,
    );
  });
});
