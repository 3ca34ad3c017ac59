import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { replaceThrough, writeFileAtomic, writeFileAtomicSync, writeSyncedSync } from '../../../core/util/fs';
import { tempDir } from '../../fixtures/configs';

describe('core/util/fs (durable writes)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-fs-');
  });
  afterEach(() => tmp.cleanup());

  it('replaces a file whole, in a folder made on the way, leaving no temporary file', async () => {
    const file = path.join(tmp.dir, 'a', 'b.txt');
    await writeFileAtomic(file, 'one');
    writeFileAtomicSync(path.join(tmp.dir, 'c', 'd.txt'), 'two');
    expect(fs.readFileSync(file, 'utf8')).to.equal('one');
    expect(fs.readFileSync(path.join(tmp.dir, 'c', 'd.txt'), 'utf8')).to.equal('two');
    expect(fs.readdirSync(path.join(tmp.dir, 'a'))).to.deep.equal(['b.txt']);
  });

  it('a failed write leaves the file as it was and removes the temporary file', async () => {
    const file = path.join(tmp.dir, 'keep.txt');
    fs.writeFileSync(file, 'before');
    const tmpFile = `${file}.part`;
    let caught: unknown;
    try {
      await replaceThrough(file, tmpFile, async (fh) => {
        await fh.writeFile('half');
        throw new Error('disk full');
      });
    } catch (e) {
      caught = e;
    }
    expect((caught as Error).message).to.equal('disk full');
    expect(fs.readFileSync(file, 'utf8')).to.equal('before');
    expect(fs.existsSync(tmpFile)).to.equal(false);
    // 'wx' refuses a temporary file already there (never writes through a leftover or a link).
    fs.writeFileSync(tmpFile, 'left');
    let refused: unknown;
    await replaceThrough(file, tmpFile, (fh) => fh.writeFile('x'), 'wx').catch((e: unknown) => (refused = e));
    expect((refused as NodeJS.ErrnoException).code).to.equal('EEXIST');
    expect(fs.readFileSync(file, 'utf8')).to.equal('before');
  });

  it('writeSyncedSync appends or replaces, whole', () => {
    const file = path.join(tmp.dir, 'log.txt');
    writeSyncedSync(file, 'a\n', 'a');
    writeSyncedSync(file, 'b\n', 'a');
    expect(fs.readFileSync(file, 'utf8')).to.equal('a\nb\n');
    const big = 'x'.repeat(3 * 1024 * 1024);
    writeSyncedSync(file, big, 'w');
    expect(fs.statSync(file).size).to.equal(big.length);
  });
});
