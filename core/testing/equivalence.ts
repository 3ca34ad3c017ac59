import assert from 'node:assert/strict';
import type { Equivalence } from '../contracts/equivalence';
import type { PluginDefinition } from '../contracts/plugin';
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

/** Inputs of the equivalence suite. */
export interface EquivalenceKitOptions extends KitOptions {
  /** Raw answers to key, on top of the suite's own. */
  readonly answers?: readonly string[];
  /** Raw answer pairs that must be equal (by key or by `equal`), checked with the first option set. */
  readonly equalPairs?: readonly (readonly [string, string])[];
  /** Raw answer pairs that must differ. */
  readonly differentPairs?: readonly (readonly [string, string])[];
}

/** Raw answers every equivalence keys. */
export function sampleAnswers(): string[] {
  return [
    '4',
    ' 4 ',
    '4.0',
    '-4',
    '\\frac{1}{2}',
    '0.5',
    '1/2',
    'x = 3',
    '(1, 2)',
    '[1, 2)',
    '\\sqrt{2}',
    'C',
    'Paris',
    '七',
    '{',
    '}}',
    '\\boxed{5}',
    '1,000',
    '1e3',
  ];
}

async function same(e: Equivalence, a: string, b: string): Promise<boolean> {
  const ka = e.key(a);
  const kb = e.key(b);
  if (ka === null || kb === null) return false;
  return ka === kb || e.equal(ka, kb);
}

async function transcript(e: Equivalence, answers: readonly string[]): Promise<unknown> {
  const keys = answers.map((a) => e.key(a));
  const present = [...new Set(keys.filter((k): k is string => k !== null))];
  const eq: boolean[] = [];
  for (let i = 0; i < present.length; i++)
    for (let j = i + 1; j < present.length; j++) eq.push(await e.equal(present[i]!, present[j]!));
  return { keys, eq };
}

/** The equivalence checks. */
export function equivalenceChecks(plugin: PluginDefinition<'equivalence'>, kit: EquivalenceKitOptions = {}): Check[] {
  expectKind(plugin, 'equivalence');
  const answers = [...sampleAnswers(), ...(kit.answers ?? [])];
  return [
    ...commonChecks('equivalence', plugin, kit),
    {
      title: 'keys are strings or null, and an empty answer has no key (it never wins a vote)',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const e = await kitCreate(plugin, kit, options);
          for (const a of answers) {
            const k = e.key(a);
            assert.ok(
              k === null || (typeof k === 'string' && k !== ''),
              `${label(options)}: key(${JSON.stringify(a)}) should be a non-empty string or null, got ${JSON.stringify(k)}`,
            );
          }
          assert.equal(e.key(''), null, `${label(options)}: key("") should be null`);
          assert.equal(e.key('   '), null, `${label(options)}: key("   ") should be null`);
          await e.close?.();
        }
      },
    },
    {
      title: 'equal is reflexive and symmetric, and resolves to a boolean',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const e = await kitCreate(plugin, kit, options);
          const keys = [...new Set(answers.map((a) => e.key(a)).filter((k): k is string => k !== null))];
          for (const [i, a] of keys.entries()) {
            assert.equal(await e.equal(a, a), true, `${label(options)}: equal(${JSON.stringify(a)}, itself)`);
            for (const b of keys.slice(i + 1)) {
              const ab = await e.equal(a, b);
              assert.equal(typeof ab, 'boolean', `${label(options)}: equal should resolve to a boolean`);
              assert.equal(
                ab,
                await e.equal(b, a),
                `${label(options)}: equal(${JSON.stringify(a)}, ${JSON.stringify(b)}) should be symmetric`,
              );
            }
          }
          await e.close?.();
        }
      },
    },
    {
      title: 'groups the answers it should and separates the others',
      run: async () => {
        const e = await kitCreate(plugin, kit, kit.options ?? {});
        for (const [a, b] of kit.equalPairs ?? [])
          assert.equal(await same(e, a, b), true, `${JSON.stringify(a)} and ${JSON.stringify(b)} should be equivalent`);
        for (const [a, b] of kit.differentPairs ?? [])
          assert.equal(await same(e, a, b), false, `${JSON.stringify(a)} and ${JSON.stringify(b)} should differ`);
        await e.close?.();
      },
    },
    {
      title: 'is deterministic',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const a = await kitCreate(plugin, kit, options);
          const b = await kitCreate(plugin, kit, options);
          sameTranscript(
            await transcript(a, answers),
            await transcript(b, answers),
            `keys and equalities for ${label(options)}`,
          );
          await a.close?.();
          await b.close?.();
        }
      },
    },
  ];
}

/** The equivalence contract as a test suite. */
export function equivalenceContract(plugin: PluginDefinition<'equivalence'>, kit: EquivalenceKitOptions = {}): void {
  suite('equivalence', plugin, kit, equivalenceChecks(plugin, kit));
}
