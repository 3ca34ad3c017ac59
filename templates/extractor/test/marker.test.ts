import { expect } from 'chai';
import { createPlugin, extractorContract } from 'corl/testing';
import { exampleExtractor, register } from '../src';

// The contract every extractor keeps: never throws, null for empty completions, hostile inputs, determinism.
extractorContract(exampleExtractor, {
  register,
  optionSets: [{ marker: 'Answer:', clean: false }],
  examples: [
    { text: 'Natalia sold 48 + 24 = 72 clips.\n#### 72', answer: '72' },
    { text: '#### 1,234.', answer: '1234' },
    { text: 'first #### 3\nthen #### 4 apples\nbye', answer: '4 apples' },
    { text: 'no marker here: 42', answer: null },
    { text: 'a marker and nothing after ####   ', answer: null },
  ],
});

describe('example:extractor', () => {
  it('uses the configured marker and leaves the answer alone without clean', async () => {
    const e = await createPlugin(exampleExtractor, { marker: 'Answer:', clean: false });
    expect(e.extract('Reasoning...\nAnswer: 1,000.')).to.equal('1,000.');
    expect(e.extract('#### 5')).to.equal(null);
  });

  it('an empty marker is refused by the schema', async () => {
    try {
      await createPlugin(exampleExtractor, { marker: '' });
      expect.fail('should throw');
    } catch (e) {
      expect((e as Error).message).to.match(/CORL_ERR_PLUGIN_OPTIONS.*marker/s);
    }
  });
});
