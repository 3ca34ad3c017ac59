import { expect } from 'chai';
import { CountLines } from '../../../core/trainer/progress';

describe('core/trainer/progress', () => {
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
