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

  it("refuses, before writing a byte, a file that holds something else (a config, code) or is one of the run's own files", () => {
    const config = path.join(tmp.dir, 'config.json');
    const text = JSON.stringify({ name: 'x', seed: 1 }, null, 2);
    for (const body of [text, JSON.stringify({ name: 'x' }), 'def f():\n    pass\n']) {
      fs.writeFileSync(config, body);
      let caught: unknown;
      try {
        RunAppendFile.open(config, { dir: run, resumeAt: null }, stepOf);
      } catch (e) {
        caught = e;
      }
      expect(isCorlError(caught, 'CORL_ERR_IO'), String(caught)).to.equal(true);
      expect((caught as Error).message).to.contain('expected a file of metrics records');
      expect(fs.readFileSync(config, 'utf8'), 'untouched').to.equal(body);
    }
    fs.mkdirSync(run, { recursive: true });
    fs.writeFileSync(path.join(run, 'metrics.jsonl'), line(1));
    const alias = path.join(tmp.dir, 'alias.jsonl');
    fs.linkSync(path.join(run, 'metrics.jsonl'), alias);
    const viaLink = path.join(tmp.dir, 'run-link');
    fs.symlinkSync(run, viaLink);
    for (const f of [
      path.join(run, 'metrics.jsonl'),
      alias,
      path.join(viaLink, 'state.json'),
      path.join(run, 'rollouts.jsonl'),
    ]) {
      let caught: unknown;
      try {
        RunAppendFile.open(f, { dir: run, resumeAt: null }, stepOf);
      } catch (e) {
        caught = e;
      }
      expect(isCorlError(caught, 'CORL_ERR_IO'), f).to.equal(true);
      expect((caught as Error).message).to.contain("got the run's");
    }
    expect(fs.readFileSync(path.join(run, 'metrics.jsonl'), 'utf8')).to.equal(line(1));
  });
});
