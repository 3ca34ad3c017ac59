// The validation rules of the trainer releases corl's adapters are written against, written down as
// facts read from each release's source at its tag (fetched and read, never copied), so that the
// guides' commands and configs can be checked against them without the trainers installed:
//
// - verl v0.9.0 (verl-project/verl): verl/trainer/config/_generated_ppo_trainer.yaml (the composed
//   config Hydra overrides apply to), verl/trainer/ppo/reward.py (get_custom_reward_fn,
//   load_reward_manager), verl/experimental/reward_loop/reward_manager/naive.py (run_single).
// - TRL v1.9.0 (huggingface/trl): trl/trainer/grpo_config.py GRPOConfig.__post_init__, its field
//   defaults, and transformers' TrainingArguments defaults it inherits.
// - OpenRLHF v0.11.0 (OpenRLHF/OpenRLHF): openrlhf/cli/train_ppo_ray.py (argparse flags and the checks
//   after parsing), openrlhf/utils/agent.py (the remote reward request), openrlhf/trainer/ray/vllm_engine.py
//   (_load_agent_executor); flag names as renamed in v0.10.2 (v0.9.0's names listed as removed).
// - slime v0.3.1 (THUDM/slime): slime/utils/misc.py load_function, slime/utils/arguments.py.

// -- verl v0.9.0 --------------------------------------------------------------------------------------

/**
 * Keys of verl v0.9.0's composed trainer config (`_generated_ppo_trainer.yaml`) that the guides set or
 * that a reward setup may: leaves (a value) and nodes (a mapping). A Hydra override `key=value` needs
 * the key to exist ("Could not override"), `+key=value` needs it not to ("Could not append to config.
 * An item is already at …"), `++key=value` sets either way. `reward.reward_kwargs` and
 * `reward.custom_reward_function.reward_kwargs` are in neither list: the config has no such keys.
 */
export const VERL_CONFIG_LEAVES = new Set([
  'actor_rollout_ref.rollout.n',
  'actor_rollout_ref.rollout.response_length',
  'actor_rollout_ref.rollout.temperature',
  'actor_rollout_ref.rollout.calculate_log_probs',
  'data.train_files',
  'data.val_files',
  'data.train_batch_size',
  'data.prompt_key',
  'data.reward_fn_key',
  'data.return_raw_chat',
  'data.shuffle',
  'data.seed',
  'reward.num_workers',
  'reward.custom_reward_function.path',
  'reward.custom_reward_function.name',
  'reward.reward_manager.source',
  'reward.reward_manager.name',
  'reward.reward_manager.module.path',
  'reward.reward_manager.module.name',
]);
export const VERL_CONFIG_NODES = new Set([
  'actor_rollout_ref',
  'actor_rollout_ref.rollout',
  'data',
  'reward',
  'reward.custom_reward_function',
  'reward.reward_manager',
  'reward.reward_manager.module',
]);

/** One Hydra override of a command line: `+`/`++` prefix, dotted key, value. */
export interface HydraOverride {
  readonly prefix: '' | '+' | '++';
  readonly key: string;
  readonly value: string;
}

/** The Hydra overrides (`[+|++]a.b.c=value`) of a shell command. */
export function hydraOverrides(command: string): HydraOverride[] {
  return [...command.matchAll(/(?<=\s|^)(\+{0,2})([A-Za-z_][\w]*(?:\.[\w]+)+)=(\S+)/gm)].map((m) => ({
    prefix: m[1] as HydraOverride['prefix'],
    key: m[2]!,
    value: m[3]!,
  }));
}

/** What Hydra (as verl v0.9.0's config has it) says of each override: an empty list when all apply. */
export function verlOverrideErrors(overrides: readonly HydraOverride[]): string[] {
  const errors: string[] = [];
  for (const o of overrides) {
    const exists = VERL_CONFIG_LEAVES.has(o.key) || VERL_CONFIG_NODES.has(o.key);
    const parents = o.key.split('.').map((_, i, parts) => parts.slice(0, i).join('.')).slice(1);
    const leafParent = parents.find((p) => VERL_CONFIG_LEAVES.has(p));
    if (leafParent) errors.push(`${o.key}: ${leafParent} is a value in verl's config, not a mapping`);
    else if (o.prefix === '' && !exists)
      errors.push(`Could not override '${o.key}': not in verl v0.9.0's config (to add it: +${o.key}=${o.value})`);
    else if (o.prefix === '+' && exists)
      errors.push(`Could not append to config. An item is already at '${o.key}' (drop the +)`);
    else if (o.prefix === '' && VERL_CONFIG_NODES.has(o.key)) errors.push(`${o.key}: a mapping, set one of its keys`);
  }
  return errors;
}

