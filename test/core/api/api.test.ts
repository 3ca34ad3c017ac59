// The experiment API as a script uses it (the package's main entry: loadConfig, train, resume,
// compare, evaluate, pretrain), against `corl train` itself: the same run from the API and from the command line writes
// the same metrics.jsonl byte for byte, a stopped run resumes to the uninterrupted one, a comparison's
// typed rows and pairs are those of its results.json; and every misuse is a coded error naming the
// argument or option, with nothing written.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compare, evaluate, loadConfig, pretrain, resume, train, type ConfigInput } from '../../../entry';
import { isCorlError } from '../../../core/errors';
import { coRlConfig, inlineTask, tempDir, writeConfig } from '../../fixtures/configs';

const BIN = path.resolve(__dirname, '../../../../bin/corl.js');

/** The coded error a call rejects with (fails when it resolves or throws something else). */
async function rejection(
  call: () => Promise<unknown>,
): Promise<{ code: string; where?: string; message: string; detail: string }> {
  try {
    await call();
  } catch (e) {
    expect(isCorlError(e), String(e)).to.equal(true);
    const err = e as { code: string; where?: string; message: string; detail: string };
    return { code: err.code, where: err.where, message: err.message, detail: err.detail };
  }
  return expect.fail('expected a rejection');
}

