import assert from 'node:assert/strict';
import type { AnswerExtractor } from '../contracts/answer-extractor';
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

/** Inputs of the answer-extractor suite. */
export interface ExtractorKitOptions extends KitOptions {
  /** Texts with the answer the extractor must find (null: none), checked with the first option set. */
  readonly examples?: readonly { readonly text: string; readonly answer: string | null }[];
}

/**
 * Texts every extractor must survive: empty, answer-free, unbalanced and deeply nested braces, long
 * and repetitive inputs (a backtracking regex would hang on them), unicode, control characters.
 */
export function hostileTexts(): string[] {
  return [
    '',
    ' \n\t ',
    'I do not know.',
    'The answer is \\boxed{42}.',
    'So \\boxed{\\frac{1}{2}} and finally \\boxed{3}.',
    '\\boxed{1 + {2}',
    '\\boxed{'.repeat(2000),
    '{'.repeat(20000) + '}'.repeat(19999),
    'the answer is '.repeat(5000),
    '1,'.repeat(20000) + '5',
    '9'.repeat(100000),
    'a'.repeat(200000) + ' #### 7',
    '#### \n####',
    '答案是 \\boxed{七}。 🙂',
    'null\u0000byte \\boxed{\u0000}',
    '$$$$ \\fbox{} \\boxed{} $',
    'The final answer is $\\frac{3}{4}$. I hope it is correct.',
    '<answer>C</answer> (C) C. Paris',
    '```python\nprint(4)\n```',
  ];
}

function run(e: AnswerExtractor, texts: readonly string[]): (string | null)[] {
  return texts.map((t, i) => {
    let out: unknown;
    try {
      out = e.extract(t);
    } catch (err) {
      assert.fail(
        `extract() must never throw, but threw on text ${i} (${JSON.stringify(t.slice(0, 40))}...): ${String((err as Error)?.message ?? err)}`,
      );
    }
    assert.ok(
      out === null || typeof out === 'string',
      `extract() should return a string or null, got ${typeof out} on text ${i}`,
    );
    return out as string | null;
  });
}

/** The answer-extractor checks. */
export function extractorChecks(plugin: PluginDefinition<'extractor'>, kit: ExtractorKitOptions = {}): Check[] {
  expectKind(plugin, 'extractor');
  const texts = hostileTexts();
  return [
    ...commonChecks('extractor', plugin, kit),
    {
      title: 'is total: never throws, returns a string or null on hostile texts, and null on an empty completion',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const e = await kitCreate(plugin, kit, options);
          const out = run(e, texts);
          assert.equal(out[0], null, `${label(options)}: an empty completion has no answer`);
          assert.equal(out[1], null, `${label(options)}: a blank completion has no answer`);
        }
      },
    },
    {
      title: 'finds the expected answers',
      run: async () => {
        if (!kit.examples?.length) return;
        const e = await kitCreate(plugin, kit, kit.options ?? {});
        for (const ex of kit.examples)
          assert.equal(e.extract(ex.text), ex.answer, `extract(${JSON.stringify(ex.text)})`);
      },
    },
    {
      title: 'is deterministic and pure',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const a = await kitCreate(plugin, kit, options);
          const b = await kitCreate(plugin, kit, options);
          const all = [...texts, ...(kit.examples ?? []).map((x) => x.text)];
          const first = run(a, all);
          sameTranscript(first, run(b, all), `answers for ${label(options)}`);
          assert.deepEqual(run(a, all), first, `${label(options)}: extracting again should give the same answers`);
        }
      },
    },
  ];
}

/** The answer-extractor contract as a test suite. */
export function extractorContract(plugin: PluginDefinition<'extractor'>, kit: ExtractorKitOptions = {}): void {
  suite('extractor', plugin, kit, extractorChecks(plugin, kit));
}