/**
 * What a row of the training data must carry, by reward route. verl's naive reward manager (the
 * default, `reward.reward_manager.name=naive`, and the one that calls `reward.custom_reward_function`)
 * reads `data_source` and `reward_model["ground_truth"]` of every sample before it calls the function
 * (KeyError without them); RLHFDataset reads the prompt from `data.prompt_key` (default "prompt").
 * corl's adapters read the problem id from `extra_info.index` (their `id_key` default).
 */
export function verlRowErrors(row: Record<string, unknown>, route: 'reward-loop' | 'compute_score'): string[] {
  const errors: string[] = [];
  const obj = (v: unknown): Record<string, unknown> | undefined =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  if (!Array.isArray(row.prompt)) errors.push('prompt: expected chat messages (data.prompt_key defaults to "prompt")');
  if (obj(row.extra_info)?.index === undefined) errors.push('extra_info.index: expected the problem id every agent shares');
  if (route === 'compute_score') {
    if (typeof row.data_source !== 'string') errors.push("data_source: the naive manager reads it (KeyError without)");
    if (obj(row.reward_model)?.ground_truth === undefined)
      errors.push('reward_model.ground_truth: the naive manager reads it for every sample (KeyError without)');
  }
  return errors;
}

// -- TRL v1.9.0 ---------------------------------------------------------------------------------------

/** The GRPOConfig arguments the batch rules read, with TRL v1.9.0's (and TrainingArguments') defaults. */
export interface GrpoBatchArgs {
  readonly num_generations?: number; // default 8
  readonly num_generations_eval?: number; // default None: num_generations
  readonly per_device_train_batch_size?: number; // TrainingArguments default 8
  readonly per_device_eval_batch_size?: number; // TrainingArguments default 8
  readonly gradient_accumulation_steps?: number; // TrainingArguments default 1
  readonly steps_per_generation?: number; // default None: gradient_accumulation_steps
  readonly generation_batch_size?: number; // default None: derived
  readonly do_eval?: boolean;
  readonly eval_strategy?: string; // default "no"
  readonly remove_unused_columns?: boolean; // GRPOConfig default False
  readonly auto_find_batch_size?: boolean; // default False
}

/** GRPOConfig.__post_init__'s batch checks on `processes` processes: the ValueErrors it would raise. */
export function trlGrpoConfigErrors(args: GrpoBatchArgs, processes: number): string[] {
  const errors: string[] = [];
  const k = args.num_generations ?? 8;
  const perDevice = args.per_device_train_batch_size ?? 8;
  if (args.auto_find_batch_size) errors.push('auto_find_batch_size is not supported by GRPO');
  let generation: number;
  if (args.generation_batch_size === undefined) {
    generation = perDevice * processes * (args.steps_per_generation ?? args.gradient_accumulation_steps ?? 1);
  } else if (args.steps_per_generation === undefined) {
    generation = args.generation_batch_size;
    if (generation % (perDevice * processes) !== 0)
      errors.push(`generation_batch_size (${generation}) must be divisible by the global batch size (${perDevice * processes})`);
  } else {
    errors.push("'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time");
    return errors;
  }
  if (args.do_eval && (args.eval_strategy ?? 'no') !== 'no') {
    const ke = args.num_generations_eval ?? k;
    const evalBatch = (args.per_device_eval_batch_size ?? 8) * processes;
    if (evalBatch % ke !== 0)
      errors.push(`The global eval batch size (${evalBatch}) must be divisible by the number of generations used for evaluation (${ke})`);
  }
  if (generation % k !== 0) errors.push(`generation_batch_size (${generation}) must be divisible by num_generations (${k})`);
  if (k < 2) errors.push(`GRPO requires at least 2 generations per prompt, got ${k}`);
  return errors;
}

