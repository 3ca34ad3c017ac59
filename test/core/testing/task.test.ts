import { MapGroundTruth, type Problem } from '../../../core/contracts/problem';
import type { Task } from '../../../core/contracts/task';
import { definePlugin } from '../../../core/registry/define';
import { taskChecks } from '../../../core/testing';
import { fails, passes } from './helpers';

const task = (name: string, create: () => Task) =>
  definePlugin({
    manifest: {
      name,
      kind: 'task',
      description: 'test task',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create,
  });
const fixed = (train: Problem[], heldOut: Problem[] = [], refs: [string, { answer: string }][] = []) =>
  task('test:fixed', () => ({ load: async () => ({ train, heldOut, groundTruth: new MapGroundTruth(refs) }) }));

describe('core/testing/task (the task suite catches broken tasks)', () => {
  it('a clean task passes', async () => {
    await passes(
      taskChecks(fixed([{ id: 'a', prompt: '1+1=' }], [{ id: 'b', prompt: '2+2=' }], [['a', { answer: '2' }]])),
      'unique ids',
    );
  });

  it('an answer on the problem itself, or in its metadata, is caught', async () => {
    await fails(
      taskChecks(fixed([{ id: 'a', prompt: '1+1=', answer: '2' } as Problem])),
      'unique ids',
      /unexpected field "answer"/,
    );
    await fails(
      taskChecks(fixed([{ id: 'a', prompt: '1+1=', metadata: { solution: '2' } }])),
      'unique ids',
      /metadata\.solution looks like the reference/,
    );
  });

  it('duplicate ids across splits, empty ids and an empty train split are caught', async () => {
    await fails(taskChecks(fixed([{ id: 'a', prompt: 'p' }], [{ id: 'a', prompt: 'q' }])), 'unique ids', /used twice/);
    await fails(taskChecks(fixed([{ id: '', prompt: 'p' }])), 'unique ids', /should not be empty/);
    await fails(taskChecks(fixed([])), 'unique ids', /at least one training problem/);
  });

  it('misaligned pretraining prompt lengths are caught', async () => {
    const t = task('test:pre', () => ({
      load: async () => ({
        train: [{ id: 'a', prompt: 'p' }],
        heldOut: [],
        groundTruth: new MapGroundTruth([]),
        pretrainText: ['ab'],
        pretrainPromptLengths: [1, 2],
      }),
    }));
    await fails(taskChecks(t), 'unique ids', /one prompt length per pretraining text/);
  });

  it('data that changes from one load to the next is caught', async () => {
    let n = 0;
    const t = task('test:moving', () => ({
      load: async () => ({ train: [{ id: `a${n++}`, prompt: 'p' }], heldOut: [], groundTruth: new MapGroundTruth([]) }),
    }));
    await fails(taskChecks(t), 'deterministic', /same/);
  });
});
