import assert from 'node:assert/strict';
import type { PluginDefinition } from '../contracts/plugin';
import type { Problem } from '../contracts/problem';
import type { TaskData } from '../contracts/task';
import {
  commonChecks,
  expectKind,
  kitCreate,
  label,
  optionSetsOf,
  sameTranscript,
  suite,
  type Check,
  type KitOptions,
} from './common';

/** The fields a problem may carry: the answer is never among them (it travels in `groundTruth`). */
const PROBLEM_FIELDS = new Set(['id', 'prompt', 'variants', 'images', 'testInputs', 'metadata']);
/** Metadata keys that would smuggle the reference past a label-free reward. */
const ANSWER_KEYS = /^(answer|answers|reference|solution|target|label|expected|expected_?outputs?|ground_?truth)$/i;

function snapshot(data: TaskData): unknown {
  const ids = [...data.train, ...data.heldOut].map((p) => p.id);
  return {
    train: data.train,
    heldOut: data.heldOut,
    references: ids.map((id) => data.groundTruth.get(id) ?? null),
    size: data.groundTruth.size,
    pretrainText: data.pretrainText ?? null,
    pretrainPromptLengths: data.pretrainPromptLengths ?? null,
  };
}

function checkProblem(p: Problem, what: string): void {
  assert.equal(typeof p.id, 'string', `${what}: id should be a string`);
  assert.ok(p.id.length > 0, `${what}: id should not be empty`);
  assert.equal(typeof p.prompt, 'string', `${what}: prompt should be a string`);
  for (const key of Object.keys(p)) {
    assert.ok(
      PROBLEM_FIELDS.has(key),
      `${what}: unexpected field "${key}" on a problem; references belong in TaskData.groundTruth, other facts in metadata`,
    );
  }
  if (p.variants !== undefined)
    assert.ok(
      Array.isArray(p.variants) && p.variants.every((v) => typeof v === 'string'),
      `${what}: variants should be strings`,
    );
  if (p.images !== undefined)
    assert.ok(
      Array.isArray(p.images) && p.images.every((v) => typeof v === 'string'),
      `${what}: images should be file names`,
    );
  if (p.testInputs !== undefined)
    assert.ok(
      Array.isArray(p.testInputs) &&
        p.testInputs.every((t) => Array.isArray(t) && t.every((a) => typeof a === 'string')),
      `${what}: testInputs should be lists of argument literals`,
    );
  for (const key of Object.keys(p.metadata ?? {})) {
    assert.ok(
      !ANSWER_KEYS.test(key),
      `${what}: metadata.${key} looks like the reference; label-free plugins see metadata, so keep references in groundTruth`,
    );
  }
}

/** The task checks. */
export function taskChecks(plugin: PluginDefinition<'task'>, kit: KitOptions = {}): Check[] {
  expectKind(plugin, 'task');
  return [
    ...commonChecks('task', plugin, kit),
    {
      title: "loads problems with unique ids, the contract's fields only, and references kept apart",
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const task = await kitCreate(plugin, kit, options);
          const data = await task.load();
          assert.ok(
            Array.isArray(data.train) && data.train.length > 0,
            `${label(options)}: should give at least one training problem`,
          );
          assert.ok(Array.isArray(data.heldOut), `${label(options)}: heldOut should be an array (possibly empty)`);
          const seen = new Set<string>();
          for (const [split, list] of [
            ['train', data.train],
            ['heldOut', data.heldOut],
          ] as const) {
            list.forEach((p, i) => {
              const what = `${label(options)}: ${split}[${i}]`;
              checkProblem(p, what);
              assert.ok(!seen.has(p.id), `${what}: id "${p.id}" is used twice (ids are unique across both splits)`);
              seen.add(p.id);
              const ref = data.groundTruth.get(p.id);
              if (ref !== undefined) {
                assert.equal(typeof ref.answer, 'string', `${what}: the reference answer should be a string`);
                if (ref.expectedOutputs)
                  assert.equal(
                    ref.expectedOutputs.length,
                    p.testInputs?.length ?? 0,
                    `${what}: one expected output per test input`,
                  );
              }
            });
          }
          assert.ok(
            Number.isInteger(data.groundTruth.size) && data.groundTruth.size >= 0,
            'groundTruth.size should be a count',
          );
          if (data.pretrainText !== undefined) {
            assert.ok(
              data.pretrainText.every((t) => typeof t === 'string'),
              'pretrainText should be strings',
            );
            if (data.pretrainPromptLengths !== undefined) {
              assert.equal(
                data.pretrainPromptLengths.length,
                data.pretrainText.length,
                'one prompt length per pretraining text',
              );
              data.pretrainPromptLengths.forEach((n, i) =>
                assert.ok(
                  Number.isInteger(n) && n >= 0 && n <= data.pretrainText![i]!.length,
                  `pretrainPromptLengths[${i}] should be within its text`,
                ),
              );
            }
          } else {
            assert.equal(data.pretrainPromptLengths, undefined, 'pretrainPromptLengths without pretrainText');
          }
        }
      },
    },
    {
      title: 'is deterministic: the same options and seed give the same data',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const a = await kitCreate(plugin, kit, options);
          const b = await kitCreate(plugin, kit, options);
          sameTranscript(snapshot(await a.load()), snapshot(await b.load()), `task data for ${label(options)}`);
        }
      },
    },
  ];
}

/** The task contract as a test suite. */
export function taskContract(plugin: PluginDefinition<'task'>, kit: KitOptions = {}): void {
  suite('task', plugin, kit, taskChecks(plugin, kit));
}
