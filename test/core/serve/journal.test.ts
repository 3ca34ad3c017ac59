import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError, type ErrorCode } from '../../../core/errors';
import { encodeLine, Journal, type JournalCohort, type JournalRecord, type Replay } from '../../../core/serve/journal';
import { tempDir } from '../../fixtures/configs';

const cohort: JournalCohort = { agents: ['a', 'b'], topology: 'corl:ring', reward: 'corl:vote' };
const H = 'A'.repeat(27);
const keys = (s: number, g: string, a = 'a'): JournalRecord => ({
  t: 'keys',
  n: 'groups',
  a,
  s,
  g,
  h: H,
  k: ['1', null],
});
const keepAll = (r: Replay) => ({ keep: r.records, exchange: { newest: 0, maxStepsAhead: 8 } });

function refused(run: () => unknown, code: ErrorCode, ...parts: string[]): void {
  try {
    run();
  } catch (e) {
    expect(isCorlError(e, code), String(e)).to.equal(true);
    for (const p of parts) expect((e as Error).message).to.contain(p);
    return;
  }
  expect.fail(`expected ${code}`);
}

describe('serve/journal', () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    tmp = tempDir('corl-journal-');
    file = path.join(tmp.dir, 'j.jsonl');
  });
  afterEach(() => tmp.cleanup());

  /** A journal of `n` records appended after a compaction that wrote `compacted` (each append its own commit). */
  async function written(compacted: number, n: number): Promise<string[]> {
    fs.rmSync(file, { force: true });
    fs.rmSync(Journal.sealFile(file), { force: true });
    const first = await Journal.open(file, cohort, keepAll);
    for (let i = 0; i < compacted; i++) await first.journal.append([keys(i, 'c')]);
    await first.journal.close();
    const { journal } = await Journal.open(file, cohort, keepAll); // compacts: `compacted` records in the header
    for (let i = 0; i < n; i++) await journal.append([keys(i, 'x')]);
    await journal.close();
    return fs.readFileSync(file, 'utf8').split('\n');
  }

  it('appends records (many at once in one group commit) with sequence numbers and checksums, and replays them in order', async () => {
    const { journal, replay } = await Journal.open(file, cohort, keepAll);
    expect(replay.records).to.deep.equal([]);
    const syncs: number[] = [];
    journal.onSync = (_s, n) => syncs.push(n);
    await Promise.all([
      journal.append([keys(0, 'x')]),
      journal.append([keys(0, 'y'), keys(1, 'x')]),
      journal.append([keys(1, 'y', 'b')]),
    ]);
    await journal.close();
    expect(syncs).to.deep.equal([4]); // appended in the same turn: one write, one fdatasync
    const again = Journal.read(file, cohort);
    expect(again.records.map((r) => `${r.a}${r.s}${r.g}`)).to.deep.equal(['a0x', 'a0y', 'a1x', 'b1y']);
    expect(again.lines).to.deep.equal([2, 3, 4, 5]);
    expect(again.tornTail).to.equal(false);
    expect(again.header).to.deep.include({ t: 'open', v: 2, gen: 1, records: 0 });
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    expect(JSON.parse(lines[1]!)).to.deep.include({ q: 1, t: 'keys', g: 'x' });
    expect(lines[4]).to.match(/^\{"q":4,.*,"c":"[0-9a-f]{8}"\}$/);
    expect(fs.readFileSync(Journal.sealFile(file), 'utf8')).to.match(/"gen":1,.*"records":4/);
  });

  it('a compaction starts a new generation that says in its header how many records it kept', async () => {
    const lines = await written(3, 2);
    expect(JSON.parse(lines[0]!)).to.deep.include({ gen: 2, records: 3 });
    expect(lines.slice(1, -1).map((l) => JSON.parse(l).q)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(Journal.read(file, cohort).records).to.have.length(5);
  });

  it('drops a torn last line (no newline: a crash mid-write), keeps appending after it', async () => {
    const lines = await written(0, 2);
    fs.writeFileSync(file, lines.join('\n') + encodeLine({ q: 3, ...keys(5, 'z') }).slice(0, 20));
    const { journal, replay } = await Journal.open(file, cohort, keepAll);
    expect(replay.tornTail).to.equal(true);
    expect(replay.records.map((r) => r.g)).to.deep.equal(['x', 'x']);
    await journal.append([keys(0, 'y')]);
    await journal.close();
    expect(Journal.read(file, cohort).records.map((r) => r.g)).to.deep.equal(['x', 'x', 'y']);
  });

  it('a damaged final line (bad checksum, newline present) is a torn tail too, unless the seal says it was durable', async () => {
    const lines = await written(0, 3);
    lines[3] = lines[3]!.replace('"x"', '"X"');
    fs.writeFileSync(file, lines.join('\n'));
    // The seal says 3 records were durable: dropping the third would lose an acknowledged record.
    refused(
      () => Journal.read(file, cohort),
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      'at least 3 records',
      'got 2 (after dropping a torn last line)',
    );
    fs.rmSync(Journal.sealFile(file));
    const r = Journal.read(file, cohort);
    expect(r.tornTail).to.equal(true);
    expect(r.records).to.have.length(2);
  });

  it('refuses a journal cut at a line boundary after the last compaction (the seal counts the records)', async () => {
    const lines = await written(2, 4); // header, 2 compacted, 4 appended, ''
    const before = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, lines.slice(0, 5).join('\n') + '\n'); // drops the last two records
    refused(
      () => Journal.read(file, cohort),
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      'at least 6 records',
      'got 4',
      'seal',
    );
    try {
      await Journal.open(file, cohort, keepAll);
    } catch {
      /* refused */
    }
    expect(fs.readFileSync(file, 'utf8')).to.equal(lines.slice(0, 5).join('\n') + '\n'); // nothing rewritten
    expect(before.length).to.be.greaterThan(0);
  });

  it('refuses a journal cut into its compacted part even without the seal (the header counts them)', async () => {
    const lines = await written(4, 0);
    fs.rmSync(Journal.sealFile(file));
    fs.writeFileSync(file, lines.slice(0, 3).join('\n') + '\n'); // header + 2 of the 4 compacted
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL_TRUNCATED', 'at least 4 records', 'header');
    // Cut to half its size in bytes: at a line boundary or not, it is refused.
    const full = lines.join('\n');
    fs.writeFileSync(file, full.slice(0, Math.floor(full.length / 2)));
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL_TRUNCATED');
  });

  it('accepts a missing seal when nothing was appended since the compaction, and notes it when something was', async () => {
    await written(2, 0);
    fs.rmSync(Journal.sealFile(file));
    expect(Journal.read(file, cohort).notes).to.deep.equal([]);
    await written(1, 2);
    fs.rmSync(Journal.sealFile(file));
    const r = Journal.read(file, cohort);
    expect(r.records).to.have.length(3);
    expect(r.notes.join()).to.contain('no seal').and.contain('could not be ruled out');
  });

  it('refuses a journal replaced by an older copy, and a seal of another journal', async () => {
    await written(1, 1);
    const old = fs.readFileSync(file);
    const { journal } = await Journal.open(file, cohort, keepAll); // generation 3
    await journal.close();
    fs.writeFileSync(file, old); // generation 2 back in place
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL_TRUNCATED', 'generation 3', 'older copy');
    // A seal of the same generation written for another journal (another header checksum).
    const other = path.join(tmp.dir, 'other.jsonl');
    const o = await Journal.open(other, cohort, keepAll);
    await o.journal.close();
    const seal = encodeLine({ v: 2, gen: 1, id: '00000000', records: 0 }).slice(0, -1).padEnd(511) + '\n';
    fs.writeFileSync(Journal.sealFile(other), seal + seal);
    refused(() => Journal.read(other, cohort), 'CORL_ERR_SERVE_JOURNAL_TRUNCATED', 'another one');
  });

  it('refuses a record damaged in the middle, naming its line', async () => {
    const lines = await written(1, 3);
    lines[2] = lines[2]!.replace('"1"', '"7"');
    fs.writeFileSync(file, lines.join('\n'));
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL_CORRUPT', 'line 3', 'checksum');
    lines[2] = 'not json at all';
    fs.writeFileSync(file, lines.join('\n'));
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL_CORRUPT', 'line 3');
  });

  it('refuses reordered lines and a line missing from the middle', async () => {
    const lines = await written(0, 4);
    const swapped = [...lines];
    [swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!];
    fs.writeFileSync(file, swapped.join('\n'));
    refused(
      () => Journal.read(file, cohort),
      'CORL_ERR_SERVE_JOURNAL_ORDER',
      'expected record 2 at line 3',
      'record 3: records 2 are missing',
    );
    fs.writeFileSync(file, [...lines.slice(0, 2), ...lines.slice(3)].join('\n'));
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL_ORDER', 'line 3');
    fs.writeFileSync(file, [...lines.slice(0, 3), lines[2], ...lines.slice(3)].join('\n'));
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL_ORDER', 'out of order or repeated');
  });

  it("refuses another cohort's journal, and a format version it does not know", async () => {
    await written(0, 1);
    refused(
      () => Journal.read(file, { ...cohort, reward: 'corl:other' }),
      'CORL_ERR_SERVE_JOURNAL',
      'corl:other',
      'corl:vote',
    );
    fs.writeFileSync(file, `${JSON.stringify({ t: 'open', v: 3, ...cohort })}\n`);
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL_VERSION', 'version 3');
    fs.writeFileSync(file, 'hello\n');
    refused(() => Journal.read(file, cohort), 'CORL_ERR_SERVE_JOURNAL', 'line 1');
  });

  it('reads a version-1 journal (no checksums) with a note and rewrites it as version 2', async () => {
    fs.writeFileSync(
      file,
      [{ t: 'open', v: 1, ...cohort }, keys(0, 'x'), keys(1, 'x')].map((r) => JSON.stringify(r)).join('\n') + '\n',
    );
    const { journal, replay } = await Journal.open(file, cohort, keepAll);
    await journal.close();
    expect(replay.records.map((r) => r.s)).to.deep.equal([0, 1]);
    expect(replay.notes.join()).to.contain('format version 1');
    const again = Journal.read(file, cohort);
    expect(again.header).to.deep.include({ v: 2, gen: 1, records: 2 });
    expect(again.records).to.have.length(2);
  });

  it('a disabled journal keeps nothing and counts what it was given', async () => {
    const j = Journal.disabled();
    await j.append([keys(0, 'x'), keys(0, 'y')]);
    expect(j.written).to.equal(2);
    await j.close();
  });
});
