import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunDirectory } from '../../../core/trainer/run-dir';
import { brotliText, readTextMaybeGz } from '../../../core/util/gz';
import {
  ensureSeal,
  folderSeal,
  openText,
  SEAL_FILE,
  sealBytes,
  sealedFileContext,
  sealText,
} from '../../../core/util/seal';
import { tempDir } from '../../fixtures/configs';
import { thrown } from '../../fixtures/errors';

/** The code of the CorlError `fn` throws. */
const codeOf = (fn: () => unknown): string => thrown(fn).code;

describe('core/util/seal: planned runs write their evaluations sealed', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-seal-');
  });
  afterEach(() => tmp.cleanup());

  it('a sealed text opens with its key and context only', async () => {
    const seal = await ensureSeal(path.join(tmp.dir, 'cmp'));
    expect((await ensureSeal(path.join(tmp.dir, 'cmp'))).id, 'made once').to.equal(seal.id);
    expect(seal.origin).to.equal(path.join(tmp.dir, 'cmp'));
    const s = sealText(seal, '{"eval/accuracy":0.4444444444444444}', 'a/seed-1/metrics.jsonl step 3 agent 0');
    expect(s)
      .to.match(/^corl-sealed-1:[A-Za-z0-9+/=]+$/)
      .and.not.contain('0.444');
    expect(openText(seal, s, 'a/seed-1/metrics.jsonl step 3 agent 0', 'x')).to.equal(
      '{"eval/accuracy":0.4444444444444444}',
    );
    // the same record claimed for another step or run, edited, or opened with another comparison's key
    expect(codeOf(() => openText(seal, s, 'a/seed-1/metrics.jsonl step 4 agent 0', 'x'))).to.equal(
      'CORL_ERR_RUN_CORRUPT',
    );
    const edited = s.slice(0, -6) + (s.endsWith('AAAA==') ? 'BBBB==' : 'AAAA==');
    expect(codeOf(() => openText(seal, edited, 'a/seed-1/metrics.jsonl step 3 agent 0', 'x'))).to.equal(
      'CORL_ERR_RUN_CORRUPT',
    );
    const other = await ensureSeal(path.join(tmp.dir, 'other'));
    expect(codeOf(() => openText(other, s, 'a/seed-1/metrics.jsonl step 3 agent 0', 'x'))).to.equal(
      'CORL_ERR_RUN_CORRUPT',
    );
    expect(codeOf(() => openText(seal, 'corl-sealed-1:', 'c', 'x'))).to.equal('CORL_ERR_RUN_CORRUPT');
  });

  it('a damaged seal.key is CORL_ERR_RUN_SEALED naming the file', async () => {
    const dir = path.join(tmp.dir, 'cmp');
    await ensureSeal(dir);
    for (const text of ['', '{', 'null', '{"seal":1,"id":"x","key":"00","origin":"/x"}', '{"seal":2}'])
      expect(
        codeOf(() => {
          fs.writeFileSync(path.join(dir, SEAL_FILE), text);
          folderSeal(dir);
        }),
        text,
      ).to.equal('CORL_ERR_RUN_SEALED');
    fs.rmSync(path.join(dir, SEAL_FILE));
    fs.mkdirSync(path.join(dir, SEAL_FILE));
    expect(codeOf(() => folderSeal(dir))).to.equal('CORL_ERR_RUN_SEALED');
  });

  it('a sealed run keeps eval records and rows out of the clear; hidden, opened, or refused without its key', async () => {
    const cmp = path.join(tmp.dir, 'cmp');
    await ensureSeal(cmp);
    const dir = path.join(cmp, 'a', 'seed-1');
    const run = await RunDirectory.create(dir, {}, {}, { baseDir: tmp.dir, supervised: false, sealed: true });
    expect(run.sealed).to.equal(true);
    const train = { step: 1, agent: 0, phase: 'train' as const, metrics: { 'reward/mean': 0.75 } };
    const evalRecord = { step: 1, agent: 0, phase: 'eval' as const, metrics: { 'eval/accuracy': 0.4444444444444444 } };
    run.appendMetrics(train);
    run.appendMetrics(evalRecord);
    await run.writeEval('step-000001.jsonl', [{ agent: 0, id: 'p1', correct: [true, false] }]);
    run.release();
    const text = fs.readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8');
    expect(text).to.contain('"reward/mean":0.75').and.not.contain('0.4444').and.not.contain('eval/accuracy');
    expect(JSON.parse(text.split('\n')[1]!)).to.include({ step: 1, agent: 0, phase: 'eval' });
    expect(fs.readdirSync(path.join(dir, 'eval'))).to.deep.equal(['step-000001.jsonl.sealed']);
    expect(fs.readFileSync(path.join(dir, 'eval', 'step-000001.jsonl.sealed'), 'utf8')).to.not.contain('correct');

    const opened = RunDirectory.open(dir);
    expect(opened.readMetrics()).to.deep.equal([train, evalRecord]);
    expect(opened.readMetrics({ sealed: 'hide' })).to.deep.equal([train]);
    // any reader but a comparison's rendering (corl agreement given the file, say) is refused
    expect(codeOf(() => readTextMaybeGz(path.join(dir, 'eval', 'step-000001.jsonl.sealed')))).to.equal(
      'CORL_ERR_RUN_SEALED',
    );
    expect(readTextMaybeGz(path.join(dir, 'eval', 'step-000001.jsonl.sealed'), { openSealed: true })).to.equal(
      '{"agent":0,"id":"p1","correct":[true,false]}\n',
    );

    // a sealed line moved to another step does not open
    const lines = text.trim().split('\n');
    fs.writeFileSync(
      path.join(dir, 'metrics.jsonl'),
      lines[0] + '\n' + lines[1]!.replace('"step":1', '"step":2') + '\n',
    );
    expect(codeOf(() => RunDirectory.open(dir).readMetrics())).to.equal('CORL_ERR_RUN_CORRUPT');
    fs.writeFileSync(path.join(dir, 'metrics.jsonl'), text);

    // the run copied out of its comparison: no key, so its evaluations open nowhere, but can be left out
    const alone = path.join(tmp.dir, 'alone');
    fs.cpSync(dir, alone, { recursive: true });
    expect(codeOf(() => RunDirectory.open(alone).readMetrics())).to.equal('CORL_ERR_RUN_SEALED');
    expect(RunDirectory.open(alone).readMetrics({ sealed: 'hide' })).to.deep.equal([train]);
    expect(
      codeOf(() => readTextMaybeGz(path.join(alone, 'eval', 'step-000001.jsonl.sealed'), { openSealed: true })),
    ).to.equal('CORL_ERR_RUN_SEALED');
  });

  it("a compact pack's compressed sealed rows open decompressed; sealed bytes that are not brotli are CORL_ERR_RUN_CORRUPT", async () => {
    const seal = await ensureSeal(path.join(tmp.dir, 'cmp'));
    const evalDir = path.join(tmp.dir, 'cmp', 'cfg', 'seed-0', 'eval');
    fs.mkdirSync(evalDir, { recursive: true });
    const rows = '{"agent":0,"id":"p1","correct":[true,false]}\n';
    const good = path.join(evalDir, 'step-000000.jsonl.br.sealed');
    fs.writeFileSync(good, sealBytes(seal, brotliText(rows), sealedFileContext(good)));
    expect(fs.readFileSync(good, 'utf8')).to.not.contain('p1');
    expect(readTextMaybeGz(good, { openSealed: true })).to.equal(rows);
    expect(codeOf(() => readTextMaybeGz(good))).to.equal('CORL_ERR_RUN_SEALED');
    const bad = path.join(evalDir, 'step-000001.jsonl.br.sealed');
    fs.writeFileSync(bad, sealBytes(seal, Buffer.from(rows), sealedFileContext(bad)));
    expect(codeOf(() => readTextMaybeGz(bad, { openSealed: true }))).to.equal('CORL_ERR_RUN_CORRUPT');
  });
});
