import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import { Exchange } from '../../../core/serve/exchange';
import { Journal, type JournalHeader, type JournalRecord } from '../../../core/serve/journal';
import { tempDir } from '../../fixtures/configs';

const header: JournalHeader = { t: 'open', v: 1, agents: ['a', 'b'], topology: 'corl:ring', reward: 'corl:vote' };
const keys = (s: number, g: string, a = 'a'): JournalRecord => ({ t: 'keys', n: 'groups', a, s, g, h: `h${s}${g}`, k: ['1', null] });

describe('serve/journal', () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => { tmp = tempDir('corl-journal-'); file = path.join(tmp.dir, 'j.jsonl'); });
  afterEach(() => tmp.cleanup());

  it('appends records (many at once in one group commit) and replays them in order', async () => {
    const { journal, replay } = await Journal.open(file, header, (r) => r);
    expect(replay.records).to.deep.equal([]);
    const syncs: number[] = [];
    journal.onSync = (_s, n) => syncs.push(n);
    await Promise.all([journal.append([keys(0, 'x')]), journal.append([keys(0, 'y'), keys(1, 'x')]), journal.append([keys(1, 'y', 'b')])]);
    await journal.close();
    expect(syncs.reduce((a, b) => a + b, 0)).to.equal(4);
    expect(syncs.length).to.be.lessThan(4); // concurrent appends share fdatasyncs
    const again = Journal.read(file, header);
    expect(again.records.map((r) => `${r.a}${r.s}${r.g}`)).to.deep.equal(['a0x', 'a0y', 'a1x', 'b1y']);
    expect(again.tornTail).to.equal(false);
    expect(fs.readFileSync(file, 'utf8').split('\n')[0]).to.equal(JSON.stringify(header));
  });

  it('drops a torn last line (a crash mid-write) and rewrites the file without it', async () => {
    fs.writeFileSync(file, `${JSON.stringify(header)}\n${JSON.stringify(keys(0, 'x'))}\n{"t":"keys","n":"gro`);
    const { journal, replay } = await Journal.open(file, header, (r) => r);
    expect(replay.tornTail).to.equal(true);
    expect(replay.records).to.have.length(1);
    await journal.append([keys(0, 'y')]);
    await journal.close();
    expect(Journal.read(file, header).records.map((r) => r.g)).to.deep.equal(['x', 'y']);
  });

  it('names the line of a corrupt record in the middle, and refuses another cohort\'s journal', () => {
    fs.writeFileSync(file, `${JSON.stringify(header)}\nnot json\n${JSON.stringify(keys(0, 'x'))}\n`);
    try {
      Journal.read(file, header);
      expect.fail('read');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_SERVE_JOURNAL')).to.equal(true);
      expect((e as Error).message).to.contain('line 2');
    }
    fs.writeFileSync(file, `${JSON.stringify(header)}\n{"t":"keys","n":"groups","a":"a","s":"1","g":"x","h":"h","k":[]}\n`);
    expect(() => Journal.read(file, header)).to.throw(/line 2/);
    fs.writeFileSync(file, `${JSON.stringify({ ...header, reward: 'corl:other' })}\n`);
    expect(() => Journal.read(file, header)).to.throw(/corl:other/);
  });

  it('compaction keeps the newest keepSteps steps of each namespace', async () => {
    const records = [keys(0, 'x'), keys(1, 'x'), keys(2, 'x'), keys(3, 'x'), { ...keys(0, 'p'), n: 'get_reward' }];
    fs.writeFileSync(file, [header, ...records].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const { journal, replay } = await Journal.open(file, header, (r) => Exchange.retain(r, (n) => (n === 'groups' ? { steps: 2 } : { steps: Infinity })));
    await journal.close();
    expect(replay.records.map((r) => `${r.n}:${r.s}`)).to.deep.equal(['groups:2', 'groups:3', 'get_reward:0']);
    expect(Journal.read(file, header).records).to.have.length(3);
  });

  it('compaction keeps the newest rounds of each id where a namespace counts rounds per id (get_reward)', async () => {
    const gr = (s: number, g: string) => ({ ...keys(s, g), n: 'get_reward' });
    // p has rounds 0–3, q only round 0 (a prompt seen once): keep 2 rounds per id.
    const records = [gr(0, 'p'), gr(0, 'q'), gr(1, 'p'), gr(2, 'p'), gr(3, 'p'), keys(0, 'x')];
    fs.writeFileSync(file, [header, ...records].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const { journal, replay } = await Journal.open(file, header, (r) => Exchange.retain(r, (n) => (n === 'groups' ? { steps: Infinity } : { steps: Infinity, rounds: 2 })));
    await journal.close();
    expect(replay.records.map((r) => `${r.n}:${r.g}:${r.s}`)).to.deep.equal(['get_reward:q:0', 'get_reward:p:2', 'get_reward:p:3', 'groups:x:0']);
  });
});
