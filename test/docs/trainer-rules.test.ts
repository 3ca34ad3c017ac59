// The trainer rules of trainer-rules.ts on the failures the issue names and their neighbours: each
// rule refuses what the trainer release refuses, with the numbers that release's message would give.
import { expect } from 'chai';
import {
  cliFlags,
  grpoConfigArgs,
  hydraOverrides,
  openrlhfErrors,
  trlGrpoConfigErrors,
  verlOverrideErrors,
  verlRowErrors,
} from './trainer-rules';

describe('trainer rules (facts of verl v0.9.0, TRL v1.9.0, OpenRLHF v0.11.0)', () => {
  it('TRL GRPOConfig: per_device_train_batch_size=4 with num_generations=8 fails on one GPU, passes on two or with steps_per_generation=2', () => {
    const old = grpoConfigArgs('GRPOConfig(num_generations=8, per_device_train_batch_size=4, seed=0)');
    expect(old).to.deep.equal({ num_generations: 8, per_device_train_batch_size: 4, seed: 0 });
    expect(trlGrpoConfigErrors(old, 1)).to.deep.equal(['generation_batch_size (4) must be divisible by num_generations (8)']);
    expect(trlGrpoConfigErrors(old, 2)).to.deep.equal([]);
    expect(trlGrpoConfigErrors(old, 3)).to.deep.equal([
      'generation_batch_size (12) must be divisible by num_generations (8)',
    ]);
    const fixed = { ...old, steps_per_generation: 2 };
    for (const p of [1, 2, 3, 5]) expect(trlGrpoConfigErrors(fixed, p), `${p}`).to.deep.equal([]);
    // Defaults: 8 per device, 8 generations.
    expect(trlGrpoConfigErrors({}, 1)).to.deep.equal([]);
    expect(trlGrpoConfigErrors({ generation_batch_size: 12, per_device_train_batch_size: 4 }, 1)).to.deep.equal([
      'generation_batch_size (12) must be divisible by num_generations (8)',
    ]);
    expect(trlGrpoConfigErrors({ generation_batch_size: 12, per_device_train_batch_size: 8 }, 1)).to.deep.equal([
      'generation_batch_size (12) must be divisible by the global batch size (8)',
      'generation_batch_size (12) must be divisible by num_generations (8)',
    ]);
    expect(trlGrpoConfigErrors({ generation_batch_size: 16, steps_per_generation: 2 }, 1)).to.deep.equal([
      "'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time",
    ]);
    expect(trlGrpoConfigErrors({ num_generations: 1, per_device_train_batch_size: 1 }, 1)).to.deep.equal([
      'GRPO requires at least 2 generations per prompt, got 1',
    ]);
    // Evaluation is checked only when it runs: 8 per device × 1 over 3 generations.
    expect(trlGrpoConfigErrors({ num_generations_eval: 3, num_generations: 4 }, 1)).to.deep.equal([]);
    expect(
      trlGrpoConfigErrors({ num_generations_eval: 3, num_generations: 4, do_eval: true, eval_strategy: 'steps' }, 1),
    ).to.deep.equal(['The global eval batch size (8) must be divisible by the number of generations used for evaluation (3)']);
  });

  it('verl Hydra: a new key without + and an existing key with + are refused; reward_kwargs takes +', () => {
    const cmd = [
      'python -m verl.trainer.main_ppo ... actor_rollout_ref.rollout.n=8 \\',
      '  reward.custom_reward_function.path=$CORL/docs/integrations/verl_reward_loop.py \\',
      '  reward.custom_reward_function.reward_kwargs.agent=agent-0 \\',
      '  +reward.custom_reward_function.name=compute_score \\',
      '  +reward.reward_kwargs.corl.url=http://127.0.0.1:8470 \\',
      '  ++reward.num_workers=4 actor_rollout_ref.rollout.n.x=1 reward.reward_manager=x',
    ].join('\n');
    const overrides = hydraOverrides(cmd);
    expect(overrides.map((o) => `${o.prefix}${o.key}`)).to.deep.equal([
      'actor_rollout_ref.rollout.n',
      'reward.custom_reward_function.path',
      'reward.custom_reward_function.reward_kwargs.agent',
      '+reward.custom_reward_function.name',
      '+reward.reward_kwargs.corl.url',
      '++reward.num_workers',
      'actor_rollout_ref.rollout.n.x',
      'reward.reward_manager',
    ]);
    expect(verlOverrideErrors(overrides)).to.deep.equal([
      "Could not override 'reward.custom_reward_function.reward_kwargs.agent': not in verl v0.9.0's config (to add it: +reward.custom_reward_function.reward_kwargs.agent=agent-0)",
      "Could not append to config. An item is already at 'reward.custom_reward_function.name' (drop the +)",
      'actor_rollout_ref.rollout.n.x: actor_rollout_ref.rollout.n is a value in verl\'s config, not a mapping',
      'reward.reward_manager: a mapping, set one of its keys',
    ]);
  });

  it('verl rows: the naive manager of the compute_score route needs data_source and reward_model.ground_truth', () => {
    const row = { prompt: [{ role: 'user', content: 'q' }], extra_info: { index: 3 } };
    expect(verlRowErrors(row, 'reward-loop')).to.deep.equal([]);
    expect(verlRowErrors(row, 'compute_score')).to.deep.equal([
      'data_source: the naive manager reads it (KeyError without)',
      'reward_model.ground_truth: the naive manager reads it for every sample (KeyError without)',
    ]);
    expect(verlRowErrors({ prompt: 'q', extra_info: {} }, 'reward-loop')).to.deep.equal([
      'prompt: expected chat messages (data.prompt_key defaults to "prompt")',
      'extra_info.index: expected the problem id every agent shares',
    ]);
  });

  it('OpenRLHF flags: v0.9.0 names, unknown flags, both reward routes, a comma in the URL, K = 1 under a group estimator', () => {
    const flags = cliFlags(
      [
        'npx corl serve -c x.json --port 0',
        'python -m openrlhf.cli.train_ppo_ray ... --n_samples_per_prompt 8 --label_key id \\',
        '  --rollout.n_samples_per_prompt 1 --algo.advantage.estimator group_norm --rollout.max_len 9 \\',
        '  --reward.remote_url "http://a/get_reward,http://b" --train.agent_func_path agent.txt',
      ].join('\n'),
    );
    expect([...flags.keys()]).to.deep.equal([
      '--n_samples_per_prompt',
      '--label_key',
      '--rollout.n_samples_per_prompt',
      '--algo.advantage.estimator',
      '--rollout.max_len',
      '--reward.remote_url',
      '--train.agent_func_path',
    ]);
    expect(flags.get('--reward.remote_url')).to.equal('http://a/get_reward,http://b');
    expect(openrlhfErrors(flags)).to.deep.equal([
      '--n_samples_per_prompt: renamed in OpenRLHF v0.10.2 (unrecognized arguments)',
      '--label_key: renamed in OpenRLHF v0.10.2 (unrecognized arguments)',
      "--rollout.max_len: not a flag of OpenRLHF v0.11.0's train_ppo_ray",
      '--train.agent_func_path: "Agent path must be a Python file"',
      '--reward.remote_url is replaced by "agent" when --train.agent_func_path is given: give one of them',
      '--reward.remote_url is split on "," into several reward servers',
      'group_norm requires n_samples_per_prompt > 1',
    ]);
    expect(openrlhfErrors(cliFlags('... --rollout.n_samples_per_prompt 8 --algo.advantage.estimator grpo'))).to.deep.equal([
      '--algo.advantage.estimator: invalid choice grpo',
    ]);
  });
});
