// The lab's sweeps on cluster engines (issue 38, item 8), with the job files `corl init --slurm
// --kubernetes` writes, run as they are: on a real single-node Slurm (munged, slurmctld and slurmd
// started by the test) the shards run as an array job, one task is requeued mid-run and resumes,
// and the render job (--dependency=afterok) writes what one process writes, byte for byte; the
// Kubernetes manifests are checked for what an Indexed Job requires, and each index's command is
// run here with JOB_COMPLETION_INDEX set, as its pod would run it.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, tempDir } from '../fixtures/configs';
import { missingSlurm, SlurmCluster, SLURM_INSTALL } from '../support/slurm';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/corl.js');
// js-yaml is mocha's own dependency (no types of its own are installed): a YAML 1.2 reader of the manifests
const yaml = require('js-yaml') as { load: (text: string) => unknown };

const CO_RL_STEPS = 1500;

/** The sweep's three configs, tiny: an evaluation-only base, a self-voting run, and a longer Co-RL run to requeue. */
const CONFIGS: Record<string, Record<string, unknown>> = {
  'base.json': coRlConfig({ name: 'sweep-base', trainer: { steps: 0 } }),
  'ttrl.json': coRlConfig({
    name: 'sweep-ttrl',
    topology: 'corl:self',
    trainer: { ...(coRlConfig().trainer as object), steps: 4 },
  }),
  'co-rl.json': coRlConfig({
    name: 'sweep-co-rl',
    trainer: { ...(coRlConfig().trainer as object), steps: CO_RL_STEPS, evalEvery: 500, checkpointEvery: 50 },
  }),
};

/** `corl init <dir> --slurm --kubernetes --shards 2 --seeds 2`, its configs made tiny, corl installed as a link to this checkout. */
function lab(dir: string): string {
  const r = spawnSync(
    process.execPath,
    [BIN, 'init', dir, '--slurm', '--kubernetes', '--shards', '2', '--seeds', '2'],
    {
      encoding: 'utf8',
    },
  );
  expect(r.status, r.stderr).to.equal(0);
  for (const [name, config] of Object.entries(CONFIGS))
    fs.writeFileSync(path.join(dir, 'configs', name), JSON.stringify(config, null, 2));
  fs.mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'corl'));
  fs.symlinkSync('../corl/bin/corl.js', path.join(dir, 'node_modules', '.bin', 'corl'));
  return dir;
}

/** What a comparison renders, and each run's metrics and evaluations: the files compared byte for byte. */
function outputs(labDir: string): Record<string, string> {
  const out = path.join(labDir, 'runs', 'sweep');
  const files: Record<string, string> = {};
  for (const f of ['results.md', 'results.json', 'verdicts.json', 'report.html'])
    files[f] = fs.readFileSync(path.join(out, f), 'utf8');
  for (const c of ['sweep-base', 'sweep-ttrl', 'sweep-co-rl'])
    for (const s of ['seed-0', 'seed-1']) {
      const run = path.join(out, c, s);
      for (const f of ['metrics.jsonl', ...fs.readdirSync(path.join(run, 'eval')).map((e) => `eval/${e}`)])
        files[`${c}/${s}/${f}`] = fs.readFileSync(path.join(run, f), 'utf8');
      expect(fs.existsSync(path.join(run, 'corl.lock')), `${c}/${s} lock left`).to.equal(false);
    }
  return files;
}

function expectSameOutputs(got: Record<string, string>, want: Record<string, string>): void {
  expect(Object.keys(got).sort()).to.deep.equal(Object.keys(want).sort());
  for (const f of Object.keys(want)) expect(got[f], f).to.equal(want[f]);
}

/** A command in its own process, with its output. */
function runAsync(
  cmd: string,
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ status: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, opts);
    let stderr = '';
    let stdout = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.on('close', (status) => resolve({ status, stderr, stdout }));
  });
}

