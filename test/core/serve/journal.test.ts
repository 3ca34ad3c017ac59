import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError, type ErrorCode } from '../../../core/errors';
import { execFileSync } from 'node:child_process';
import {
  encodeLine,
  Journal,
  type ServeIdentity,
  type JournalRecord,
  type JournalState,
} from '../../../core/serve/journal';
import { tempDir } from '../../fixtures/configs';

const identity: ServeIdentity = { agents: ['a', 'b'], topology: 'corl:ring', reward: 'corl:vote' };
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

/**
 * A service's state as the journal sees it: it holds every record it read or appended that `keep`
 * accepts (a service whose retention keeps what `keep` says), in the order it got them.
 */
class Held implements JournalState {
  readonly records: JournalRecord[] = [];
  constructor(private readonly keep: (r: JournalRecord, all: readonly JournalRecord[]) => boolean = () => true) {}
  visit(r: JournalRecord): void {
    this.add([r]);
  }
  add(rs: readonly JournalRecord[]): void {
    this.records.push(...rs);
    const kept = this.records.filter((r) => this.keep(r, this.records));
    this.records.splice(0, this.records.length, ...kept);
  }
  snapshot() {
    return { keep: [...this.records], exchange: { newest: 0, maxStepsAhead: 8 } };
  }
  fits(h: { maxStepsAhead: number }): boolean {
    return h.maxStepsAhead === 8;
  }
}
const keepAll = (): Held => new Held();

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
    const held = keepAll();
    const { journal } = await Journal.open(file, identity, held);
    const add = (r: JournalRecord) => {
      held.add([r]); // the state first, then the journal (as the exchanges do)
      return journal.append([r]);
    };
    for (let i = 0; i < compacted; i++) await add(keys(i, 'c'));
    await journal.compact(); // `compacted` records in the header of generation 2
    for (let i = 0; i < n; i++) await add(keys(i, 'x'));
    await journal.close();
    return fs.readFileSync(file, 'utf8').split('\n');
  }

  it('appends records (many at once in one group commit) with sequence numbers and checksums, and replays them in order', async () => {
    const { journal, replay } = await Journal.open(file, identity, keepAll());
    expect(replay.count).to.equal(0);
    const syncs: number[] = [];
    journal.onSync = (_s, n) => syncs.push(n);
    await Promise.all([
      journal.append([keys(0, 'x')]),
      journal.append([keys(0, 'y'), keys(1, 'x')]),
      journal.append([keys(1, 'y', 'b')]),
    ]);
    await journal.close();
    expect(syncs).to.deep.equal([4]); // appended in the same turn: one write, one fdatasync
    const again = Journal.read(file, identity);
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
    expect(Journal.read(file, identity).records).to.have.length(5);
  });

  it('drops a torn last line (no newline: a crash mid-write), keeps appending after it', async () => {
    const lines = await written(0, 2);
    fs.writeFileSync(file, lines.join('\n') + encodeLine({ q: 3, ...keys(5, 'z') }).slice(0, 20));
    const held = keepAll();
    const { journal, replay } = await Journal.open(file, identity, held);
    expect(replay.tornTail).to.equal(true);
    expect(replay.compacted).to.equal(false); // everything is kept: the file goes on, its torn tail cut off
    expect(held.records.map((r) => r.g)).to.deep.equal(['x', 'x']);
    await journal.append([keys(0, 'y')]);
    await journal.close();
    expect(Journal.read(file, identity).records.map((r) => r.g)).to.deep.equal(['x', 'x', 'y']);
  });

  it('a damaged final line (bad checksum, newline present) is a torn tail too, unless the seal says it was durable', async () => {
    const lines = await written(0, 3);
    lines[3] = lines[3]!.replace('"x"', '"X"');
    fs.writeFileSync(file, lines.join('\n'));
    // The seal says 3 records were durable: dropping the third would lose an acknowledged record.
    refused(
      () => Journal.read(file, identity),
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      'at least 3 records',
      'got 2 (after dropping a torn last line)',
    );
    fs.rmSync(Journal.sealFile(file));
    const r = Journal.read(file, identity);
    expect(r.tornTail).to.equal(true);
    expect(r.records).to.have.length(2);
  });

  it('refuses a journal cut at a line boundary after the last compaction (the seal counts the records)', async () => {
    const lines = await written(2, 4); // header, 2 compacted, 4 appended, ''
    const before = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, lines.slice(0, 5).join('\n') + '\n'); // drops the last two records
    refused(
      () => Journal.read(file, identity),
      'CORL_ERR_SERVE_JOURNAL_TRUNCATED',
      'at least 6 records',
      'got 4',
      'seal',
    );
    try {
      await Journal.open(file, identity, keepAll());
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
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_TRUNCATED', 'at least 4 records', 'header');
    // Cut to half its size in bytes: at a line boundary or not, it is refused.
    const full = lines.join('\n');
    fs.writeFileSync(file, full.slice(0, Math.floor(full.length / 2)));
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_TRUNCATED');
  });

  it('accepts a missing seal when nothing was appended since the compaction, and notes it when something was', async () => {
    await written(2, 0);
    fs.rmSync(Journal.sealFile(file));
    expect(Journal.read(file, identity).notes).to.deep.equal([]);
    await written(1, 2);
    fs.rmSync(Journal.sealFile(file));
    const r = Journal.read(file, identity);
    expect(r.records).to.have.length(3);
    expect(r.notes.join()).to.contain('no seal').and.contain('could not be ruled out');
  });

  it('refuses a journal replaced by an older copy, and a seal of another journal', async () => {
    await written(1, 1);
    const old = fs.readFileSync(file);
    const { journal } = await Journal.open(file, identity, keepAll());
    await journal.compact(); // generation 3
    await journal.close();
    fs.writeFileSync(file, old); // generation 2 back in place
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_TRUNCATED', 'generation 3', 'older copy');
    // A seal of the same generation written for another journal (another header checksum).
    const other = path.join(tmp.dir, 'other.jsonl');
    const o = await Journal.open(other, identity, keepAll());
    await o.journal.close();
    const seal = encodeLine({ v: 2, gen: 1, id: '00000000', records: 0 }).slice(0, -1).padEnd(511) + '\n';
    fs.writeFileSync(Journal.sealFile(other), seal + seal);
    refused(() => Journal.read(other, identity), 'CORL_ERR_SERVE_JOURNAL_TRUNCATED', 'another one');
  });

  it('refuses a record damaged in the middle, naming its line', async () => {
    const lines = await written(1, 3);
    lines[2] = lines[2]!.replace('"1"', '"7"');
    fs.writeFileSync(file, lines.join('\n'));
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_CORRUPT', 'line 3', 'checksum');
    lines[2] = 'not json at all';
    fs.writeFileSync(file, lines.join('\n'));
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_CORRUPT', 'line 3');
  });

  it('refuses reordered lines and a line missing from the middle', async () => {
    const lines = await written(0, 4);
    const swapped = [...lines];
    [swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!];
    fs.writeFileSync(file, swapped.join('\n'));
    refused(
      () => Journal.read(file, identity),
      'CORL_ERR_SERVE_JOURNAL_ORDER',
      'expected record 2 at line 3',
      'record 3: records 2 are missing',
    );
    fs.writeFileSync(file, [...lines.slice(0, 2), ...lines.slice(3)].join('\n'));
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_ORDER', 'line 3');
    fs.writeFileSync(file, [...lines.slice(0, 3), lines[2], ...lines.slice(3)].join('\n'));
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_ORDER', 'out of order or repeated');
  });

  it("refuses another identity's journal, and a format version it does not know", async () => {
    await written(0, 1);
    refused(
      () => Journal.read(file, { ...identity, reward: 'corl:other' }),
      'CORL_ERR_SERVE_JOURNAL',
      'corl:other',
      'corl:vote',
    );
    fs.writeFileSync(file, `${JSON.stringify({ t: 'open', v: 3, ...identity })}\n`);
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_VERSION', 'version 3');
    fs.writeFileSync(file, 'hello\n');
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL', 'line 1');
  });

  it('reads a version-1 journal (no checksums) with a note and rewrites it as version 2', async () => {
    fs.writeFileSync(
      file,
      [{ t: 'open', v: 1, ...identity }, keys(0, 'x'), keys(1, 'x')].map((r) => JSON.stringify(r)).join('\n') + '\n',
    );
    const held = keepAll();
    const { journal, replay } = await Journal.open(file, identity, held);
    await journal.close();
    expect(held.records.map((r) => r.s)).to.deep.equal([0, 1]);
    expect(replay.compacted).to.equal(true);
    expect(replay.notes.join()).to.contain('format version 1');
    const again = Journal.read(file, identity);
    expect(again.header).to.deep.include({ v: 2, gen: 1, records: 2 });
    expect(again.records).to.have.length(2);
  });

  it('compacts at start when that at least halves it; else goes on appending to the same generation', async () => {
    await written(0, 4); // generation 2, 4 records appended
    const some = await Journal.open(file, identity, new Held((r) => r.s >= 1)); // keeps 3 of 4: goes on
    expect(some.replay).to.deep.include({ count: 4, compacted: false, records: 4 });
    await some.journal.close();
    expect(Journal.read(file, identity).header).to.deep.include({ gen: 2, records: 0 });
    const half = new Held((r) => r.s >= 2); // keeps 2 of 4: a new generation of those 2
    const { journal, replay } = await Journal.open(file, identity, half);
    expect(replay).to.deep.include({ count: 4, compacted: true, records: 2 });
    await journal.append([keys(4, 'x')]);
    await journal.close();
    const again = Journal.read(file, identity);
    expect(again.header).to.deep.include({ gen: 3, records: 2 });
    expect(again.records.map((r) => r.s)).to.deep.equal([2, 3, 4]);
    // A generation whose window differs from this service's is rewritten whatever it keeps.
    const other = new Held();
    other.fits = () => false;
    const o = await Journal.open(file, identity, other);
    expect(o.replay.compacted).to.equal(true);
    await o.journal.close();
  });

  it('compacts while running once grown by growthBytes past twice the last compaction; appends racing it are kept once', async () => {
    // The service keeps the newest 20 records (its retention); 600 records arrive, 10 per append, all at once.
    const newest = (r: JournalRecord, all: readonly JournalRecord[]) => all.indexOf(r) >= all.length - 20;
    const held = new Held(newest);
    const { journal } = await Journal.open(file, identity, held, { growthBytes: 4096 });
    const appends: Promise<void>[] = [];
    let biggest = 0;
    for (let b = 0; b < 60; b++) {
      const batch = Array.from({ length: 10 }, (_, i) => keys(b * 10 + i, `g${b}`));
      held.add(batch); // the state first, then the journal, in the same turn (as the exchanges do)
      const p = journal.append(batch);
      appends.push(p);
      if (b % 3 === 2) await p; // up to three appends queue behind each group commit (and a compaction)
      biggest = Math.max(biggest, fs.statSync(file).size);
    }
    await Promise.all(appends);
    await journal.close();
    expect(journal.compactions).to.be.greaterThan(3);
    const size = fs.statSync(file).size;
    const line = Buffer.byteLength(encodeLine({ q: 600, ...keys(599, 'g59') }));
    // Within twice what is held, plus the growth, plus one group commit (appends of one turn) written before the check.
    expect(size).to.be.below(2 * (20 * line + 300) + 4096 + 80 * line); // 600 records without: 600 lines
    expect(biggest).to.be.below(2 * (20 * line + 300) + 4096 + 80 * line);
    // A restart holds exactly what the running service held: nothing lost, nothing twice.
    const again = new Held(newest);
    const reopened = await Journal.open(file, identity, again);
    await reopened.journal.close();
    expect(again.records).to.deep.equal(held.records);
    expect(held.records.map((r) => r.s)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 580 + i));
  });

  it('refuses a FIFO, a device, a socket path, a folder and symlinks to them (and such a seal) with a coded error, without hanging', async () => {
    const fifo = path.join(tmp.dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const cases: [string, string, string[]][] = [
      [fifo, 'journal', ['a FIFO']],
      [path.join(tmp.dir, 'zero'), 'journal', ['a character device', 'through the symlink', '/dev/zero']],
      [path.join(tmp.dir, 'dir'), 'journal', ['a folder']],
      [path.join(tmp.dir, 'to-fifo'), 'journal', ['a FIFO', 'through the symlink']],
    ];
    fs.symlinkSync('/dev/zero', cases[1]![0]);
    fs.mkdirSync(cases[2]![0]);
    fs.symlinkSync(fifo, cases[3]![0]);
    for (const [f, , parts] of cases) {
      refused(() => Journal.read(f, identity), 'CORL_ERR_SERVE_JOURNAL_FILE', ...parts);
      try {
        await Journal.open(f, identity, keepAll());
        expect.fail(`opened ${f}`);
      } catch (e) {
        expect(isCorlError(e, 'CORL_ERR_SERVE_JOURNAL_FILE'), String(e)).to.equal(true);
      }
    }
    expect(fs.statSync(fifo).isFIFO()).to.equal(true); // left as it was
    // A seal that is a FIFO beside a regular journal.
    await written(0, 1);
    fs.rmSync(Journal.sealFile(file));
    execFileSync('mkfifo', [Journal.sealFile(file)]);
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_FILE', 'journal seal', 'a FIFO');
  });

  it('follows a symlink to a regular file: a compaction replaces the file it points to, the link stays', async () => {
    const target = path.join(tmp.dir, 'real.jsonl');
    const link = path.join(tmp.dir, 'link.jsonl');
    fs.writeFileSync(target, '');
    fs.symlinkSync(target, link);
    const held = keepAll();
    const { journal } = await Journal.open(link, identity, held);
    held.add([keys(0, 'x')]);
    await journal.append([keys(0, 'x')]);
    await journal.compact();
    await journal.close();
    expect(fs.lstatSync(link).isSymbolicLink()).to.equal(true);
    expect(Journal.read(link, identity).records).to.have.length(1);
    expect(Journal.read(target, identity).header).to.deep.include({ gen: 2, records: 1 });
  });

  it('refuses a line longer than MAX_LINE_BYTES (a sparse file of 300 MiB of zeros after its header) without building it', async () => {
    await written(0, 1);
    const size = fs.statSync(file).size;
    fs.truncateSync(file, size + 300 * 1024 * 1024); // a hole: no disk used
    fs.rmSync(Journal.sealFile(file));
    refused(() => Journal.read(file, identity), 'CORL_ERR_SERVE_JOURNAL_CORRUPT', 'at most 268435456 bytes', 'line 3');
  });

  it("restores a journal the service wrote of more than V8's longest string (512 MiB), line by line, and compacts it", async function () {
    this.timeout(0); // a size test, not a speed test: it takes what the disk takes
    // 140 replies of 4 MiB each (a /get_reward reply padded to reach the size with few lines).
    const pad = 'x'.repeat(4 * 1024 * 1024);
    const reply = (s: number): JournalRecord => ({
      t: 'reply',
      n: 'requests',
      a: 'a',
      s,
      g: `id${s}`,
      h: H,
      r: { pad },
    });
    const last = (r: JournalRecord, all: readonly JournalRecord[]) => r === all[all.length - 1];
    const writer = new Held(last);
    const first = await Journal.open(file, identity, writer);
    for (let s = 0; s < 140; s++) {
      writer.add([reply(s)]);
      await first.journal.append([reply(s)]);
    }
    await first.journal.close();
    expect(fs.statSync(file).size).to.be.greaterThan(0x1fffffe8);
    const reader = new Held(last);
    const { journal, replay } = await Journal.open(file, identity, reader);
    await journal.close();
    expect(replay).to.deep.include({ count: 140, compacted: true, records: 1 });
    expect(reader.records.map((r) => r.s)).to.deep.equal([139]);
    expect(fs.statSync(file).size).to.be.below(5 * 1024 * 1024);
    expect(Journal.read(file, identity).records).to.have.length(1);
  });

  it('a disabled journal keeps nothing and counts what it was given', async () => {
    const j = Journal.disabled();
    await j.append([keys(0, 'x'), keys(0, 'y')]);
    expect(j.written).to.equal(2);
    await j.close();
  });
});
