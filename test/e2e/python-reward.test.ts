// A Python reward function through the corl binary: a TRL-style Co-RL reward in Python trains exactly
// as corl:vote does; a reward that raises mid-run stops it cleanly (coded error, Python's last line, no
// JavaScript stack, nothing written lost, no Python process left), and --resume finishes it as an
// uninterrupted run.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');

function corl(args: string[], cwd?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', cwd });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The train lines of a run's metrics.jsonl, without the reward source's own metrics. */
function trainLines(dir: string): unknown[] {
  return fs
    .readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .map((m) => ({
      ...m,
      metrics: Object.fromEntries(
        Object.entries(m.metrics as Record<string, number>).filter(([k]) => !/^(vote|python)\//.test(k)),
      ),
    }));
}

/** Co-RL in Python, written as a TRL reward function; it raises at step 5 while a file named "break" exists. */
const CO_RL = `
import os

open(os.path.join(os.path.dirname(__file__), "host.pid"), "w").write(str(os.getpid()))


def reward_func(prompts, completions, matches_pseudo_label, trainer_state, **kwargs):
    if os.path.exists(os.path.join(os.path.dirname(__file__), "break")) and trainer_state.global_step == 5:
        raise RuntimeError("the reward broke at step %d" % trainer_state.global_step)
    return [1.0 if m else 0.0 for m in matches_pseudo_label]
`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('e2e: a Python reward function (corl:python) in corl train', function () {
  this.timeout(300000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-python-e2e-');
    fs.writeFileSync(path.join(tmp.dir, 'co_rl.py'), CO_RL);
  });
  after(() => tmp.cleanup());

  const config = (reward: unknown) =>
    coRlConfig({
      reward,
      trainer: {
        steps: 8,
        batchSize: 4,
        groupSize: 5,
        evalEvery: 4,
        checkpointEvery: 2,
        saveRollouts: true,
        sampling: { maxTokens: 4 },
      },
    });
  const python = { use: 'corl:python', options: { module: './co_rl.py' } };

  it('Co-RL written in Python trains step for step as corl:vote, and its process ends with the run', () => {
    const vote = writeConfig(tmp.dir, 'vote.json', config('corl:vote'));
    const py = writeConfig(tmp.dir, 'python.json', config(python));
    const a = corl(['train', '-c', vote, '--out', path.join(tmp.dir, 'vote'), '-q']);
    expect(a.code, a.stderr).to.equal(0);
    // from another folder: the module and the interpreter's working folder are the config's
    const b = corl(['train', '-c', py, '--out', path.join(tmp.dir, 'python'), '-q'], '/');
    expect(b.code, b.stderr).to.equal(0);
    expect(b.stdout).to.contain('label-free run: 8 step(s)');
    expect(trainLines(path.join(tmp.dir, 'python'))).to.deep.equal(trainLines(path.join(tmp.dir, 'vote')));
    const metrics = fs.readFileSync(path.join(tmp.dir, 'python', 'metrics.jsonl'), 'utf8');
    expect(metrics).to.contain('"python/abstained":0');
    expect(alive(Number(fs.readFileSync(path.join(tmp.dir, 'host.pid'), 'utf8')))).to.equal(false);
  });

  it('a reward that raises mid-run stops it with a coded error and Python’s last line; --resume finishes it as an uninterrupted run', () => {
    const py = writeConfig(tmp.dir, 'python.json', config(python));
    const out = path.join(tmp.dir, 'broken');
    fs.writeFileSync(path.join(tmp.dir, 'break'), '');
    const r = corl(['train', '-c', py, '--out', out, '-q']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('CORL_ERR_PYTHON_RAISED').and.contain('corl:python options.function');
    expect(r.stderr)
      .to.contain('RuntimeError: the reward broke at step 5')
      .and.match(/co_rl\.py:\d+ in reward_func/);
    expect(r.stderr, 'no JavaScript stack').to.not.match(/\n\s+at .*\.js:\d+/);
    // the whole Python traceback is on stderr too, each line marked
    expect(r.stderr).to.contain('python| Traceback (most recent call last):');
    expect(alive(Number(fs.readFileSync(path.join(tmp.dir, 'host.pid'), 'utf8'))), 'the Python process').to.equal(
      false,
    );
    // what was written before step 5 is there: five train steps, the checkpoint of step 4
    const state = JSON.parse(fs.readFileSync(path.join(out, 'state.json'), 'utf8'));
    expect(state).to.include({ nextStep: 4, finished: false });
    expect((trainLines(out) as { phase: string }[]).filter((m) => m.phase === 'train').length).to.equal(10);
    fs.rmSync(path.join(tmp.dir, 'break'));
    const resumed = corl(['train', '--resume', out, '-q']);
    expect(resumed.code, resumed.stderr).to.equal(0);
    expect(trainLines(out)).to.deep.equal(trainLines(path.join(tmp.dir, 'python')));
  });

  it('an import error stops corl train before training, naming the option, with no JavaScript stack', () => {
    fs.writeFileSync(path.join(tmp.dir, 'needs_numpy.py'), 'import numpy_not_here_at_all\n');
    const file = writeConfig(
      tmp.dir,
      'bad.json',
      config({ use: 'corl:python', options: { module: 'needs_numpy.py' } }),
    );
    const r = corl(['train', '-c', file, '--out', path.join(tmp.dir, 'bad'), '-q']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('CORL_ERR_PYTHON_IMPORT: corl:python options.module');
    expect(r.stderr).to.contain("ModuleNotFoundError: No module named 'numpy_not_here_at_all'");
    expect(r.stderr).to.not.match(/\n\s+at .*\.js:\d+/);
  });
});
