// `corl compare --shard`: which shard this process is, from the flag (`k/n`) or from the engine that
// started it (`auto`, `auto/n`): a Slurm array task (SLURM_ARRAY_TASK_ID, _COUNT, _MIN, _MAX) or a
// Kubernetes Indexed Job's pod (JOB_COMPLETION_INDEX, with the count given, since a pod is not told
// its Job's completions).
import { CorlError } from '../errors';

/** One shard of a comparison: shard `index` (1-based) of `count`. */
export interface Shard {
  readonly index: number;
  readonly count: number;
  /** Who assigned it, in words ("Slurm array job 12, task 3"), when an engine did. */
  readonly origin?: string;
}

/** The environment variables {@link parseShard} reads. */
export const SHARD_VARIABLES = [
  'SLURM_ARRAY_TASK_ID',
  'SLURM_ARRAY_TASK_COUNT',
  'SLURM_ARRAY_TASK_MIN',
  'SLURM_ARRAY_TASK_MAX',
  'SLURM_ARRAY_JOB_ID',
  'SLURM_JOB_ID',
  'JOB_COMPLETION_INDEX',
] as const;

type Env = Readonly<Record<string, string | undefined>>;

const USAGE_HINT =
  'give --shard k/n (shard k of n), or --shard auto in a Slurm array job (sbatch --array=0-<n−1>), or --shard auto/<n> in a Kubernetes Indexed Job of <n> completions';

function envError(message: string, where: string, hint: string): CorlError {
  return new CorlError('CORL_ERR_SHARD_ENVIRONMENT', message, { where, hint });
}

/** A variable that must hold a non-negative decimal integer; undefined when unset or empty. */
function intVar(env: Env, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,9}$/.test(v.trim()))
    throw envError(
      `expected ${name} to be a non-negative integer, got "${v.slice(0, 40)}"`,
      name,
      'the engine sets it: run corl compare --shard auto as the job command, unchanged',
    );
  return Number(v.trim());
}

/**
 * The shard `spec` names: `k/n` (1 ≤ k ≤ n, n ≥ 2), `auto` (a Slurm array task), or `auto/n` (a
 * Kubernetes Indexed Job's pod of n completions, or a Slurm array task of n tasks). Bad flags are
 * CORL_ERR_CLI_USAGE; an environment that does not say which shard this is, or says it
 * inconsistently, is CORL_ERR_SHARD_ENVIRONMENT naming the variable.
 */
export function parseShard(spec: string, env: Env = process.env): Shard {
  const text = spec.trim();
  const auto = /^auto(?:\/(\d{1,9}))?$/.exec(text);
  if (auto) return fromEnvironment(env, auto[1] !== undefined ? Number(auto[1]) : undefined);
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!(count >= 2 && index >= 1 && index <= count))
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected --shard as k/n with 1 ≤ k ≤ n and n ≥ 2, or auto, or auto/n, got "${spec}"`,
      {
        where: '--shard',
        hint: 'e.g. --shard 1/2 in one terminal and --shard 2/2 in another, on the same --out; --shard auto in a Slurm array job',
      },
    );
  return { index, count };
}

function fromEnvironment(env: Env, given: number | undefined): Shard {
  if (given !== undefined && given < 1)
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected --shard auto/n with n ≥ 1, got auto/${given}`, {
      where: '--shard',
      hint: 'n is the number of shards: the Indexed Job\'s "completions"',
    });
  const slurm = intVar(env, 'SLURM_ARRAY_TASK_ID');
  const k8s = intVar(env, 'JOB_COMPLETION_INDEX');
  if (slurm !== undefined && k8s !== undefined)
    throw envError(
      `expected one engine to assign the shard, got both SLURM_ARRAY_TASK_ID=${slurm} and JOB_COMPLETION_INDEX=${k8s}`,
      'JOB_COMPLETION_INDEX',
      'unset the one that does not start this process, or give --shard k/n',
    );
  if (slurm !== undefined) return fromSlurm(env, slurm, given);
  if (k8s !== undefined) return fromKubernetes(k8s, given);
  if (env.SLURM_JOB_ID !== undefined && env.SLURM_JOB_ID !== '')
    throw envError(
      `expected a Slurm array task (SLURM_ARRAY_TASK_ID), got Slurm job ${env.SLURM_JOB_ID.slice(0, 20)} that is not an array job`,
      'SLURM_ARRAY_TASK_ID',
      'submit the job as an array, one task per shard: sbatch --array=0-<n−1> (corl init --slurm writes the script)',
    );
  throw envError(
    'expected SLURM_ARRAY_TASK_ID (a Slurm array job) or JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) with --shard auto, got neither set',
    'SLURM_ARRAY_TASK_ID',
    USAGE_HINT,
  );
}

function fromSlurm(env: Env, id: number, given: number | undefined): Shard {
  const need = (name: string): number => {
    const v = intVar(env, name);
    if (v === undefined)
      throw envError(
        `expected ${name} beside SLURM_ARRAY_TASK_ID=${id}, got it unset`,
        name,
        'Slurm sets it in every array task (Slurm 17.11 or later); run corl compare --shard auto as the job command',
      );
    return v;
  };
  const count = need('SLURM_ARRAY_TASK_COUNT');
  const min = need('SLURM_ARRAY_TASK_MIN');
  const max = need('SLURM_ARRAY_TASK_MAX');
  const submit = `sbatch --array=0-${Math.max(0, count - 1)}`;
  if (count < 1 || max < min || max - min + 1 !== count)
    throw envError(
      `expected a contiguous array of tasks (SLURM_ARRAY_TASK_MAX − SLURM_ARRAY_TASK_MIN + 1 = SLURM_ARRAY_TASK_COUNT), got ${count} tasks over ${min}..${max}`,
      'SLURM_ARRAY_TASK_COUNT',
      `each shard is one task of a range with step 1: submit with ${submit} (a throttle such as %2 is fine; a step such as :2 or a list such as 1,5 is not)`,
    );
  if (id < min || id > max)
    throw envError(
      `expected SLURM_ARRAY_TASK_ID within ${min}..${max}, got ${id}`,
      'SLURM_ARRAY_TASK_ID',
      'the variables come from different jobs: run corl compare --shard auto as the job command, unchanged',
    );
  if (given !== undefined && given !== count)
    throw envError(
      `expected --shard auto/${given} to agree with the array's ${count} tasks (SLURM_ARRAY_TASK_COUNT), got ${given}`,
      'SLURM_ARRAY_TASK_COUNT',
      `give --shard auto (the array's size is the count), or submit ${given} tasks: sbatch --array=0-${given - 1}`,
    );
  const job = env.SLURM_ARRAY_JOB_ID ?? env.SLURM_JOB_ID;
  return { index: id - min + 1, count, origin: `Slurm array job ${job ?? '?'}, task ${id}` };
}

function fromKubernetes(index: number, given: number | undefined): Shard {
  if (given === undefined)
    throw envError(
      `expected --shard auto/<n> in a Kubernetes Indexed Job (JOB_COMPLETION_INDEX=${index}), got auto without a count`,
      '--shard',
      'a pod is not told its Job\'s completions: give them, --shard auto/<n> with n = the Job\'s "completions"',
    );
  if (index >= given)
    throw envError(
      `expected JOB_COMPLETION_INDEX below the ${given} shards of --shard auto/${given}, got ${index}`,
      'JOB_COMPLETION_INDEX',
      `set the Job's "completions" and the n of --shard auto/<n> to the same number`,
    );
  return { index: index + 1, count: given, origin: `Kubernetes completion index ${index}` };
}
