import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  kernelFileSystem,
  NotARegularFile,
  openUserAppend,
  outputFolderProblem,
  outputProblem,
  readUserFile,
  readUserText,
} from '../../../core/util/files';
import { tempDir } from '../../fixtures/configs';

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(NotARegularFile);
    return (e as Error).message;
  }
  return expect.fail('refused') as never;
}

describe('core/util/files (files a user names: regular files only, never a hang)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('corl-files-')));
  afterEach(() => tmp.cleanup());

  it('reads a regular file, and refuses one over the size limit before reading it', () => {
    const f = path.join(tmp.dir, 'a.txt');
    fs.writeFileSync(f, 'hello');
    expect(readUserText(f)).to.equal('hello');
    expect(refusal(() => readUserFile(f, 4))).to.equal('a file of 5 bytes, over the 4 bytes corl reads into memory');
  });

  it('refuses a folder, a FIFO without a writer, devices, symlinks to them and kernel files, at once', () => {
    const fifo = path.join(tmp.dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).to.equal(0);
    fs.symlinkSync('/dev/zero', path.join(tmp.dir, 'zero'));
    expect(refusal(() => readUserFile(tmp.dir))).to.equal('a folder');
    expect(refusal(() => readUserFile(fifo))).to.equal('a FIFO (named pipe)');
    expect(refusal(() => readUserFile('/dev/zero'))).to.equal('a character device');
    expect(refusal(() => readUserFile(path.join(tmp.dir, 'zero')))).to.equal('a character device');
    expect(refusal(() => readUserFile('/proc/self/status'))).to.equal(
      "a file of the kernel's proc file system, not a data file",
    );
    expect(() => readUserFile(path.join(tmp.dir, 'missing')))
      .to.throw()
      .with.property('code', 'ENOENT');
  });

  it('opens files to append to only when they are, or will be, regular files outside the kernel file systems', () => {
    const fifo = path.join(tmp.dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).to.equal(0);
    const file = path.join(tmp.dir, 'sub', 'out.jsonl');
    const fd = openUserAppend(file);
    fs.writeSync(fd, 'x\n');
    fs.closeSync(fd);
    expect(fs.readFileSync(file, 'utf8')).to.equal('x\n');
    expect(refusal(() => openUserAppend(fifo))).to.equal('a FIFO (named pipe)');
    expect(refusal(() => openUserAppend('/dev/null'))).to.equal('a character device');
    expect(refusal(() => openUserAppend(path.join(file, 'under-a-file')))).to.contain('which is a file');
    expect(outputProblem(path.join(tmp.dir, 'new', 'deeper', 'x.jsonl'))).to.equal(undefined);
    expect(outputProblem(tmp.dir)).to.equal('a folder');
    expect(outputProblem('/proc/sys/kernel/x')).to.equal("a file of the kernel's proc file system, not a data file");
    expect(outputProblem(path.join(file, 'x'))).to.equal(`a path under ${file}, which is a file`);
    expect(outputFolderProblem(tmp.dir)).to.equal(undefined);
    expect(outputFolderProblem(path.join(tmp.dir, 'new', 'deeper'))).to.equal(undefined);
    expect(outputFolderProblem(file)).to.equal('a file');
    expect(outputFolderProblem('/proc/sys/kernel/x')).to.equal(
      "a folder of the kernel's proc file system, not one for data",
    );
    expect(outputFolderProblem(path.join(file, 'x'))).to.equal(`a path under ${file}, which is a file`);
  });

  it('names the kernel file system of a path, or of its nearest existing ancestor', () => {
    expect(kernelFileSystem('/proc/self/status')).to.equal('proc');
    expect(kernelFileSystem('/proc/no/such/file')).to.equal('proc');
    expect(kernelFileSystem('/sys/kernel')).to.equal('sysfs');
    expect(kernelFileSystem(tmp.dir)).to.equal(undefined);
  });
});
