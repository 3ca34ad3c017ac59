import { expect } from 'chai';
import { createPlugin, taskContract } from 'corl/testing';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleTask, register } from '../src';

const ROOT = path.resolve(__dirname, '..', '..'); // dist/test → the package root, where data/ is

// The contract every task keeps: unique ids, references apart from problems, determinism, coded errors.
taskContract(exampleTask, {
  register,
  baseDir: ROOT,
  options: { file: 'data/problems.jsonl', answerMarker: '####', heldOut: 2 },
  optionSets: [{ file: 'data/problems.jsonl', template: 'Question: {prompt}\nAnswer:' }],
  invalidOptions: [{ options: { file: 'data/missing.jsonl' }, field: 'file' }],
});

describe('example:task', () => {
  const load = async (options: Record<string, unknown>, dir = ROOT) => (await createPlugin(exampleTask, options, { baseDir: dir })).load();

  it('splits off the last rows and keeps the references (after the marker) in groundTruth', async () => {
    const data = await load({ file: 'data/problems.jsonl', answerMarker: '####', heldOut: 2 });
    expect(data.train.map((p) => p.id)).to.deep.equal(['p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    expect(data.heldOut.map((p) => p.id)).to.deep.equal(['p7', 'p8']);
    expect(data.groundTruth.get('p1')).to.deep.equal({ answer: '2', solution: '1 + 1 = 2\n#### 2' });
    expect(data.train[0]).to.deep.equal({ id: 'p1', prompt: 'Ann has 1 apple and finds 1 more. How many apples?' });
  });

  it('names the file and line of a bad row', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jsonl-task-'));
    try {
      fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"question": "ok", "answer": "1"}\n{"question": 5}\n');
      await load({ file: 'bad.jsonl' }, dir).then(() => expect.fail('should throw'), (e: Error) => {
        expect(e.message).to.contain('CORL_ERR_TASK_DATA').and.contain('bad.jsonl:2').and.contain('"question"');
      });
      fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"question": "ok"}\nnot json\n');
      await load({ file: 'bad.jsonl' }, dir).then(() => expect.fail('should throw'), (e: Error) => expect(e.message).to.contain('bad.jsonl:2: expected a JSON object'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses holding out every row', async () => {
    await load({ file: 'data/problems.jsonl', heldOut: 8 }).then(() => expect.fail('should throw'), (e: Error) => expect(e.message).to.match(/CORL_ERR_TASK_DATA.*heldOut/));
  });
});
