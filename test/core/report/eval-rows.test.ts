import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { passOf, readEvalRows } from '../../../core/report/eval-rows';
import { gzipText } from '../../../core/util/gz';
import { CorlError } from '../../../core/errors';

describe('core/report/eval-rows', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-eval-rows-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const lines = [
    '{"agent":0,"id":"p1","category":"carry","correct":[true,false,true,true]}',
    '{"agent":1,"id":"p1","correct":[false,false,false,true]}',
    '',
    '{"step":25,"pass1":0.5}',
    '{"agent":0,"id":"p2","correct":[]}',
  ].join('\n');

  it('keeps rows with an agent and a correct array, typed; a line of another kind (a summary) is skipped', () => {
    const file = path.join(dir, 'step-000025.jsonl');
    fs.writeFileSync(file, lines);
    const rows = readEvalRows(file);
    expect(rows).to.deep.equal([
      { agent: 0, id: 'p1', category: 'carry', correct: [true, false, true, true] },
      { agent: 1, id: 'p1', correct: [false, false, false, true] },
      { agent: 0, id: 'p2', correct: [] },
    ]);
    expect(passOf(rows[0]!)).to.equal(0.75);
    expect(passOf(rows[1]!)).to.equal(0.25);
    expect(passOf(rows[2]!)).to.be.NaN;
  });

  it('reads the gzip-compressed file when only it exists', () => {
    const file = path.join(dir, 'step-000000.jsonl');
    fs.writeFileSync(file + '.gz', gzipText(lines));
    expect(readEvalRows(file)).to.have.length(3);
  });

  it('a row of agent results that is damaged: CORL_ERR_RUN_CORRUPT naming the file, line and field', () => {
    const file = path.join(dir, 'step-000075.jsonl');
    for (const [row, field] of [
      ['{"agent":1,"id":"p1","correct":[false,"yes",null,true]}', 'correct[1]'],
      ['{"agent":"0","id":"p2","correct":[true]}', 'agent'],
      ['{"agent":-1,"correct":[true]}', 'agent'],
      ['{"agent":0}', 'correct'],
      ['{"agent":0,"correct":[true],"id":7}', 'id'],
    ] as const) {
      fs.writeFileSync(file, '{"agent":0,"correct":[true]}\n' + row + '\n');
      expect(() => readEvalRows(file))
        .to.throw(CorlError)
        .with.property('where', `${file}:2 ${field}`);
    }
  });

  it('a line that is not JSON: CORL_ERR_RUN_CORRUPT naming the file and line', () => {
    const file = path.join(dir, 'step-000050.jsonl');
    fs.writeFileSync(file, '{"agent":0,"correct":[true]}\n{"agent":1,"corr');
    try {
      readEvalRows(file);
      expect.fail('expected a coded error');
    } catch (e) {
      expect(e).to.be.instanceOf(CorlError);
      expect((e as CorlError).code).to.equal('CORL_ERR_RUN_CORRUPT');
      expect((e as CorlError).where).to.equal(`${file}:2`);
    }
  });
});
