import { expect } from 'chai';
import { checkJobOptions, kubernetesFiles, slurmFiles, type JobOptions } from '../../../core/compare/jobs';
import { isCorlError } from '../../../core/errors';

const OPTIONS: JobOptions = { configs: ['configs/a.json'], seeds: 4, shards: 2, out: 'runs/sweep', name: 'corl-sweep' };

describe('compare/jobs: the job files of a sweep on Slurm and Kubernetes', () => {
  it('names the array, the shard spec and the dependency from the options', () => {
    const [compare, render, submit] = slurmFiles({ ...OPTIONS, shards: 4, name: 'lab-1' });
    expect(compare!.text).to.contain('#SBATCH --job-name=lab-1\n').and.contain('#SBATCH --array=0-3\n');
    expect(compare!.text).to.contain('--out runs/sweep --progress lines --shard auto\n');
    expect(render!.text).to.contain('#SBATCH --job-name=lab-1-render\n');
    expect(render!.text).to.match(
      /^exec "\$CORL" compare configs\/a\.json --seeds 4 --out runs\/sweep --progress lines$/m,
    );
    expect(submit!.text).to.contain('--dependency=afterok:"$shards"');
    const [job, renderJob] = kubernetesFiles({ ...OPTIONS, shards: 4, name: 'lab-1' });
    expect(job!.text)
      .to.contain('name: lab-1-shards\n')
      .and.contain('completions: 4\n')
      .and.contain('parallelism: 4\n');
    expect(job!.text).to.contain('"--shard","auto/4"]').and.contain('claimName: lab-1-lab');
    expect(renderJob!.text).to.contain('name: lab-1-render\n').and.not.contain('"--shard"');
  });

  it('refuses paths and names that would not survive a shell line or a manifest, and shards beyond the seeds', () => {
    for (const [bad, where] of [
      [{ configs: ['configs/a b.json'] }, '<configs>'],
      [{ configs: ['/abs/a.json'] }, '<configs>'],
      [{ configs: ['../a.json'] }, '<configs>'],
      [{ out: 'runs/$(rm -rf ~)' }, '--out'],
      [{ name: 'Corl_Sweep' }, '--job-name'],
      [{ name: '-x' }, '--job-name'],
      [{ shards: 0 }, '--shards'],
      [{ shards: 5 }, '--shards'],
    ] as const) {
      let err: unknown;
      try {
        checkJobOptions({ ...OPTIONS, ...bad });
      } catch (e) {
        err = e;
      }
      expect(isCorlError(err, 'CORL_ERR_CLI_USAGE'), JSON.stringify(bad)).to.equal(true);
      expect((err as { where?: string }).where).to.equal(where);
    }
  });
});
