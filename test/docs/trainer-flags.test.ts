// The trainers' flags for dynamic filtering and over-sampling that the serve guide names are the
// ones their pinned releases define: test/fixtures/trainer-flags.json lists what was read in each
// release's source (file and line at its tag), and the guide names exactly those.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const guide = fs.readFileSync(path.join(root, 'docs/guide/serve.md'), 'utf8');
const read = JSON.parse(fs.readFileSync(path.join(root, 'test/fixtures/trainer-flags.json'), 'utf8')) as {
  flags: { trainer: string; release: string; flag: string; file: string; line: number }[];
};

/** Backticked flags (`--x`, `algorithm.…`) on the guide's lines about filtering or over-sampling. */
function guideFlags(): string[] {
  const out = new Set<string>();
  for (const line of guide.split('\n'))
    if (/filter|over-sampl/i.test(line))
      for (const m of line.matchAll(/`((?:--|algorithm\.)[a-z0-9_.-]+)`/g)) out.add(m[1]!);
  return [...out].sort();
}

describe('docs: the trainer flags the serve guide names for filtering and over-sampling', () => {
  it('are the flags read in the pinned releases, each with its file and line', () => {
    const listed = read.flags.map((f) => f.flag).sort();
    expect(guideFlags()).to.deep.equal(listed);
    for (const f of read.flags) {
      expect(f.file, f.flag).to.match(/^[a-z_/]+\.(py|yaml)$/);
      expect(f.line, f.flag).to.be.a('number').above(0);
      // The release the guide's "Trainer versions" table pins for that trainer.
      expect(guide, `${f.trainer} ${f.release}`).to.include(`${f.release}`);
    }
  });
});
