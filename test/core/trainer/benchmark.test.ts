import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { guessFormat } from '../../../core/trainer/benchmark';
import { dataFixture, tempDir } from '../../fixtures/configs';

describe('core/trainer/benchmark', () => {
  it('guesses the answer format of a benchmark file from its first row', () => {
    const tmp = tempDir('corl-eval-fmt-');
    try {
      expect(guessFormat(dataFixture('gsm8k.jsonl'))).to.equal('gsm8k');
      expect(guessFormat(dataFixture('math500.jsonl'))).to.equal('math');
      expect(guessFormat(dataFixture('plain.jsonl'))).to.equal('plain');
      const odd = path.join(tmp.dir, 'odd.jsonl');
      fs.writeFileSync(odd, '\n{not json\n');
      expect(guessFormat(odd)).to.equal('gsm8k'); // the task then reports the line
      expect(guessFormat(path.join(tmp.dir, 'missing.jsonl'))).to.equal('gsm8k'); // and the missing file
    } finally {
      tmp.cleanup();
    }
  });
});
