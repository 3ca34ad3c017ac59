import { expect } from 'chai';
import type { AnswerExtractor } from '../../../core/contracts/answer-extractor';
import { definePlugin } from '../../../core/registry/define';
import { extractorChecks, hostileTexts } from '../../../core/testing';
import { fails, passes } from './helpers';

const extractor = (name: string, create: () => AnswerExtractor) =>
  definePlugin({
    manifest: {
      name,
      kind: 'extractor',
      description: 'test extractor',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create,
  });

describe('core/testing/extractor (the extractor suite catches broken extractors)', () => {
  it('hostile texts include empty, long, nested and unicode inputs', () => {
    const texts = hostileTexts();
    expect(texts[0]).to.equal('');
    expect(Math.max(...texts.map((t) => t.length))).to.be.greaterThan(100000);
    expect(texts.some((t) => /[^\x00-\x7f]/.test(t))).to.equal(true);
  });

  it('an extractor that throws on some text is caught', async () => {
    const brittle = extractor('test:brittle', () => ({
      extract: (t) => {
        if (t.includes('{{')) throw new Error('nested');
        return t.match(/\d+/)?.[0] ?? null;
      },
    }));
    await fails(extractorChecks(brittle), 'is total', /must never throw/);
  });

  it('an answer for an empty completion, or a non-string result, is caught', async () => {
    await fails(
      extractorChecks(extractor('test:always', () => ({ extract: () => '0' }))),
      'is total',
      /empty completion has no answer/,
    );
    await fails(
      extractorChecks(
        extractor('test:number', () => ({ extract: (t) => (t ? (t.length as unknown as string) : null) })),
      ),
      'is total',
      /string or null/,
    );
  });

  it('examples are checked against the extractor', async () => {
    const digits = extractor('test:digits', () => ({ extract: (t) => t.match(/\d+/)?.[0] ?? null }));
    await passes(
      extractorChecks(digits, { examples: [{ text: 'it is 12 apples', answer: '12' }] }),
      'expected answers',
    );
    await fails(
      extractorChecks(digits, { examples: [{ text: 'it is 12 apples', answer: '13' }] }),
      'expected answers',
      /12/,
    );
  });

  it('an extractor with memory is caught', async () => {
    let n = 0;
    const counting = extractor('test:counting', () => ({ extract: (t) => (t.trim() ? String(n++) : null) }));
    await fails(extractorChecks(counting), 'deterministic', /same/);
  });
});
