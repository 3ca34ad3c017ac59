import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { evalStepFiles } from '../../core/report/markdown';
import { readEvalRows } from '../../core/report/eval-rows';
import { RunDirectory } from '../../core/trainer/run-dir';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';
import { writeFixturePlan } from '../fixtures/plans';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');
const corl = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
const RUNS = ['fixture-base/seed-1', 'fixture-base/seed-2', 'fixture-co-rl/seed-1', 'fixture-co-rl/seed-2'];

/** Every file under `dir`, with its bytes. */
function files(dir: string): { file: string; bytes: Buffer }[] {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const f = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...files(f));
    else if (e.isFile()) out.push({ file: f, bytes: fs.readFileSync(f) });
  }
  return out;
}

/** The lines of a ledger. */
const reads = (dir: string): any[] =>
  fs.existsSync(path.join(dir, 'reads.jsonl'))
    ? fs
        .readFileSync(path.join(dir, 'reads.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
    : [];

describe('e2e: a planned comparison seals its held-out results until the look', function () {
  this.timeout(600000); // a guard against a hang, not a speed check
  let tmp: ReturnType<typeof tempDir>;
  let plan: string;
  before(() => {
    tmp = tempDir('corl-sealed-e2e-');
    // every sink a user might watch: TensorBoard event files and an extra JSONL file outside the runs
    const sinks = (name: string) => [
      { use: 'corl:tensorboard' },
      { use: 'corl:jsonl', options: { path: `sink-${name}.jsonl` } },
    ];
    writeConfig(
      tmp.dir,
      'co-rl.json',
      coRlConfig({ trainer: { ...(coRlConfig().trainer as object), steps: 2 }, metrics: sinks('co-rl') }),
    );
    writeConfig(
      tmp.dir,
      'base.json',
      coRlConfig({ name: 'fixture-base', trainer: { steps: 0 }, metrics: sinks('base') }),
    );
    plan = writeFixturePlan(path.join(tmp.dir, 'plan.json'), { name: 'sealed' });
  });
  after(() => tmp.cleanup());

  it('while it runs no file, sink, progress line or run page holds a held-out figure; the look opens and counts them', () => {
    const out = path.join(tmp.dir, 'cmp');
    // the look's runs, run by two shards that render nothing: the comparison is in progress
    const progress = ['1/2', '2/2'].map((s) =>
      corl(['compare', '--plan', plan, '--out', out, '--progress', 'lines', '--shard', s]),
    );
    for (const r of progress) expect(r.status, r.stderr).to.equal(0);
    expect(fs.statSync(path.join(out, 'seal.key')).mode & 0o777).to.equal(0o600);

    // What the runs evaluated, opened with the comparison's key as the look will open it.
    const evalValues = new Set<string>();
    const trainValues = new Set<string>();
    let rows = 0;
    for (const run of RUNS) {
      const dir = path.join(out, run);
      for (const r of RunDirectory.open(dir).readMetrics())
        for (const v of Object.values(r.metrics)) (r.phase === 'eval' ? evalValues : trainValues).add(String(v));
      for (const f of evalStepFiles(dir).values()) {
        expect(f.endsWith('.sealed'), f).to.equal(true);
        rows += readEvalRows(f).length;
      }
    }
    // 2 configs × 2 seeds × 2 agents × 3 held-out problems at step 0, and the trained config's step 2 again
    expect(rows).to.equal(36);
    // the figures to look for: every evaluated value no training figure shares, written as JSON writes it
    const needles = [...evalValues].filter((v) => !trainValues.has(v) && v.length >= 4);
    expect(needles.length).to.be.greaterThan(0);
    const names = ['eval/accuracy', 'eval/answered_fraction', 'kappa', '"correct"'];

    const leaks = (where: string, extra: string[] = []): string[] => {
      const found: string[] = [];
      for (const { file, bytes } of files(where)) {
        const text = bytes.toString('latin1');
        for (const n of [...names, ...needles, ...extra]) if (text.includes(n)) found.push(`${n} in ${file}`);
      }
      return found;
    };
    // grep the whole working folder (runs, TensorBoard event files, the JSONL sinks beside the configs)
    expect(leaks(tmp.dir)).to.deep.equal([]);
    for (const r of progress) for (const n of [...names, ...needles]) expect(r.stderr + r.stdout).to.not.contain(n);
    // TensorBoard got the training scalars, not one evaluation
    const events = files(path.join(out, 'fixture-co-rl', 'seed-1', 'tensorboard'));
    expect(events.some((e) => e.bytes.toString('latin1').includes('reward/mean'))).to.equal(true);

    // a run's own page shows its training and no evaluation, and reads nothing
    const one = corl(['report', path.join(out, 'fixture-co-rl', 'seed-1')]);
    expect(one.status, one.stderr).to.equal(0);
    const page = fs.readFileSync(path.join(out, 'fixture-co-rl', 'seed-1', 'report.html'), 'utf8');
    expect(page).to.contain('its evaluations are sealed');
    for (const n of needles) expect(page).to.not.contain(n);
    expect(reads(out)).to.have.length(0);
    // a run copied out of its comparison has no key: its page shows no evaluation either
    const alone = path.join(tmp.dir, 'alone');
    fs.cpSync(path.join(out, 'fixture-co-rl', 'seed-2'), alone, { recursive: true });
    const r2 = corl(['report', alone]);
    expect(r2.status, r2.stderr).to.equal(0);
    expect(leaks(alone)).to.deep.equal([]);

    // a copy taken before the look, rendered: it counts its read in its own ledger and in the original's
    const copy = path.join(tmp.dir, 'copy');
    fs.cpSync(out, copy, { recursive: true });
    const c = corl(['report', copy]);
    expect(c.status, c.stderr).to.equal(0);
    expect(reads(copy)).to.have.length(1);
    expect(reads(out).map((x) => x.by)).to.deep.equal([`corl report, of a copy at ${copy}`]);
    // deleting the copy's ledger cannot make the read vanish: the original keeps it
    fs.rmSync(path.join(copy, 'reads.jsonl'));
    expect(reads(out)).to.have.length(1);

    // training a planned run further by hand (in the copy) prints and returns no held-out figure
    const more = corl(['train', '--resume', path.join(copy, 'fixture-co-rl', 'seed-1'), '--steps', '3']);
    expect(more.status, more.stderr).to.equal(0);
    expect(more.stderr).to.contain('eval @ step 3: done').and.contain("results hidden until the plan's look");
    for (const n of [...names, ...needles]) expect(more.stderr + more.stdout).to.not.contain(n);
    expect(leaks(path.join(copy, 'fixture-co-rl', 'seed-1'))).to.deep.equal([]);

    // a pack of the folder keeps the seal: its runs' files hold no figure either
    const packed = path.join(tmp.dir, 'packed');
    const p = corl(['report', out, '--pack', packed]);
    expect(p.status, p.stderr).to.equal(0);
    for (const run of RUNS) expect(leaks(path.join(packed, run)), run).to.deep.equal([]);
    expect(fs.existsSync(path.join(packed, 'fixture-co-rl', 'seed-1', 'eval', 'step-000002.jsonl.sealed'))).to.equal(
      true,
    );
    // a compact pack compresses the rows and seals them again with the same key (ciphertext does not
    // compress): no figure either, step-0 rows the runs share stored once, and opened they are the rows
    const compact = path.join(tmp.dir, 'packed-compact');
    const pc = corl(['report', out, '--pack', compact, '--compact']);
    expect(pc.status, pc.stderr).to.equal(0);
    for (const run of RUNS) expect(leaks(path.join(compact, run)), run).to.deep.equal([]);
    const stored = RUNS.flatMap((run) => fs.readdirSync(path.join(compact, run, 'eval')).map((f) => `${run}/${f}`));
    // each seed's step-0 rows once (the base stores them, the trained config links them), every file sealed or a link
    expect(stored.filter((f) => f.endsWith('.br.sealed'))).to.include.members([
      'fixture-base/seed-1/step-000000.jsonl.br.sealed',
      'fixture-base/seed-2/step-000000.jsonl.br.sealed',
    ]);
    expect(stored.filter((f) => f.includes('step-000000'))).to.have.length(4);
    expect(stored.filter((f) => !f.endsWith('.br.sealed') && !f.endsWith('.link'))).to.deep.equal([]);
    expect(stored.filter((f) => f.startsWith('fixture-co-rl') && f.includes('step-000000'))).to.deep.equal([
      'fixture-co-rl/seed-1/step-000000.jsonl.link',
      'fixture-co-rl/seed-2/step-000000.jsonl.link',
    ]);
    for (const run of RUNS) {
      const original = evalStepFiles(path.join(out, run));
      const packedRows = evalStepFiles(path.join(compact, run));
      expect([...packedRows.keys()], run).to.deep.equal([...original.keys()]);
      for (const [step, f] of original)
        expect(readEvalRows(packedRows.get(step)!), `${run} ${step}`).to.deep.equal(readEvalRows(f));
    }
    // rows in the clear planted in a sealed run are refused, never read: beside its sealed rows, or behind a link
    const planted = path.join(compact, 'fixture-base', 'seed-2', 'eval', 'step-000000.jsonl');
    fs.writeFileSync(planted, '{"agent":0,"id":"p1","correct":[true,true]}\n');
    expect(() => evalStepFiles(path.join(compact, 'fixture-base', 'seed-2'))).to.throw(
      /sealed run to be sealed, got step-000000\.jsonl in the clear/,
    );
    const link = path.join(compact, 'fixture-base', 'seed-1', 'eval', 'step-000009.jsonl.link');
    fs.writeFileSync(link, '../../seed-2/eval/step-000000.jsonl\n');
    expect(() => evalStepFiles(path.join(compact, 'fixture-base', 'seed-1'))).to.throw(/in the clear/);
    fs.rmSync(planted);
    fs.rmSync(link);
    // a compressed sealed file moved to another run does not open
    const moved = path.join(compact, 'fixture-base', 'seed-2', 'eval', 'step-000000.jsonl.br.sealed');
    fs.copyFileSync(path.join(compact, 'fixture-base', 'seed-1', 'eval', 'step-000000.jsonl.br.sealed'), moved);
    expect(() => readEvalRows(moved)).to.throw(/opens with the comparison's key/);

    // the look itself renders the runs already read: nothing new is counted, and the figures are there
    const look = corl(['compare', '--plan', plan, '--out', out, '--progress', 'none']);
    expect(look.status, look.stderr).to.equal(0);
    expect(reads(out)).to.have.length(1);
    const results = fs.readFileSync(path.join(out, 'results.json'), 'utf8');
    expect(JSON.parse(results)).to.have.length(2);
  });
});
