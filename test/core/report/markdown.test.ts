import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import {
  categoryTable,
  labelCategoryLines,
  markdownTables,
  pairLines,
  pooledAgreement,
} from '../../../core/report/markdown';
import { reportCompare } from '../../../core/report/compare';
import { packCompare } from '../../../core/report/pack';
import { readRun } from '../../../core/report/runs';
import type { ReportGroup } from '../../../core/report/html';
import { tempDir } from '../../fixtures/configs';

type Flags = [boolean[], boolean[]];

/** A finished two-agent run (agents a, b) with hand-made metrics and eval rows of problems p1 (plain) and p2 (carry). */
function writeRun(dir: string, seed: number, step0: { a: Flags; b: Flags }, step2: { a: Flags; b: Flags }): void {
  fs.mkdirSync(path.join(dir, 'eval'), { recursive: true });
  const config = {
    name: 'ring',
    seed,
    agents: [
      { name: 'a', policy: { use: 'corl:test' } },
      { name: 'b', policy: { use: 'corl:test' } },
    ],
  };
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(dir, 'config.source.json'), JSON.stringify(config));
  fs.writeFileSync(
    path.join(dir, 'run.json'),
    JSON.stringify({ corl: '0', configFile: path.join(dir, '..', 'x.json'), baseDir: dir, supervised: false }),
  );
  fs.writeFileSync(
    path.join(dir, 'state.json'),
    JSON.stringify({ version: 1, nextStep: 2, metricsBytes: 0, rolloutsBytes: 0, checkpoint: null, finished: true }),
  );
  const rate = (f: Flags): number => [...f[0], ...f[1]].filter(Boolean).length / 4;
  const records = [
    { step: 0, agent: 0, phase: 'eval', metrics: { 'eval/accuracy': rate(step0.a), 'eval/maj@2': 0.5 } },
    { step: 0, agent: 1, phase: 'eval', metrics: { 'eval/accuracy': rate(step0.b), 'eval/maj@2': 0.5 } },
    {
      step: 1,
      agent: 0,
      phase: 'train',
      metrics: { 'label/accuracy': 0.5, 'label/accuracy/carry': 0.5, 'label/count/carry': 2 },
    },
    { step: 1, agent: 1, phase: 'train', metrics: { 'label/accuracy': 1 } },
    {
      step: 2,
      agent: 0,
      phase: 'train',
      metrics: { 'label/accuracy': 1, 'label/accuracy/carry': 1, 'label/count/carry': 1 },
    },
    { step: 2, agent: 1, phase: 'train', metrics: { 'label/accuracy': 1 } },
    { step: 2, agent: 0, phase: 'eval', metrics: { 'eval/accuracy': rate(step2.a), 'eval/maj@2': 1 } },
    { step: 2, agent: 1, phase: 'eval', metrics: { 'eval/accuracy': rate(step2.b), 'eval/maj@2': 1 } },
  ];
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const rows = (f: { a: Flags; b: Flags }): string =>
    (['a', 'b'] as const)
      .flatMap((ag, agent) => [
        { agent, id: 'p1', correct: f[ag][0], category: 'plain' },
        { agent, id: 'p2', correct: f[ag][1], category: 'carry' },
      ])
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'eval', 'step-000000.jsonl'), rows(step0));
  fs.writeFileSync(path.join(dir, 'eval', 'step-000001.jsonl'), rows(step0)); // intermediate: not packed
  fs.writeFileSync(path.join(dir, 'eval', 'step-000002.jsonl'), rows(step2));
}

const T = true;
const F = false;