/** The integer and boolean keyword arguments of the first `GRPOConfig(…)` call in Python code. */
export function grpoConfigArgs(code: string): Record<string, number | boolean | string> {
  const m = /\bGRPOConfig\(([^)]*)\)/.exec(code);
  if (!m) return {};
  const out: Record<string, number | boolean | string> = {};
  for (const kv of m[1]!.matchAll(/(\w+)\s*=\s*([^,]+)/g)) {
    const v = kv[2]!.trim();
    out[kv[1]!] = /^\d+$/.test(v) ? Number(v) : v === 'True' ? true : v === 'False' ? false : v.replace(/^["']|["']$/g, '');
  }
  return out;
}

// -- OpenRLHF v0.11.0 ---------------------------------------------------------------------------------

/** Flags of openrlhf/cli/train_ppo_ray.py at v0.11.0 that a reward setup uses, with their defaults. */
export const OPENRLHF_FLAGS: ReadonlyMap<string, string | null> = new Map([
  ['--rollout.n_samples_per_prompt', '1'],
  ['--rollout.batch_size', '1024'],
  ['--data.label_key', null],
  ['--data.prompt_data', null],
  ['--reward.remote_url', null],
  ['--train.agent_func_path', null],
  ['--eval.dataset', null],
  ['--eval.n_samples_per_prompt', '4'],
  ['--algo.advantage.estimator', 'gae'],
  ['--algo.dynamic_filtering_enable', 'false'],
]);
/** v0.9.0's names of the same settings, renamed in v0.10.2 (argparse refuses them since). */
export const OPENRLHF_REMOVED_FLAGS = new Set([
  '--n_samples_per_prompt',
  '--label_key',
  '--remote_rm_url',
  '--agent_func_path',
  '--eval_n_samples_per_prompt',
]);
/** --algo.advantage.estimator choices that need more than one sample per prompt (an assert). */
export const OPENRLHF_GROUP_ESTIMATORS = new Set(['rloo', 'reinforce_baseline', 'group_norm', 'dr_grpo']);
export const OPENRLHF_ESTIMATORS = new Set(['gae', 'reinforce', ...OPENRLHF_GROUP_ESTIMATORS]);
/** openrlhf/utils/agent.py: each remote reward request has aiohttp's total timeout 180 s, 5 tries. */
export const OPENRLHF_REQUEST_TIMEOUT_S = 180;

/** The `--flag value` pairs of the trainer lines of a shell block (a flag without a value: "true"). */
export function cliFlags(code: string): Map<string, string> {
  const out = new Map<string, string>();
  const words = code
    .split('\n')
    .filter((l) => !/npx corl serve|^\s*#/.test(l))
    .join(' ')
    .split(/\s+/);
  words.forEach((w, i) => {
    if (!/^--[a-z]/.test(w)) return;
    const next = words[i + 1];
    out.set(w, next !== undefined && !next.startsWith('--') && next !== '\\' ? next.replace(/^"|"$/g, '') : 'true');
  });
  return out;
}

/** What OpenRLHF v0.11.0's parser and its checks after parsing say of a command's flags. */
export function openrlhfErrors(flags: ReadonlyMap<string, string>): string[] {
  const errors: string[] = [];
  for (const f of flags.keys()) {
    if (OPENRLHF_REMOVED_FLAGS.has(f)) errors.push(`${f}: renamed in OpenRLHF v0.10.2 (unrecognized arguments)`);
    else if (!OPENRLHF_FLAGS.has(f)) errors.push(`${f}: not a flag of OpenRLHF v0.11.0's train_ppo_ray`);
  }
  const get = (f: string): string | null | undefined => flags.get(f) ?? OPENRLHF_FLAGS.get(f);
  const agent = flags.get('--train.agent_func_path');
  if (agent !== undefined && !agent.endsWith('.py')) errors.push('--train.agent_func_path: "Agent path must be a Python file"');
  if (agent !== undefined && flags.has('--reward.remote_url'))
    errors.push('--reward.remote_url is replaced by "agent" when --train.agent_func_path is given: give one of them');
  const url = flags.get('--reward.remote_url');
  if (url !== undefined && url.includes(',')) errors.push('--reward.remote_url is split on "," into several reward servers');
  const estimator = get('--algo.advantage.estimator')!;
  if (!OPENRLHF_ESTIMATORS.has(estimator)) errors.push(`--algo.advantage.estimator: invalid choice ${estimator}`);
  const n = Number(get('--rollout.n_samples_per_prompt'));
  if (OPENRLHF_GROUP_ESTIMATORS.has(estimator) && !(n > 1))
    errors.push(`${estimator} requires n_samples_per_prompt > 1`);
  if (flags.has('--algo.dynamic_filtering_enable') && !(n > 1))
    errors.push('n_samples_per_prompt must be greater than 1 when using dynamic filtering');
  if (flags.has('--eval.dataset') && url === undefined && agent === undefined)
    errors.push('--eval.dataset needs --reward.remote_url or --train.agent_func_path');
  return errors;
}

// -- slime v0.3.1 -------------------------------------------------------------------------------------

/** slime/utils/arguments.py flags of a group reward. load_function imports the dotted path's module. */
export const SLIME_FLAGS = new Set(['--group-rm', '--custom-rm-path', '--n-samples-per-prompt']);