describe('integrations: the sweep as Slurm array jobs and Kubernetes Indexed Jobs (corl init --slurm --kubernetes)', function () {
  this.timeout(600000); // tiny runs; a guard against a hang, not a speed check
  let tmp: ReturnType<typeof tempDir>;
  let reference: Record<string, string>;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  };
  for (const v of Object.keys(env)) if (v.startsWith('SLURM_') || v === 'JOB_COMPLETION_INDEX') delete env[v];

  before(function () {
    tmp = tempDir('corl-clusters-');
    // one process: the render step's own script, outside any engine, runs every seed and renders
    const one = lab(path.join(tmp.dir, 'one'));
    const r = spawnSync('bash', ['slurm/render.sbatch'], { cwd: one, env, encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('sweep-co-rl seed 1011: starting');
    reference = outputs(one);
  });
  after(() => tmp?.cleanup());

  it('the Indexed Job has what Kubernetes requires; each index, run with JOB_COMPLETION_INDEX, then the render Job, writes what one process writes', async () => {
    const dir = lab(path.join(tmp.dir, 'k8s'));
    const job = yaml.load(fs.readFileSync(path.join(dir, 'kubernetes/compare-job.yaml'), 'utf8')) as any;
    const render = yaml.load(fs.readFileSync(path.join(dir, 'kubernetes/render-job.yaml'), 'utf8')) as any;
    for (const j of [job, render]) {
      expect(j).to.include({ apiVersion: 'batch/v1', kind: 'Job' });
      expect(j.metadata.name).to.match(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      expect(j.metadata.name.length).to.be.at.most(63);
      expect(['Never', 'OnFailure']).to.include(j.spec.template.spec.restartPolicy);
      const [c, ...more] = j.spec.template.spec.containers;
      expect(more).to.deep.equal([]);
      expect(c.name).to.match(/^[a-z0-9-]+$/);
      expect(c.image).to.be.a('string').and.not.equal('');
      expect(c.workingDir).to.equal('/lab');
      expect(c.volumeMounts).to.deep.equal([{ name: 'lab', mountPath: '/lab' }]);
      expect(j.spec.template.spec.volumes).to.deep.equal([
        { name: 'lab', persistentVolumeClaim: { claimName: 'corl-sweep-lab' } },
      ]);
      expect(c.command.every((a: unknown) => typeof a === 'string')).to.equal(true);
    }
    expect(job.metadata.name).to.equal('corl-sweep-shards');
    // an Indexed Job: a completion per shard, all at once, the count the shards are told
    expect(job.spec).to.include({ completionMode: 'Indexed', completions: 2, parallelism: 2 });
    const command: string[] = job.spec.template.spec.containers[0].command;
    expect(command.slice(-2)).to.deep.equal(['--shard', `auto/${job.spec.completions}`]);
    expect(render.spec.completionMode).to.equal(undefined);
    expect(render.spec.completions).to.equal(1);
    const renderCommand: string[] = render.spec.template.spec.containers[0].command;
    expect(renderCommand).to.deep.equal(command.slice(0, -2));
    // both pods at once, each with its index, in the project folder (the pod's workingDir)
    const [cmd, ...args] = command;
    const pods = await Promise.all(
      [0, 1].map((i) => runAsync(cmd!, args, { cwd: dir, env: { ...env, JOB_COMPLETION_INDEX: String(i) } })),
    );
    pods.forEach((p, i) => {
      expect(p.status, p.stderr).to.equal(0);
      expect(p.stderr).to.contain(`shard ${i + 1}/2 (Kubernetes completion index ${i}): seeds ${i}`);
      expect(p.stdout).to.contain(`shard ${i + 1}/2: seeds ${i} ran`);
    });
    expect(fs.existsSync(path.join(dir, 'runs/sweep/report.html')), 'a shard renders nothing').to.equal(false);
    const [rcmd, ...rargs] = renderCommand;
    const r = await runAsync(rcmd!, rargs, { cwd: dir, env });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('done earlier, skipped').and.not.contain('starting');
    expectSameOutputs(outputs(dir), reference);
    // a pod of a Job whose completions disagree with its auto/<n>: coded, naming the variable
    const bad = spawnSync(cmd!, [...args.slice(0, -1), 'auto/2'], {
      cwd: dir,
      env: { ...env, JOB_COMPLETION_INDEX: '2' },
      encoding: 'utf8',
    });
    expect(bad.status).to.equal(1);
    expect(bad.stderr)
      .to.contain('CORL_ERR_SHARD_ENVIRONMENT: JOB_COMPLETION_INDEX:')
      .and.not.match(/\n\s+at /);
  });

  describe('on a real single-node Slurm', function () {
    let cluster: SlurmCluster | undefined;
    before(async function () {
      const missing = missingSlurm();
      if (missing.length) {
        console.log(`      skipped: Slurm is not installed (no ${missing.join(', ')}): ${SLURM_INSTALL}`);
        this.skip();
      }
      if (process.getuid?.() !== 0)
        throw new Error('the Slurm test starts slurmd, which runs jobs as their users: run it as root (CI does)');
      cluster = await SlurmCluster.start();
    });
    after(async () => cluster?.stop());

    it('bash slurm/submit.sh: an array of two shards, one requeued mid-run, resumes; the render job after them writes what one process writes', async () => {
      const c = cluster!;
      const dir = lab(path.join(tmp.dir, 'slurm'));
      const submitted = c.run('bash', ['slurm/submit.sh'], dir);
      expect(submitted.status, submitted.stderr + c.logs()).to.equal(0);
      const m = /shards: array job (\d+); render: job (\d+)/.exec(submitted.stdout);
      expect(m, submitted.stdout).to.not.equal(null);
      const [array, renderJob] = [m![1]!, m![2]!];
      const show = (job: string): string => c.run('scontrol', ['show', 'job', '-o', job]).stdout;
      try {
        await requeuedSweep(c, { dir, array, renderJob, show, reference });
      } catch (e) {
        // everything the next failure needs, before the cluster and the lab folder are removed
        (e as Error).message += `\n${diagnostics(c, dir, array, [array, renderJob].map(show))}`;
        throw e;
      }
    });
  });
});

/** Every job log of the lab, the jobs' records and the daemons' lines about the array job. */
function diagnostics(c: SlurmCluster, dir: string, array: string, jobs: readonly string[]): string {
  const logs = path.join(dir, 'runs/slurm');
  const files = fs.existsSync(logs) ? fs.readdirSync(logs).sort() : [];
  return [
    '=== the jobs (scontrol show job -o)',
    ...jobs,
    ...files.map((f) => `=== ${f}\n${fs.readFileSync(path.join(logs, f), 'utf8')}`),
    '=== the daemons',
    c.logs(array),
  ].join('\n');
}

/** The sweep after its submission: task 1 requeued mid-run, then every job's end and what it wrote. */
async function requeuedSweep(
  c: SlurmCluster,
  x: {
    dir: string;
    array: string;
    renderJob: string;
    show: (job: string) => string;
    reference: Record<string, string>;
  },
): Promise<void> {
  const { dir, array, renderJob, show, reference } = x;
  expect(show(renderJob)).to.match(new RegExp(`Dependency=afterok:${array}_\\*`));
  // task 1 runs seed 1; requeue it once its Co-RL run has checkpointed and before it finishes
  const state = path.join(dir, 'runs/sweep/sweep-co-rl/seed-1/state.json');
  const read = (): { nextStep: number; finished: boolean } | undefined => {
    try {
      return JSON.parse(fs.readFileSync(state, 'utf8')) as { nextStep: number; finished: boolean };
    } catch {
      return undefined; // not written yet, or being replaced
    }
  };
  await c.until('task 1 mid-run', () => {
    const s = read();
    return s !== undefined && s.nextStep >= 100 && !s.finished;
  });
  const requeued = c.run('scontrol', ['requeue', `${array}_1`]);
  expect(requeued.status, requeued.stderr).to.equal(0);
  const cut = read()!;
  expect(cut.finished, 'requeued before it finished').to.equal(false);
  // Slurm holds a requeued job back for a while (BeginTime); the test releases it early, but not
  // within the second its first attempt was killed in: slurmd revokes a killed job's credential at
  // that second, and refuses a launch whose credential is of the same second ("Killing non-startable
  // batch JobId=…: Job credential revoked", the task FAILED with exit 1 and RunTime 0 before corl
  // ran at all). The kill reached slurmd before the task left COMPLETING, so once it has been
  // PENDING for over a second, a new credential is of a later second than the revocation.
  let pendingSince: number | undefined;
  await c.until('task 1 to run again, and every job to end', () => {
    const task = show(`${array}_1`);
    if (/JobState=PENDING/.test(task)) pendingSince ??= Date.now();
    if (
      pendingSince !== undefined &&
      Date.now() - pendingSince > 1500 &&
      /JobState=PENDING/.test(task) &&
      /Reason=BeginTime/.test(task)
    )
      c.run('scontrol', ['update', `jobid=${array}_1`, 'StartTime=now']);
    return /JobState=(COMPLETED|FAILED|CANCELLED)/.test(show(renderJob));
  });
  const tasks = show(array);
  expect(tasks.match(/JobState=COMPLETED/g), tasks).to.have.length(2);
  expect(show(renderJob), c.logs()).to.match(/JobState=COMPLETED .*ExitCode=0:0/);
  expect(show(`${array}_1`)).to.match(/Restarts=1/);
  const log = fs.readFileSync(path.join(dir, `runs/slurm/corl-sweep-${array}_1.out`), 'utf8');
  // the first attempt was stopped by the requeue's SIGTERM; the second resumed at a checkpoint
  expect(log).to.contain(`shard 2/2 (Slurm array job ${array}, task 1): seeds 1`);
  expect(log).to.contain('corl compare: stopped by SIGTERM');
  const resumed = /sweep-co-rl seed 1011: resuming at step (\d+)/.exec(log);
  expect(resumed, log).to.not.equal(null);
  expect(Number(resumed![1])).to.be.above(0).and.below(CO_RL_STEPS);
  expect(log).to.contain('sweep-base seed 1011: done earlier, skipped');
  const renderLog = fs.readFileSync(path.join(dir, `runs/slurm/corl-sweep-render-${renderJob}.out`), 'utf8');
  expect(renderLog).to.contain('done earlier, skipped').and.not.contain('starting');
  expectSameOutputs(outputs(dir), reference);
}
