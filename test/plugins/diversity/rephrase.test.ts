import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { rephraseDiversity } from '../../../plugins/diversity/rephrase';
import { noDiversity } from '../../../plugins/diversity/none';
import { tempDir } from '../../fixtures/configs';

const problem = { id: 'p1', prompt: 'What is 2+2?', variants: ['Compute two plus two.', 'Add 2 and 2.'] };

describe('plugins/diversity', () => {
  it('corl:none gives everyone the canonical prompt', () => {
    const d = noDiversity.create({}, {} as any) as any;
    expect(d.view(problem, 1, 2).prompt).to.equal('What is 2+2?');
  });
  it('corl:rephrase gives each agent its assigned variant, aligned by id', () => {
    const d = rephraseDiversity.create({ assign: [null, 1], missing: 'error' }, { baseDir: '.' } as any) as any;
    expect(d.view(problem, 0, 2).prompt).to.equal('What is 2+2?');
    expect(d.view(problem, 1, 2).prompt).to.equal('Add 2 and 2.');
    expect(d.view(problem, 5, 6).prompt).to.equal('What is 2+2?');
  });
  it('a missing variant is a coded error, or the canonical prompt when told', () => {
    const strict = rephraseDiversity.create({ assign: [3], missing: 'error' }, { baseDir: '.' } as any) as any;
    expect(() => strict.view(problem, 0, 1)).to.throw(/CORL_ERR_TASK_DATA.*variant 3 of problem "p1"/);
    const lenient = rephraseDiversity.create({ assign: [3], missing: 'original' }, { baseDir: '.' } as any) as any;
    expect(lenient.view(problem, 0, 1).prompt).to.equal('What is 2+2?');
  });
  it('reads variants from a JSONL file and reports bad lines with their number', () => {
    const tmp = tempDir();
    try {
      fs.writeFileSync(path.join(tmp.dir, 'v.jsonl'), '{"id":"p1","variants":["From the file."]}\n');
      const d = rephraseDiversity.create({ assign: [0], file: 'v.jsonl', missing: 'error' }, {
        baseDir: tmp.dir,
      } as any) as any;
      expect(d.view(problem, 0, 1).prompt).to.equal('From the file.');
      fs.writeFileSync(path.join(tmp.dir, 'bad.jsonl'), '{"id":"p1","variants":[]}\n{oops\n');
      expect(() =>
        rephraseDiversity.create({ assign: [0], file: 'bad.jsonl', missing: 'error' }, { baseDir: tmp.dir } as any),
      ).to.throw(/bad\.jsonl:2/);
    } finally {
      tmp.cleanup();
    }
  });
});
