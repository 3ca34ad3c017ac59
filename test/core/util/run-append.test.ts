import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import { RunAppendFile } from '../../../core/util/run-append';
import { tempDir } from '../../fixtures/configs';

const stepOf = (line: string): number | undefined => {
  try {
    return (JSON.parse(line) as { step: number }).step;
  } catch {
    return undefined;
  }
};
const line = (step: number, tag = 'r') => JSON.stringify({ step, tag }) + '\n';

describe('core/util/run-append (a sink file with each record once across kill and resume)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  let run: string;
  beforeEach(() => {
    tmp = tempDir('corl-append-');
    file = path.join(tmp.dir, 'sink.jsonl');
    run = path.join(tmp.dir, 'run');
  });
  afterEach(() => tmp.cleanup());

  it('a resumed run keeps its lines up to the checkpoint and cuts the rest, leaving earlier runs alone', () => {
    fs.writeFileSync(file, line(7, 'earlier') + '{"step": 9, "torn');
    const a = RunAppendFile.open(file, { dir: run, resumeAt: null }, stepOf);
    for (const s of [0, 1, 2, 3, 4, 5]) a.append(line(s));
    a.append('{"step": 6, "to');
    a.close();
    // The earlier run's torn line was ended, so this run's lines stayed whole.
    const start = line(7, 'earlier') + '{"step": 9, "torn\n';
    const b = RunAppendFile.open(file, { dir: run, resumeAt: 3 }, stepOf);
    expect(fs.readFileSync(file, 'utf8')).to.equal(start + [0, 1, 2, 3].map((s) => line(s)).join(''));
    expect(fs.readFileSync(`${file}.after-checkpoint`, 'utf8')).to.equal(line(4) + line(5) + '{"step": 6, "to');
    b.append(line(4, 'again'));
    b.close();
    expect(fs.readFileSync(file, 'utf8').endsWith(line(3) + line(4, 'again'))).to.equal(true);
  });

  it('a run without a mark (started by an older corl) cuts from the end the lines past its checkpoint', () => {
    fs.writeFileSync(file, [5, 0, 1, 2, 3].map((s) => line(s)).join('') + '{"st');
    RunAppendFile.open(file, { dir: run, resumeAt: 1 }, stepOf).close();
    expect(fs.readFileSync(file, 'utf8')).to.equal([5, 0, 1].map((s) => line(s)).join(''));
  });

  it('outside a run it only appends; a file it cannot append to is CORL_ERR_IO naming it', () => {
    const f = RunAppendFile.open(file, undefined, stepOf);
    f.append(line(0));
    f.close();
    expect(fs.readFileSync(file, 'utf8')).to.equal(line(0));
    try {
      RunAppendFile.open(tmp.dir, undefined, stepOf);
      expect.fail('refused');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_IO')).to.equal(true);
      expect((e as Error).message).to.contain(`${tmp.dir}: expected a regular file to append to, got a folder`);
    }
  });
});
