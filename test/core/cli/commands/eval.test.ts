import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { guessFormat } from '../../../../core/cli/commands/eval';
import { CountLines } from '../../../../core/trainer/progress';
import { dataFixture, tempDir } from '../../../fixtures/configs';

describe('core/cli/commands/eval', () => {
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

  it('plain progress: one line per update with the running count', () => {
    const lines: string[] = [];
    const p = new CountLines((l) => lines.push(l));
    p.start(6, 'eval');
    p.update(2, 'a 2/3');
    p.note('note');
    p.update(6, '');
    expect(lines).to.deep.equal(['eval: 0/6', 'eval: 2/6 (a 2/3)', 'note', 'eval: 6/6']);
  });
});
