// One Python reward file, unchanged, in TRL and in corl's lab: templates/python-reward/reward.py is
// called exactly as TRL v1.9.0's GRPOTrainer calls reward functions (test/integrations/py/
// grpo_reward_call.py transcribes that path: same argument names, types and batching), and it
// trains the embedded benchmark's models through corl:python. Needs python3 on PATH (.ci/run).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';
import { tempDir, writeConfig } from '../fixtures/configs';

const REWARD = path.join(ROOT, 'templates', 'python-reward', 'reward.py');
const GRPO = path.join(ROOT, 'test', 'integrations', 'py', 'grpo_reward_call.py');

/** Run grpo_reward_call.py on a job; its JSON answer. */
function callLikeGrpo(job: Record<string, unknown>, dir: string): any {
  const file = path.join(dir, 'job.json');
  fs.writeFileSync(file, JSON.stringify({ module: REWARD, functions: ['reward_func'], ...job }));
  const r = spawnSync('python3', [GRPO, file], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  expect(r.status, r.stderr).to.equal(0);
  return JSON.parse(r.stdout);
}

const ids = (texts: string[]) => texts.map((t) => [...t].map((c) => c.charCodeAt(0)));

describe('integrations: one Python reward file in TRL and in corl', function () {
  this.timeout(300000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-python-trl-');
  });
  after(() => tmp.cleanup());

  it("reward.py called as TRL v1.9.0's GRPOTrainer calls it: its own majority per prompt, checked steps", () => {
    // A GSM8K-style dataset: a prompt and an `answer` column (which the label-free reward ignores).
    const completions = [
      ['12+7=19;\\boxed{19}', '12+7=19;\\boxed{19}', '12+7=18;\\boxed{18}', '12+7=20;20-1=19;\\boxed{19}'],
      ['5-9=-4;\\boxed{-4}', '\\boxed{4}', '5-9=-4;\\boxed{-4}', 'I do not know'],
    ];
    const out = callLikeGrpo(
      {
        rows: [
          { prompt: 'Compute 12 plus 7.', answer: '19' },
          { prompt: 'Start at 5, take away 9.', answer: '-4' },
        ],
        num_generations: 4,
        completions,
        completion_ids: completions.map(ids),
        state: { global_step: 3, max_steps: 100, epoch: 0.03 },
      },
      tmp.dir,
    );
    // Row 1's majority is 19: the first two agree with true steps, the fourth writes 12+7=20.
    // Row 2's majority is -4: completions 1 and 3. No answer earns nothing.
    expect(out.rewards_per_func).to.deep.equal([[1], [1], [0], [0], [1], [0], [1], [0]]);
    expect(out.metrics).to.deep.equal({ steps_hold: [0.75] });
    expect(out.received).to.deep.equal([
      {
        prompts: 'list',
        completions: 'list',
        completion_ids: 'list',
        answer: 'list',
        trainer_state: 'TrainerState',
        log_extra: 'method',
        log_metric: 'method',
      },
    ]);
  });

  it('and with a conversational dataset (message lists in, message lists out)', () => {
    const completions = [['\\boxed{2}', '1+1=2;\\boxed{2}', '1+1=3;\\boxed{3}']];
    const out = callLikeGrpo(
      {
        rows: [{ prompt: [{ role: 'user', content: 'Compute 1 plus 1.' }] }],
        num_generations: 3,
        completions,
        completion_ids: completions.map(ids),
      },
      tmp.dir,
    );
    expect(out.rewards_per_func).to.deep.equal([[1], [1], [0]]);
  });

  it("the same file trains the embedded benchmark's two model families in corl (Co-RL ring, label-free)", () => {
    const base = JSON.parse(fs.readFileSync(path.join(ROOT, 'configs', 'co-rl.json'), 'utf8'));
    for (const a of base.agents)
      a.policy.options.checkpoint = path.resolve(ROOT, 'configs', a.policy.options.checkpoint);
    const config = {
      ...base,
      name: 'python-majority-steps',
      task: { ...base.task, options: { ...base.task.options, heldOut: 16 } },
      reward: { use: 'corl:python', options: { module: REWARD } },
      trainer: { ...base.trainer, steps: 2, batchSize: 4, groupSize: 4, evalEvery: 2, checkpointEvery: 2 },
      eval: { ...base.eval, samples: 1, ensemble: 1 },
    };
    delete config.$schema;
    const file = writeConfig(tmp.dir, 'python.json', config);
    const r = spawnSync(
      process.execPath,
      [path.join(ROOT, 'bin', 'corl.js'), 'train', '-c', file, '--out', path.join(tmp.dir, 'run'), '-q'],
      {
        encoding: 'utf8',
      },
    );
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('label-free run: 2 step(s)');
    const train = fs
      .readFileSync(path.join(tmp.dir, 'run', 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((m) => m.phase === 'train');
    expect(train).to.have.length(4); // 2 steps x 2 agents
    for (const m of train) {
      expect(m.metrics['python/steps_hold']).to.be.within(0, 1);
      expect(m.metrics['python/abstained']).to.equal(0);
    }
  });
});
