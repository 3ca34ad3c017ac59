// `corl eval` of a planned run before the plan's look: the held-out results it would recompute are
// the ones the seal hides, so evaluating the run's config or a checkpoint inside the run on the
// config's own split is refused (CORL_ERR_RUN_SEALED) however the path is reached, until a read
// under the plan has shown the run; a benchmark file is not the plan's split.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, dataFixture, tempDir, writeConfig } from '../fixtures/configs';
import { writeFixturePlan } from '../fixtures/plans';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');
const corl = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 240000 });

function sealed(r: { status: number | null; stderr: string }, ...says: string[]): void {
  expect(r.status, r.stderr).to.equal(1);
  expect(r.stderr).to.contain('CORL_ERR_RUN_SEALED');
  for (const s of says) expect(r.stderr).to.contain(s);
  expect(r.stderr, 'no stack lines').not.to.match(/\n\s+at \S|internal error/);
}

describe('e2e: corl eval refuses a planned run before the look', function () {
  this.timeout(600000); // a guard against a hang, not a speed check
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('corl-sealed-eval-')));
  after(() => tmp.cleanup());

  it("its config, its checkpoints, a copy and an edited run.json are refused until the plan's look; after it, evaluated", () => {
    writeConfig(tmp.dir, 'co-rl.json', coRlConfig({ trainer: { ...(coRlConfig().trainer as object), steps: 2 } }));
    writeConfig(tmp.dir, 'base.json', coRlConfig({ name: 'fixture-base', trainer: { steps: 0 } }));
    const plan = writeFixturePlan(path.join(tmp.dir, 'plan.json'), { name: 'sealed-eval' });
    const out = path.join(tmp.dir, 'cmp');
    // the first look's runs, by two shards that render nothing: no look yet
    for (const s of ['1/2', '2/2']) {
      const r = corl(['compare', '--plan', plan, '--out', out, '--progress', 'none', '--shard', s]);
      expect(r.status, r.stderr).to.equal(0);
    }
    const run = path.join(out, 'fixture-co-rl', 'seed-1');
    const runConfig = path.join(run, 'config.json');
    const checkpoints = path.join(run, 'checkpoints');
    const step = fs.readdirSync(checkpoints).find((d) => d.startsWith('step-'))!;
    const checkpoint = path.join(checkpoints, step, 'agent-0');
    expect(fs.existsSync(checkpoint), checkpoint).to.equal(true);

    // the run's own config, on the held-out split
    sealed(corl(['eval', runConfig, '-q']), 'the config file', 'sealed until the look');
    // a config of one's own whose policy loads the trained checkpoint, named relative to the config
    const mine = writeConfig(
      tmp.dir,
      'mine.json',
      coRlConfig({
        name: 'mine',
        agents: ['a', 'b'].map((name, k) => ({
          name,
          policy: {
            use: 'corl:transformer',
            options: { checkpoint: path.relative(tmp.dir, checkpoint).replace('agent-0', `agent-${k}`) },
          },
        })),
      }),
    );
    sealed(corl(['eval', '-c', mine, '-q']), 'agents[0].policy.options.checkpoint', `inside ${run}`);
    // run.json edited to say nothing of its seal: the comparison's seal.key still marks it
    const meta = JSON.parse(fs.readFileSync(path.join(run, 'run.json'), 'utf8'));
    delete meta.sealed;
    fs.writeFileSync(path.join(run, 'run.json'), JSON.stringify(meta));
    sealed(corl(['eval', runConfig, '-q']), 'sealed until the look');
    fs.writeFileSync(path.join(run, 'run.json'), JSON.stringify({ ...meta, sealed: true }));
    // a run copied out of its comparison (no seal.key above it): its run.json marks it
    const alone = path.join(tmp.dir, 'alone');
    fs.cpSync(path.join(out, 'fixture-co-rl', 'seed-2'), alone, { recursive: true });
    sealed(corl(['eval', path.join(alone, 'config.json'), '-q']), `inside ${alone}`);
    // a benchmark file is not the plan's split: evaluated
    const bench = corl(['eval', runConfig, '--data', dataFixture('gsm8k.jsonl'), '--limit', '2', '-q']);
    expect(bench.status, bench.stderr).to.equal(0);
    expect(bench.stdout).to.contain('pass@1');

    // the look: the comparison renders the runs and counts the read; now the runs may be evaluated
    const look = corl(['compare', '--plan', plan, '--out', out, '--progress', 'none']);
    expect(look.status, look.stderr).to.equal(0);
    const after = corl(['eval', runConfig, '-q']);
    expect(after.status, after.stderr).to.equal(0);
    expect(after.stdout).to.contain('problem(s) from the held-out split');
    // a copy out of the comparison opens nowhere, and a damaged ledger opens nothing
    sealed(corl(['eval', path.join(alone, 'config.json'), '-q']), `inside ${alone}`);
    fs.rmSync(path.join(out, 'reads.jsonl'));
    sealed(corl(['eval', runConfig, '-q']), 'sealed until the look');
  });
});
