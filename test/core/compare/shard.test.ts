import { expect } from 'chai';
import { CorlError } from '../../../core/errors';
import { parseShard } from '../../../core/compare/shard';

/** The variables Slurm 22.05 sets in task `id` of `sbatch --array=min-max` (job 40). */
const slurm = (id: number, min: number, max: number, count = max - min + 1): Record<string, string> => ({
  SLURM_JOB_ID: String(40 + id - min),
  SLURM_ARRAY_JOB_ID: '40',
  SLURM_ARRAY_TASK_ID: String(id),
  SLURM_ARRAY_TASK_COUNT: String(count),
  SLURM_ARRAY_TASK_MIN: String(min),
  SLURM_ARRAY_TASK_MAX: String(max),
});

function refused(spec: string, env: Record<string, string>, code: string, where: string, says: string): void {
  let error: unknown;
  try {
    parseShard(spec, env);
  } catch (e) {
    error = e;
  }
  expect(error, `${spec} ${JSON.stringify(env)}`).to.be.instanceOf(CorlError);
  const e = error as CorlError;
  expect(e.code).to.equal(code);
  expect(e.where).to.equal(where);
  expect(e.message).to.contain(says);
  expect(e.hint, 'says what to do').to.be.a('string').and.not.equal('');
}

describe('compare/shard: --shard k/n, auto (Slurm array tasks) and auto/n (Kubernetes Indexed Jobs)', () => {
  it('k/n is read as given, whatever the environment', () => {
    expect(parseShard('2/3', slurm(0, 0, 1))).to.deep.equal({ index: 2, count: 3 });
    expect(parseShard(' 1/2 ', {})).to.deep.equal({ index: 1, count: 2 });
  });

  it('auto in a Slurm array task: index from the task id less the array minimum, count from the array', () => {
    expect(parseShard('auto', slurm(0, 0, 1))).to.deep.equal({
      index: 1,
      count: 2,
      origin: 'Slurm array job 40, task 0',
    });
    expect(parseShard('auto', slurm(1, 0, 1)).index).to.equal(2);
    // --array=1-4: task 3 is the third shard of four
    expect(parseShard('auto', slurm(3, 1, 4))).to.include({ index: 3, count: 4 });
    // a one-task array is one shard of one
    expect(parseShard('auto', slurm(5, 5, 5))).to.include({ index: 1, count: 1 });
    // auto/n agreeing with the array
    expect(parseShard('auto/4', slurm(4, 1, 4))).to.include({ index: 4, count: 4 });
  });

  it('auto/n in a Kubernetes Indexed Job: index from JOB_COMPLETION_INDEX (0-based), count as given', () => {
    expect(parseShard('auto/3', { JOB_COMPLETION_INDEX: '0' })).to.deep.equal({
      index: 1,
      count: 3,
      origin: 'Kubernetes completion index 0',
    });
    expect(parseShard('auto/3', { JOB_COMPLETION_INDEX: '2' })).to.include({ index: 3, count: 3 });
    expect(parseShard('auto/1', { JOB_COMPLETION_INDEX: '0' })).to.include({ index: 1, count: 1 });
  });

  it('missing or inconsistent variables are CORL_ERR_SHARD_ENVIRONMENT naming the variable', () => {
    const E = 'CORL_ERR_SHARD_ENVIRONMENT';
    refused('auto', {}, E, 'SLURM_ARRAY_TASK_ID', 'got neither set');
    refused('auto/2', { HOME: '/root' }, E, 'SLURM_ARRAY_TASK_ID', 'got neither set');
    refused('auto', { SLURM_JOB_ID: '41' }, E, 'SLURM_ARRAY_TASK_ID', 'Slurm job 41 that is not an array job');
    const noCount = slurm(0, 0, 1);
    delete noCount.SLURM_ARRAY_TASK_COUNT;
    refused('auto', noCount, E, 'SLURM_ARRAY_TASK_COUNT', 'got it unset');
    const noMin = slurm(0, 0, 1);
    delete noMin.SLURM_ARRAY_TASK_MIN;
    refused('auto', noMin, E, 'SLURM_ARRAY_TASK_MIN', 'got it unset');
    // --array=0-6:2 (4 tasks over 0..6) and --array=1,5 (2 tasks over 1..5) are not one range of step 1
    refused('auto', slurm(2, 0, 6, 4), E, 'SLURM_ARRAY_TASK_COUNT', 'got 4 tasks over 0..6');
    refused('auto', slurm(5, 1, 5, 2), E, 'SLURM_ARRAY_TASK_COUNT', 'got 2 tasks over 1..5');
    refused('auto', slurm(7, 0, 3, 4), E, 'SLURM_ARRAY_TASK_ID', 'within 0..3, got 7');
    refused('auto', { ...slurm(0, 0, 1), SLURM_ARRAY_TASK_ID: '0x1' }, E, 'SLURM_ARRAY_TASK_ID', 'got "0x1"');
    refused('auto', { ...slurm(0, 0, 1), SLURM_ARRAY_TASK_COUNT: '-2' }, E, 'SLURM_ARRAY_TASK_COUNT', 'got "-2"');
    refused('auto/3', slurm(0, 0, 1), E, 'SLURM_ARRAY_TASK_COUNT', "agree with the array's 2 tasks");
    refused('auto', { JOB_COMPLETION_INDEX: '1' }, E, '--shard', 'got auto without a count');
    refused('auto/2', { JOB_COMPLETION_INDEX: '2' }, E, 'JOB_COMPLETION_INDEX', 'below the 2 shards');
    refused('auto/2', { JOB_COMPLETION_INDEX: 'one' }, E, 'JOB_COMPLETION_INDEX', 'got "one"');
    refused('auto/2', { ...slurm(0, 0, 1), JOB_COMPLETION_INDEX: '0' }, E, 'JOB_COMPLETION_INDEX', 'got both');
  });

  it('bad flags are CORL_ERR_CLI_USAGE on --shard', () => {
    for (const spec of ['1/1', '3/2', '0/2', '1', 'auto/0', 'auto/', 'auto/x', 'auto2', '99999999999/2'])
      refused(spec, slurm(0, 0, 1), 'CORL_ERR_CLI_USAGE', '--shard', spec === 'auto/0' ? 'n ≥ 1' : 'k/n');
  });
});
