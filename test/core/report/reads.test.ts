import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { reportCompare } from '../../../core/report/compare';
import {
  folderLedger,
  LEDGER_GENESIS,
  ranges,
  readHash,
  readLedger,
  READS_FILE,
  type Read,
} from '../../../core/report/reads';
import { isCorlError } from '../../../core/errors';
import { writeComparison, writeFixtureRun, type ComparisonFixture } from '../../fixtures/comparison';
import { tempDir } from '../../fixtures/configs';

describe('report/reads: every held-out read is counted in the comparison folder', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-reads-');
  });
  afterEach(() => tmp.cleanup());

  const fixture = (split: 'held-out' | 'validation' = 'held-out'): ComparisonFixture => ({
    configs: [{ name: 'b' }, { name: 'a' }],
    seeds: [0, 1],
    problems: 3,
    split,
    answers: (config, seed, step, agent, problem) => [
      (seed + agent + problem + (config === 'a' ? step : 0)) % 2 === 0,
      true,
    ],
  });

  it('names seed ranges compactly', () => {
    expect(ranges([8, 7, 0, 1, 2, 5])).to.equal('0-2,5,7-8');
    expect(ranges([])).to.equal('');
  });

  it('a rendering of runs no earlier read showed is a read; the same runs again are not', async () => {
    const f = fixture();
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), f);
    await reportCompare(dir);
    expect(readLedger(dir).map((r) => [r.read, r.by, r.runs])).to.deep.equal([
      [1, 'corl report', { a: '0-1', b: '0-1' }],
    ]);
    const again = await reportCompare(dir);
    expect(readLedger(dir)).to.have.length(1);
    expect(again.provenance.reads).to.equal(1);
    expect(fs.readFileSync(path.join(dir, 'results.md'), 'utf8')).to.contain(
      'Plan: none (an unplanned comparison). Held-out reads of this folder: 1 (reads.jsonl).',
    );
    // a third seed finishes: what the next rendering shows is new
    for (const c of f.configs) writeFixtureRun(dir, f, c, 2);
    await reportCompare(dir);
    expect(readLedger(dir).map((r) => r.runs)).to.deep.equal([
      { a: '0-1', b: '0-1' },
      { a: '0-2', b: '0-2' },
    ]);
  });

  it('the validation split is not counted; a broken ledger is a coded error, not a silent restart', async () => {
    const v = writeComparison(path.join(tmp.dir, 'val'), fixture('validation'));
    await reportCompare(v);
    expect(fs.existsSync(path.join(v, READS_FILE))).to.equal(false);
    expect(fs.readFileSync(path.join(v, 'results.md'), 'utf8')).to.contain(
      'Split: validation, so these tables read no held-out result.',
    );
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), fixture());
    fs.writeFileSync(path.join(dir, READS_FILE), '{"read": 1, "by": "x", "runs": {}}\nnot json\n');
    let code = '';
    try {
      await reportCompare(dir);
    } catch (e) {
      if (isCorlError(e)) code = `${e.code} ${e.where}`;
    }
    expect(code).to.equal(`CORL_ERR_RUN_CORRUPT ${path.join(dir, READS_FILE)}:2`);
  });

  it('the ledger is chained and anchored: deleted, truncated or edited, it is reported, never silently reset', async () => {
    const f = fixture();
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), f);
    await reportCompare(dir);
    for (const c of f.configs) writeFixtureRun(dir, f, c, 2);
    await reportCompare(dir);
    const intact = folderLedger(dir);
    expect(intact.problems).to.deep.equal([]);
    expect(intact.reads.map((r) => r.prev)).to.deep.equal([LEDGER_GENESIS, intact.reads[0]!.hash]);
    const anchor = (JSON.parse(fs.readFileSync(path.join(dir, 'compare.json'), 'utf8')) as { reads: unknown }).reads;
    expect(anchor).to.deep.equal({ count: 2, head: intact.reads[1]!.hash });
    const ledger = path.join(dir, READS_FILE);
    const text = fs.readFileSync(ledger, 'utf8');
    const [one, two] = text.trim().split('\n') as [string, string];
    const damage: [string, () => void, string][] = [
      ['deleted', () => fs.rmSync(ledger), 'reads.jsonl is missing, though compare.json records 2 read(s)'],
      [
        'truncated',
        () => fs.writeFileSync(ledger, one + '\n'),
        'reads.jsonl holds 1 read(s), though compare.json records 2: it was truncated',
      ],
      [
        'edited',
        () => fs.writeFileSync(ledger, one + '\n' + two.replace('"by":"corl report"', '"by":"someone else"') + '\n'),
        'read 2 does not chain to the read before it: reads.jsonl was edited',
      ],
      [
        'a run replaced',
        () => {
          const meta = path.join(dir, 'a', 'seed-2', 'run.json');
          fs.writeFileSync(meta, JSON.stringify({ ...JSON.parse(fs.readFileSync(meta, 'utf8')), id: 'another run' }));
        },
        'the runs read 2 showed have been replaced or removed since',
      ],
    ];
    const compareJson = fs.readFileSync(path.join(dir, 'compare.json'), 'utf8');
    const meta2 = fs.readFileSync(path.join(dir, 'a', 'seed-2', 'run.json'), 'utf8');
    for (const [name, act, says] of damage) {
      fs.writeFileSync(ledger, text);
      fs.writeFileSync(path.join(dir, 'compare.json'), compareJson);
      fs.writeFileSync(path.join(dir, 'a', 'seed-2', 'run.json'), meta2);
      act();
      expect(folderLedger(dir).problems, name).to.deep.equal([says]);
      const r = await reportCompare(dir);
      expect(r.provenance.ledger, name).to.include(says);
      expect(fs.readFileSync(path.join(dir, 'results.md'), 'utf8')).to.contain(
        'the ledger is damaged, so the true count is not known',
      );
      // found once, the damage stays on record in compare.json, even after the ledger is put back
      fs.writeFileSync(ledger, text);
      const kept = JSON.parse(fs.readFileSync(path.join(dir, 'compare.json'), 'utf8')) as {
        reads: { damaged?: string[] };
      };
      if (name !== 'a run replaced') expect(kept.reads.damaged, name).to.include(says);
    }
  });

  it("another folder's records replayed, their chain recomputed and compare.json rewritten to match, are reported", async () => {
    const f = fixture();
    // the runs' identities, as real runs have them: each run.json's id, unique to its start
    const withIds = (dir: string, tag: string): void => {
      for (const c of f.configs)
        for (const i of f.seeds) {
          const meta = path.join(dir, c.name, `seed-${i}`, 'run.json');
          fs.writeFileSync(
            meta,
            JSON.stringify({ ...JSON.parse(fs.readFileSync(meta, 'utf8')), id: `${tag}-${c.name}-${i}` }),
          );
        }
    };
    const dir = writeComparison(path.join(tmp.dir, 'cmp'), f);
    const other = writeComparison(path.join(tmp.dir, 'other'), f);
    withIds(dir, 'here');
    withIds(other, 'there');
    await reportCompare(other);
    const ledger = path.join(dir, READS_FILE);
    const compareFile = path.join(dir, 'compare.json');
    const compareJson = fs.readFileSync(compareFile, 'utf8');
    /** Write `records` as dir's ledger, chained afresh, and compare.json's anchor to match, as a forger would. */
    const forge = (records: Omit<Read, 'hash' | 'prev'>[]): void => {
      let prev = LEDGER_GENESIS;
      const lines = records.map((r) => {
        const body = { ...r, prev };
        const hash = readHash(prev, body);
        prev = hash;
        return JSON.stringify({ ...body, hash });
      });
      fs.writeFileSync(ledger, lines.map((l) => l + '\n').join(''));
      const meta = JSON.parse(compareJson) as Record<string, unknown>;
      fs.writeFileSync(compareFile, JSON.stringify({ ...meta, reads: { count: records.length, head: prev } }));
    };
    const replayed = readLedger(other).map(({ hash: _h, prev: _p, ...r }) => r);
    expect(replayed).to.have.length(1);
    // kept as they were, the records name the other folder's runs: the runs they showed are not these
    forge(replayed);
    expect(folderLedger(dir).problems).to.deep.equal(['the runs read 1 showed have been replaced or removed since']);
    // with the runs' digest removed, the chain and the anchor hold, and the missing digest shows
    forge(replayed.map(({ runsDigest: _d, ...r }) => r));
    const says = 'read 1 carries no runs digest: it was added or edited by hand';
    expect(folderLedger(dir).problems).to.deep.equal([says]);
    const r = await reportCompare(dir);
    expect(r.provenance.ledger).to.include(says);
    expect(fs.readFileSync(path.join(dir, 'results.md'), 'utf8')).to.contain(
      'the ledger is damaged, so the true count is not known',
    );
  });
});