describe('report/markdown: the tables docs/results.md quotes', () => {
  let tmp: ReturnType<typeof tempDir>;
  let out: string;
  let groups: ReportGroup[];
  beforeEach(() => {
    tmp = tempDir('corl-md-');
    out = path.join(tmp.dir, 'cmp');
    const start = {
      a: [
        [T, T],
        [F, F],
      ] as Flags,
      b: [
        [T, F],
        [F, F],
      ] as Flags,
    };
    writeRun(path.join(out, 'ring', 'seed-0'), 0, start, {
      a: [
        [T, T],
        [T, F],
      ],
      b: [
        [T, T],
        [F, T],
      ],
    });
    writeRun(path.join(out, 'ring', 'seed-1'), 1000, start, {
      a: [
        [T, T],
        [T, T],
      ],
      b: [
        [T, T],
        [F, T],
      ],
    });
    const cfg = path.join(out, 'ring', 'seed-0', 'config.json');
    fs.writeFileSync(
      cfg,
      JSON.stringify({ ...JSON.parse(fs.readFileSync(cfg, 'utf8')), data: path.join(tmp.dir, 'data', 'x.jsonl') }),
    );
    fs.writeFileSync(
      path.join(out, 'compare.json'),
      JSON.stringify({ configs: [path.join(tmp.dir, 'ring.json')], seeds: 2, steps: null }),
    );
    groups = [
      { name: 'ring', runs: [readRun(path.join(out, 'ring', 'seed-0')), readRun(path.join(out, 'ring', 'seed-1'))] },
    ];
  });
  afterEach(() => tmp.cleanup());

  it('pooled κ and c of aligned sample pairs match the hand-computed 2×2 tables', () => {
    // a: T,T,F,F  b: T,F,F,F → both right 1, only a 1, both wrong 2: p_o 3/4, p_e 1/2, κ 1/2, c 1/4.
    const r = pooledAgreement(
      new Map([
        ['p1', [T, T]],
        ['p2', [F, F]],
      ]),
      new Map([
        ['p1', [T, F]],
        ['p2', [F, F]],
        ['p3', [T, T]],
      ]),
    );
    expect(r.kappa).to.be.closeTo(0.5, 1e-12);
    expect(r.complementarity).to.equal(0.25);
    const lines = pairLines(groups);
    expect(lines).to.have.length(1);
    expect(lines[0]!.pair).to.equal('a × b');
    expect(lines[0]!.kappa.start.mean).to.be.closeTo(0.5, 1e-12);
    // End: seed 0 a TTTF b TTFT: p_o 1/2, p_e 5/8 → κ −1/3, c 1/2; seed 1 a TTTT b TTFT: κ 0, c 1/4.
    expect(lines[0]!.kappa.end.mean).to.be.closeTo(-1 / 6, 1e-12);
    expect(lines[0]!.kappa.end.sd).to.be.closeTo(Math.sqrt(2 * (1 / 6) ** 2), 1e-12);
    expect(lines[0]!.complementarity.end.mean).to.be.closeTo(0.375, 1e-12);
  });

  it('splits pass@1 by category at step 0 and at the last evaluation', () => {
    const t = categoryTable(groups)!;
    expect(t.categories).to.deep.equal(['plain', 'carry']);
    expect(t.problems).to.deep.equal({ plain: 1, carry: 1 });
    const a = t.lines.find((l) => l.agent === 'a')!;
    expect(a.cells.plain!.start.mean).to.equal(1);
    expect(a.cells.carry!.start.mean).to.equal(0);
    expect(a.cells.carry!.end.mean).to.equal(0.75); // 1/2 and 2/2
    expect(a.cells.carry!.change.mean).to.equal(0.75);
    const b = t.lines.find((l) => l.agent === 'b')!;
    expect(b.cells.plain!.change.mean).to.equal(0.5);
    expect(b.cells.carry!.end.mean).to.equal(0.5);
  });

  it('weights label accuracy by category by its counts over the first and last steps', () => {
    const [line] = labelCategoryLines(groups, 1);
    expect(line!.agent).to.equal('a');
    expect(line!.cells.carry!.first.mean).to.equal(0.5);
    expect(line!.cells.carry!.last.mean).to.equal(1);
    const [wide] = labelCategoryLines(groups, 10);
    expect(wide!.cells.carry!.first.mean).to.be.closeTo((0.5 * 2 + 1 * 1) / 3, 1e-12);
    expect(labelCategoryLines(groups, 1).some((l) => l.agent === 'b')).to.equal(false); // no categorised labels
  });

  it('renders the Markdown tables with the numbers above', () => {
    const md = markdownTables(groups, []);
    expect(md).to.contain('| config | agent | plain (1) | carry (1) |');
    expect(md).to.contain('| ring | a | 100.0 → 100.0 (+0.0) | 0.0 → 75.0 (+75.0) |');
    expect(md).to.contain('| ring | a | 66.7 → 66.7 |'); // a window of 10 steps covers both steps of this run
    expect(md).to.contain('| ring | a × b | 0.500 ± 0.000 | -0.167 ± 0.236 | 25.0 | 37.5 |');
  });

  it('a packed copy renders the same tables, holds no checkpoints, no intermediate eval rows and no absolute paths', async () => {
    fs.mkdirSync(path.join(out, 'ring', 'seed-0', 'checkpoints', 'step-000002'), { recursive: true });
    fs.writeFileSync(path.join(out, 'ring', 'seed-0', 'checkpoints', 'step-000002', 'model.onnx'), 'x'.repeat(1000));
    const original = await reportCompare(out);
    const mdOriginal = fs.readFileSync(path.join(out, 'results.md'), 'utf8');
    const to = path.join(tmp.dir, 'packed');
    const r = await packCompare({ from: out, to, root: tmp.dir });
    expect(r.runs).to.equal(2);
    const seed0 = path.join(to, 'ring', 'seed-0');
    expect(fs.readdirSync(seed0).sort()).to.deep.equal([
      'config.json',
      'config.source.json',
      'eval',
      'metrics.jsonl.gz',
      'run.json',
      'state.json',
    ]);
    expect(fs.readdirSync(path.join(seed0, 'eval')).sort()).to.deep.equal([
      'step-000000.jsonl.gz',
      'step-000002.jsonl.gz',
    ]);
    expect(zlib.gunzipSync(fs.readFileSync(path.join(seed0, 'metrics.jsonl.gz'))).toString()).to.equal(
      fs.readFileSync(path.join(out, 'ring', 'seed-0', 'metrics.jsonl'), 'utf8'),
    );
    const meta = JSON.parse(fs.readFileSync(path.join(seed0, 'run.json'), 'utf8'));
    expect(meta.configFile).to.equal(path.join('cmp', 'ring', 'x.json'));
    expect(JSON.parse(fs.readFileSync(path.join(to, 'compare.json'), 'utf8')).configs).to.deep.equal(['ring.json']);
    expect(JSON.parse(fs.readFileSync(path.join(seed0, 'config.json'), 'utf8')).data).to.equal(
      path.join('data', 'x.jsonl'),
    );
    for (const f of ['compare.json', 'ring/seed-0/run.json', 'ring/seed-0/config.json', 'ring/seed-1/config.json'])
      expect(fs.readFileSync(path.join(to, f), 'utf8')).to.not.contain(tmp.dir);
    const packed = await reportCompare(to);
    expect(packed.table).to.equal(original.table);
    expect(fs.readFileSync(path.join(to, 'results.md'), 'utf8')).to.equal(mdOriginal);
  });

  it('a compact pack renders the same tables and verdicts: brotli, reduced rows, shared step-0 rows linked, diagnostics rounded', async () => {
    const m = path.join(out, 'ring', 'seed-0', 'metrics.jsonl');
    fs.appendFileSync(
      m,
      JSON.stringify({ step: 2, agent: 0, phase: 'train', metrics: { 'loss/total': 0.123456789 } }) + '\n',
    );
    await reportCompare(out);
    const to = path.join(tmp.dir, 'compact');
    await packCompare({ from: out, to, root: tmp.dir, compact: true });
    const seed0 = path.join(to, 'ring', 'seed-0');
    expect(fs.readdirSync(seed0).sort()).to.deep.equal([
      'config.json',
      'config.source.json',
      'eval',
      'metrics.jsonl.br',
      'run.json',
      'state.json',
    ]);
    // seed 1 starts from the same rows as seed 0: stored once, linked
    expect(fs.readdirSync(path.join(to, 'ring', 'seed-1', 'eval')).sort()).to.deep.equal([
      'step-000000.jsonl.link',
      'step-000002.jsonl.br',
    ]);
    expect(fs.readFileSync(path.join(to, 'ring', 'seed-1', 'eval', 'step-000000.jsonl.link'), 'utf8')).to.equal(
      '../../seed-0/eval/step-000000.jsonl.br\n',
    );
    const rows = zlib
      .brotliDecompressSync(fs.readFileSync(path.join(seed0, 'eval', 'step-000002.jsonl.br')))
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(Object.keys(rows[0]!)).to.deep.equal(['agent', 'id', 'correct', 'category']);
    const metrics = zlib.brotliDecompressSync(fs.readFileSync(path.join(seed0, 'metrics.jsonl.br'))).toString();
    expect(metrics).to.contain('"loss/total":0.1235').and.contain('"label/accuracy/carry":0.5');
    expect(fs.readFileSync(path.join(seed0, 'config.json'), 'utf8').split('\n')).to.have.length(2); // one line of JSON
    await reportCompare(to);
    for (const f of ['results.md', 'verdicts.json', 'reads.jsonl'])
      expect(fs.readFileSync(path.join(to, f), 'utf8'), f).to.equal(fs.readFileSync(path.join(out, f), 'utf8'));
  });

  it('pack backfills categories of rows written before rows carried them, and refuses a folder that is not a comparison', async () => {
    const file = path.join(out, 'ring', 'seed-0', 'eval', 'step-000002.jsonl');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/,"category":"[a-z]+"/g, ''));
    const to = path.join(tmp.dir, 'packed');
    await packCompare({
      from: out,
      to,
      root: tmp.dir,
      categories: async () =>
        new Map([
          ['p1', 'plain'],
          ['p2', 'carry'],
        ]),
    });
    const rows = zlib
      .gunzipSync(fs.readFileSync(path.join(to, 'ring', 'seed-0', 'eval', 'step-000002.jsonl.gz')))
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((x) => x.category)).to.deep.equal(['plain', 'carry', 'plain', 'carry']);
    let err: unknown;
    try {
      await packCompare({ from: tmp.dir, to: path.join(tmp.dir, 'p2') });
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string }).code).to.equal('CORL_ERR_RUN_NOT_FOUND');
  });
});