const tiny = (steps: number, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  coRlConfig({
    trainer: {
      steps,
      batchSize: 4,
      groupSize: 5,
      evalEvery: 2,
      checkpointEvery: 1,
      saveRollouts: true,
      sampling: { maxTokens: 4 },
    },
    ...extra,
  });

describe('core/api: loadConfig, train, resume and compare from code', function () {
  this.timeout(0); // a few tiny runs; the machine decides how long they take
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-api-');
  });
  after(() => tmp.cleanup());

  it('loadConfig takes a file, an object or a loaded config; overrides apply; the result is frozen', async () => {
    const file = writeConfig(tmp.dir, 'tiny.json', tiny(3));
    const fromFile = await loadConfig(file);
    expect(fromFile.file).to.equal(file);
    expect(fromFile.config.trainer.steps).to.equal(3);
    expect(Object.isFrozen(fromFile.config)).to.equal(true);
    const fromObject = await loadConfig(tiny(3), { baseDir: tmp.dir });
    expect(fromObject.baseDir).to.equal(tmp.dir);
    expect(JSON.stringify(fromObject.config)).to.equal(JSON.stringify(fromFile.config));
    expect(await loadConfig(fromFile)).to.equal(fromFile);
    const again = await loadConfig(fromFile, { overrides: { 'trainer.steps': 7 } });
    expect(again.config.trainer.steps).to.equal(7);
    expect(again.file).to.equal(file);
    expect(fromFile.config.trainer.steps, 'the first load is untouched').to.equal(3);
  });

  it('loadConfig refuses misuse with CORL_ERR_API_OPTIONS naming the argument or option', async () => {
    const file = writeConfig(tmp.dir, 'tiny-bad.json', tiny(1));
    const cases: [() => Promise<unknown>, string][] = [
      [() => loadConfig(42 as unknown as ConfigInput), 'config'],
      [() => loadConfig([] as unknown as ConfigInput), 'config'],
      [() => loadConfig(tiny(1), { overide: {} } as never), 'options.overide'],
      [() => loadConfig(tiny(1), { overrides: 'trainer.steps=2' } as never), 'options.overrides'],
      [() => loadConfig(tiny(1), { baseDir: 3 } as never), 'options.baseDir'],
      [() => loadConfig(file, { baseDir: tmp.dir }), 'options.baseDir'],
      [() => loadConfig(tiny(1), 'fast' as never), 'options'],
    ];
    for (const [call, where] of cases) {
      const e = await rejection(call);
      expect(e.code, e.message).to.equal('CORL_ERR_API_OPTIONS');
      expect(e.where, e.message).to.equal(where);
      expect(e.detail).to.match(/^expected .*, got /);
    }
    // A config that is wrong is the config's error, as on the command line.
    const bad = await rejection(() => loadConfig({ ...tiny(1), trainer: { steps: -1 } }));
    expect(bad.code).to.equal('CORL_ERR_CONFIG_INVALID');
    expect((await rejection(() => loadConfig(path.join(tmp.dir, 'none.json')))).code).to.equal(
      'CORL_ERR_CONFIG_NOT_FOUND',
    );
  });

  it('train writes exactly what `corl train` writes, and returns it typed', async () => {
    const file = writeConfig(tmp.dir, 'same.json', tiny(3));
    const viaApi = path.join(tmp.dir, 'api-run');
    const viaCli = path.join(tmp.dir, 'cli-run');
    const lines: string[] = [];
    const run = await train(file, { out: viaApi, log: (l) => lines.push(l) });
    const cli = spawnSync(process.execPath, [BIN, 'train', file, '--out', viaCli, '-q'], { encoding: 'utf8' });
    expect(cli.status, cli.stderr).to.equal(0);
    const metrics = fs.readFileSync(path.join(viaApi, 'metrics.jsonl'), 'utf8');
    expect(metrics).to.equal(fs.readFileSync(path.join(viaCli, 'metrics.jsonl'), 'utf8'));
    expect(fs.readFileSync(path.join(viaApi, 'rollouts.jsonl'), 'utf8')).to.equal(
      fs.readFileSync(path.join(viaCli, 'rollouts.jsonl'), 'utf8'),
    );
    expect(run.runDir).to.equal(path.resolve(viaApi));
    expect(run.steps).to.equal(3);
    expect(run.stopped).to.equal(false);
    expect(run.readsGroundTruth).to.equal(false);
    expect(run.config.name).to.equal('fixture-co-rl');
    expect(run.metrics).to.deep.equal(
      metrics
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
    expect(run.report).to.equal(path.join(path.resolve(viaApi), 'report.html'));
    expect(fs.existsSync(run.report!)).to.equal(true);
    expect(lines).to.deep.equal([`run directory: ${path.resolve(viaApi)}`]);
    // The table `corl train` prints is made of the same numbers the result carries.
    for (const a of run.agents) {
      const evals = run.metrics.filter((m) => m.phase === 'eval' && m.agent === run.agents.indexOf(a));
      expect(a.base).to.equal(evals.find((m) => m.step === 0)!.metrics['eval/accuracy']);
      expect(a.final).to.equal(evals[evals.length - 1]!.metrics['eval/accuracy']);
      expect(a.finalStep).to.equal(3);
    }
  });

  it('a signal stops a run after a step with a checkpoint; resume finishes it as if never stopped', async () => {
    const whole = await train(tiny(3), { out: path.join(tmp.dir, 'whole'), report: false });
    expect(whole.report).to.equal(undefined);
    const stop = new AbortController();
    stop.abort('enough');
    const stopped = await train(tiny(3), { out: path.join(tmp.dir, 'stopped'), signal: stop.signal, report: false });
    expect(stopped.stopped).to.equal(true);
    expect(stopped.steps).to.be.lessThan(3);
    const finished = await resume(stopped.runDir, { report: false });
    expect(finished.stopped).to.equal(false);
    expect(finished.steps).to.equal(3);
    expect(fs.readFileSync(path.join(finished.runDir, 'metrics.jsonl'), 'utf8')).to.equal(
      fs.readFileSync(path.join(whole.runDir, 'metrics.jsonl'), 'utf8'),
    );
    // More steps on a finished run, and a config check on resume.
    const longer = await resume(whole.runDir, { steps: 4, report: false, config: tiny(3) });
    expect(longer.steps).to.equal(4);
    const other = await rejection(() => resume(whole.runDir, { config: { ...tiny(3), seed: 12 } }));
    expect(other.code).to.equal('CORL_ERR_RUN_MISMATCH');
    expect(other.where).to.equal('config');
    const fewer = await rejection(() => resume(whole.runDir, { steps: 2 }));
    expect([fewer.code, fewer.where]).to.deep.equal(['CORL_ERR_API_OPTIONS', 'options.steps']);
  });

  it('train and resume refuse misuse before anything is written', async () => {
    const out = path.join(tmp.dir, 'never');
    const cases: [() => Promise<unknown>, string][] = [
      [() => train(undefined as unknown as ConfigInput, { out }), 'config'],
      [() => train(true as unknown as ConfigInput, { out }), 'config'],
      [() => train(tiny(1), { out, steps: -1 }), 'options.steps'],
      [() => train(tiny(1), { out, steps: 1.5 }), 'options.steps'],
      [() => train(tiny(1), { out, evalSplit: 'train' as never }), 'options.evalSplit'],
      [() => train(tiny(1), { out, progress: 'loud' as never }), 'options.progress'],
      [() => train(tiny(1), { out, signal: { aborted: false } as never }), 'options.signal'],
      [() => train(tiny(1), { out, log: 'stderr' as never }), 'options.log'],
      [() => train(tiny(1), { out, report: 'yes' as never }), 'options.report'],
      [() => train(tiny(1), { out: 3 as never }), 'options.out'],
      [() => train(tiny(1), { out, step: 2 } as never), 'options.step'],
      [() => resume('', {}), 'runDir'],
      [() => resume(out, { out } as never), 'options.out'],
      [() => resume(out, { evalSplit: 'test' } as never), 'options.evalSplit'],
    ];
    for (const [call, where] of cases) {
      const e = await rejection(call);
      expect(e.code, e.message).to.equal('CORL_ERR_API_OPTIONS');
      expect(e.where, e.message).to.equal(where);
    }
    expect(fs.existsSync(out), 'no run folder for a refused call').to.equal(false);
    expect((await rejection(() => resume(out))).code).to.equal('CORL_ERR_RUN_NOT_FOUND');
    // A config that cannot start leaves no folder either.
    const bad = await rejection(() => train({ ...tiny(1), reward: 'corl:nope' }, { out }));
    expect(bad.code).to.equal('CORL_ERR_CONFIG_INVALID');
    expect(fs.existsSync(out)).to.equal(false);
  });

  it('compare runs configs over seeds and returns the rows and pairs of its results.json', async () => {
    const a = writeConfig(tmp.dir, 'cmp-a.json', { ...tiny(2), name: 'cmp-a' });
    const b = writeConfig(tmp.dir, 'cmp-b.json', {
      ...tiny(2),
      name: 'cmp-b',
      reward: 'corl:ground-truth',
      labelFree: false,
    });
    const out = path.join(tmp.dir, 'cmp');
    const log: string[] = [];
    const result = await compare([a, b], { seeds: 2, out, log: (l) => log.push(l) });
    expect(result.out).to.equal(path.resolve(out));
    expect(result.rows.map((r) => [r.name, r.seeds, r.supervised])).to.deep.equal([
      ['cmp-a', 2, false],
      ['cmp-b', 2, true],
    ]);
    expect(result.pairs.map((p) => [p.a, p.b, p.n])).to.deep.equal([['cmp-b', 'cmp-a', 2]]);
    expect(['ahead', 'behind', 'equivalent', 'inconclusive']).to.include(result.pairs[0]!.outcome);
    expect(fs.existsSync(result.report)).to.equal(true);
    expect(result.table).to.contain('cmp-a').and.contain('cmp-b');
    expect(log.filter((l) => l.endsWith(': starting'))).to.have.length(4);
    const saved = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    expect(JSON.parse(JSON.stringify(result.rows))).to.deep.equal(saved);
    // Again with the same folder: every run is done, nothing runs, the same answer comes back.
    const again = await compare([a, b], { seeds: 2, out, log: (l) => log.push(l) });
    expect(log.filter((l) => l.endsWith('done earlier, skipped'))).to.have.length(4);
    expect(again.table).to.equal(result.table);
  });

  it('compare refuses misuse with CORL_ERR_API_OPTIONS naming the option', async () => {
    const a = writeConfig(tmp.dir, 'm-a.json', { ...tiny(1), name: 'm-a' });
    const out = path.join(tmp.dir, 'cmp-never');
    const cases: [() => Promise<unknown>, string][] = [
      [() => compare('m-a.json' as never, { out }), 'configs'],
      [() => compare([], { out }), 'configs'],
      [() => compare([a], { out, seeds: 0 }), 'options.seeds'],
      [() => compare([a], { out, jobs: 0 }), 'options.jobs'],
      [() => compare([a], { out, progress: 'bar' as never }), 'options.progress'],
      [() => compare([a], { out, seed: 1 } as never), 'options.seed'],
      [() => compare([a], { out, verdict: 1 as never }), 'options.verdict'],
      [() => compare([a], { out, design: { metric: 'best' as never } }), 'options.design.metric'],
      [() => compare([a], { out, design: { alpha: 0.7 } }), 'options.design.alpha'],
      [() => compare([a], { out, design: { margin: -1 } }), 'options.design.margin'],
      [() => compare([a], { out, design: { pairs: [{ a: 'm-a', b: 'm-a' }] } }), 'options.design.pairs'],
      [
        () => compare([a], { out, design: { pairs: [{ a: 'm-a', b: 'x' }], against: ['x'] } }),
        'options.design.against',
      ],
      [() => compare([a], { out, design: { untilResolved: { looks: [4, 3] } } }), 'options.design.untilResolved'],
      [() => compare([a], { out, seeds: 2, design: { untilResolved: { looks: [2, 4] } } }), 'options.seeds'],
      [() => compare([a], { out, design: { metrics: 'final' } as never }), 'options.design.metrics'],
    ];
    for (const [call, where] of cases) {
      const e = await rejection(call);
      expect(e.code, e.message).to.equal('CORL_ERR_API_OPTIONS');
      expect(e.where, e.message).to.equal(where);
    }
    expect(fs.existsSync(out), 'nothing written for a refused call').to.equal(false);
  });

  it('evaluate writes exactly what `corl eval` writes, and returns its summary typed', async () => {
    const file = writeConfig(tmp.dir, 'ev.json', tiny(0));
    const viaCli = path.join(tmp.dir, 'ev-cli');
    const viaApi = path.join(tmp.dir, 'ev-api');
    const cli = spawnSync(process.execPath, [BIN, 'eval', file, '--samples', '3', '--out', viaCli, '-q'], {
      encoding: 'utf8',
    });
    expect(cli.status, cli.stderr).to.equal(0);
    const summary = await evaluate(file, { samples: 3, out: viaApi });
    expect(fs.readdirSync(viaApi).sort()).to.deep.equal(fs.readdirSync(viaCli).sort());
    for (const f of fs.readdirSync(viaCli))
      expect(fs.readFileSync(path.join(viaApi, f), 'utf8'), f).to.equal(fs.readFileSync(path.join(viaCli, f), 'utf8'));
    expect(JSON.parse(JSON.stringify(summary))).to.deep.equal(
      JSON.parse(fs.readFileSync(path.join(viaCli, 'summary.json'), 'utf8')),
    );
    expect(summary.agents.map((a) => [a.name, a.family])).to.deep.equal([
      ['a', 'fam-a'],
      ['b', 'fam-b'],
    ]);
    expect(summary.samples).to.equal(3);
    // Without out nothing is written; one agent by name.
    const one = await evaluate(file, { samples: 3, agent: 'b' });
    expect(one.agents.map((a) => a.name)).to.deep.equal(['b']);
    expect(one.agents[0]).to.deep.equal(JSON.parse(JSON.stringify({ ...summary.agents[1], file: undefined })));
  });

  it('pretrain writes exactly what `corl pretrain` writes, and returns one typed result per agent', async () => {
    const small = { dModel: 16, layers: 1, heads: 2, context: 48, optimizer: { lr: 0.003 } };
    const file = writeConfig(tmp.dir, 'pre.json', {
      name: 'pre',
      seed: 5,
      task: {
        use: 'corl:inline',
        options: {
          train: inlineTask.options.train.map((r) => ({ ...r, solution: ` so \\boxed{${r.answer}}` })),
          heldOut: inlineTask.options.heldOut,
        },
      },
      agents: [{ name: 'a', policy: { use: 'corl:transformer', options: small } }],
      topology: 'corl:self',
      reward: 'corl:vote',
      eval: { maxProblems: 2, sampling: { temperature: 0, maxTokens: 8 } },
      pretrain: { steps: 3, batchSize: 4, logEvery: 2 },
    });
    const viaCli = path.join(tmp.dir, 'pre-cli');
    const viaApi = path.join(tmp.dir, 'pre-api');
    const cli = spawnSync(process.execPath, [BIN, 'pretrain', file, '--out', viaCli, '-q'], { encoding: 'utf8' });
    expect(cli.status, cli.stderr).to.equal(0);
    const log: string[] = [];
    const results = await pretrain(file, { out: viaApi, log: (l) => log.push(l) });
    expect(results.map((r) => [r.name, r.steps, r.dir, r.split])).to.deep.equal([
      ['a', 3, path.resolve(viaApi), 'test'],
    ]);
    expect(Number.isFinite(results[0]!.loss)).to.equal(true);
    expect(log.map((l) => l.split(' loss ')[0])).to.deep.equal(['pretrain a step 2/3', 'pretrain a step 3/3']);
    expect(fs.readdirSync(viaApi).sort()).to.deep.equal(fs.readdirSync(viaCli).sort());
    for (const f of fs.readdirSync(viaCli))
      expect(fs.readFileSync(path.join(viaApi, f)).equals(fs.readFileSync(path.join(viaCli, f))), f).to.equal(true);
  });

  it('evaluate and pretrain refuse misuse before anything is written', async () => {
    const file = writeConfig(tmp.dir, 'ev-m.json', tiny(0));
    const out = path.join(tmp.dir, 'ev-never');
    const cases: [() => Promise<unknown>, string][] = [
      [() => evaluate(undefined as unknown as ConfigInput, { out }), 'config'],
      [() => evaluate(file, { out, format: 'math' }), 'options.format'],
      [() => evaluate(file, { out, template: '{question}?' }), 'options.template'],
      [() => evaluate(file, { out, data: file, format: 'latex' as never }), 'options.format'],
      [() => evaluate(file, { out, data: file, template: 'no slot' }), 'options.template'],
      [() => evaluate(file, { out, samples: 0 }), 'options.samples'],
      [() => evaluate(file, { out, batch: -1 }), 'options.batch'],
      [() => evaluate(file, { out, temperature: Number.NaN }), 'options.temperature'],
      [() => evaluate(file, { out, maxTokens: 1.5 }), 'options.maxTokens'],
      [() => evaluate(file, { out, progress: 'bar' as never }), 'options.progress'],
      [() => evaluate(file, { out, agent: 2 }), 'options.agent'],
      [() => evaluate(file, { out, agent: 'zed' }), 'options.agent'],
      [() => evaluate(file, { out, agent: {} as never }), 'options.agent'],
      [() => evaluate(file, { out, ensemble: 9 }), 'options.ensemble'],
      [() => evaluate(file, { out, agent: 0, ensemble: 1 }), 'options.ensemble'],
      [() => evaluate(file, { out: 7 as never }), 'options.out'],
      [() => evaluate(file, { out, sample: 2 } as never), 'options.sample'],
      [() => pretrain(file, {} as never), 'options.out'],
      [() => pretrain(file, { out, steps: 0 }), 'options.steps'],
      [() => pretrain(file, { out, agent: 2 }), 'options.agent'],
      [() => pretrain(file, { out, log: true as never }), 'options.log'],
      [() => pretrain(file, { out, epochs: 1 } as never), 'options.epochs'],
    ];
    for (const [call, where] of cases) {
      const e = await rejection(call);
      expect(e.code, e.message).to.equal('CORL_ERR_API_OPTIONS');
      expect(e.where, e.message).to.equal(where);
    }
    expect(fs.existsSync(out), 'nothing written for a refused call').to.equal(false);
  });
});
