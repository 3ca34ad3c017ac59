// Replaying, reordering, truncating or transplanting a comparison's reads.jsonl, through the real
// `corl report`: each is reported as damage, never shown as a lower count.

import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readHash, LEDGER_GENESIS } from '../../core/report/reads';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/corl.js');

function corl(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 240000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const small = (name: string) =>
  coRlConfig({
    name,
    trainer: { steps: 2, batchSize: 4, groupSize: 5, evalEvery: 1, checkpointEvery: 1, sampling: { maxTokens: 4 } },
  });

type Rec = Record<string, unknown> & { read: number };

describe('e2e: a replayed, reordered, truncated or transplanted read ledger is reported by corl report', function () {
  this.timeout(600000);
  let tmp: ReturnType<typeof tempDir>;
  let out: string;
  let other: string;
  before(() => {
    tmp = tempDir('corl-ledger-');
    const a = writeConfig(tmp.dir, 'a.json', small('ledger-a'));
    const b = writeConfig(tmp.dir, 'b.json', small('ledger-b'));
    out = path.join(tmp.dir, 'mine');
    other = path.join(tmp.dir, 'other');
    for (const dir of [out, other]) {
      const r = corl(['compare', a, b, '--seeds', '1', '--out', dir, '--progress', 'none']);
      expect(r.status, r.stderr).to.equal(0);
      const one = corl(['report', path.join(dir, 'ledger-a', 'seed-0')]);
      expect(one.status, one.stderr).to.equal(0);
    }
  });
  after(() => tmp.cleanup());

  const lines = (dir: string) => fs.readFileSync(path.join(dir, 'reads.jsonl'), 'utf8').trim().split('\n');
  let n = 0;
  function attacked(edit: (ledger: string[]) => string[]): string {
    const copy = path.join(tmp.dir, `attack-${n++}`);
    fs.cpSync(out, copy, { recursive: true });
    fs.writeFileSync(path.join(copy, 'reads.jsonl'), edit(lines(out)).join('\n') + '\n');
    const r = corl(['report', copy]);
    expect(r.status, r.stderr).to.equal(0);
    expect(fs.readFileSync(path.join(copy, 'results.md'), 'utf8')).to.contain('the ledger is damaged');
    return r.stdout;
  }

  it('a prefix, or the old ledger replayed after more reads, is a truncation', () => {
    expect(lines(out)).to.have.length(2);
    expect(attacked((l) => l.slice(0, 1))).to.contain(
      'holds 1 read(s), though compare.json records 2: it was truncated',
    );
  });

  it("a prefix with compare.json's record of the count removed is reported", () => {
    const copy = path.join(tmp.dir, 'unanchored');
    fs.cpSync(out, copy, { recursive: true });
    fs.writeFileSync(path.join(copy, 'reads.jsonl'), lines(out)[0] + '\n');
    const meta = JSON.parse(fs.readFileSync(path.join(copy, 'compare.json'), 'utf8')) as Record<string, unknown>;
    delete meta.reads;
    fs.writeFileSync(path.join(copy, 'compare.json'), JSON.stringify(meta));
    const r = corl(['report', copy]);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('compare.json records no count of reads, though reads.jsonl is chained');
  });

  it('records reordered break the numbering and the chain', () => {
    const s = attacked((l) => [l[1]!, l[0]!]);
    expect(s).to.contain('read 1 of reads.jsonl is numbered 2');
    expect(s).to.contain('does not chain to the read before it');
  });

  it("another folder's records, as they are or digest stripped and chain recomputed, are reported", () => {
    expect(attacked(() => lines(other))).to.contain('have been replaced or removed since');
    const forged = attacked(() => {
      let prev = LEDGER_GENESIS;
      return lines(other).map((text) => {
        const { hash: _h, runsDigest: _d, ...rest } = JSON.parse(text) as Rec;
        const rec = { ...rest, prev } as Rec;
        const hash = readHash(prev, rec as never);
        prev = hash;
        return JSON.stringify({ ...rec, hash });
      });
    });
    expect(forged).to.contain('carries no runs digest');
    expect(forged).to.contain('differs from the one compare.json records');
  });
});
