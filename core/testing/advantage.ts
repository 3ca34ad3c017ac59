import assert from 'node:assert/strict';
import type { AdvantageEstimator } from '../contracts/advantage-estimator';
import type { PluginDefinition } from '../contracts/plugin';
import { Rng } from '../util/rng';
import {
  commonChecks,
  expectKind,
  finite,
  kitCreate,
  label,
  optionSetsOf,
  sameTranscript,
  suite,
  type Check,
  type KitOptions,
} from './common';

/** Batches of reward groups every estimator is given: empty batches and groups, single samples, ties, random rewards. */
export function rewardBatches(seed = 5): number[][][] {
  const rng = new Rng(seed);
  const random = Array.from({ length: 6 }, (_, i) =>
    Array.from({ length: 2 + (i % 4) }, () => Math.round(rng.next() * 4) / 4),
  );
  return [
    [],
    [[]],
    [[1]],
    [[0, 0, 0, 0]],
    [[1, 1, 1]],
    [[0, 1, 0, 1]],
    [[1, 0], [0, 0, 0], [2, 1, 0, 5], []],
    [[-3, 7.5, 0.25]],
    random,
  ];
}

function estimate(e: AdvantageEstimator, batches: readonly number[][][]): number[][][] {
  return batches.map((b) => e.estimate(b.map((g) => Object.freeze([...g]))));
}

/** The advantage-estimator checks. */
export function advantageChecks(plugin: PluginDefinition<'advantage'>, kit: KitOptions = {}): Check[] {
  expectKind(plugin, 'advantage');
  const batches = rewardBatches();
  return [
    ...commonChecks('advantage', plugin, kit),
    {
      title: 'returns one finite advantage per reward, aligned with its input, empty groups included',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const e = await kitCreate(plugin, kit, options);
          estimate(e, batches).forEach((out, b) => {
            const what = `${label(options)}, batch ${JSON.stringify(batches[b])}`;
            assert.equal(out.length, batches[b]!.length, `${what}: one group out per group in`);
            out.forEach((g, i) => {
              assert.equal(g.length, batches[b]![i]!.length, `${what}: group ${i} keeps its size`);
              g.forEach((v, k) => finite(v, `${what}: advantage [${i}][${k}]`));
            });
          });
        }
      },
    },
    {
      title: 'gives zero advantage to a group with zero spread or a single sample',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const e = await kitCreate(plugin, kit, options);
          for (const group of [[1], [0, 0, 0, 0], [1, 1, 1], [0.5, 0.5]]) {
            const [out] = e.estimate([group]);
            assert.ok(
              out!.every((v) => Math.abs(v) < 1e-12),
              `${label(options)}: advantages of ${JSON.stringify(group)} should be 0, got ${JSON.stringify(out)}`,
            );
          }
        }
      },
    },
    {
      title: 'is deterministic and does not modify its input',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const a = await kitCreate(plugin, kit, options);
          const b = await kitCreate(plugin, kit, options);
          const first = estimate(a, batches); // groups are frozen: writing into one throws
          sameTranscript(first, estimate(b, batches), `advantages for ${label(options)}`);
          assert.deepEqual(
            estimate(a, batches),
            first,
            `${label(options)}: the same rewards should give the same advantages again`,
          );
        }
      },
    },
  ];
}

/** The advantage-estimator contract as a test suite. */
export function advantageContract(plugin: PluginDefinition<'advantage'>, kit: KitOptions = {}): void {
  suite('advantage', plugin, kit, advantageChecks(plugin, kit));
}
