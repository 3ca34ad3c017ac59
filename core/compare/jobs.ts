// The job files of a sweep on a cluster (`corl init --slurm`, `--kubernetes`): a comparison's shards
// as one Slurm array job with the render step as a job that starts once every shard succeeded, and
// as one Kubernetes Indexed Job followed by a render Job. Each shard runs `corl compare … --shard
// auto` (Slurm: index and count from the array task) or `--shard auto/<n>` (Kubernetes: index from
// JOB_COMPLETION_INDEX); a requeued or replaced shard finds its seeds' locks and resumes or skips.
import { CorlError } from '../errors';

/** What a sweep's job files run. */
export interface JobOptions {
  /** Config files, relative to the project folder. */
  readonly configs: readonly string[];
  /** Seeds per config. */
  readonly seeds: number;
  /** Shards: array tasks (Slurm) or completions (Kubernetes). */
  readonly shards: number;
  /** The comparison folder, relative to the project folder. */
  readonly out: string;
  /** Job name (Slurm's --job-name, the Kubernetes Jobs' name prefix). */
  readonly name: string;
}

/** One job file: its path relative to the project folder, its text, whether it is executable. */
export interface JobFile {
  readonly path: string;
  readonly text: string;
  readonly executable: boolean;
}

/** The job files' paths, per engine. */
export const SLURM_FILES = ['slurm/compare.sbatch', 'slurm/render.sbatch', 'slurm/submit.sh'] as const;
export const KUBERNETES_FILES = [
  'kubernetes/compare-job.yaml',
  'kubernetes/render-job.yaml',
  'kubernetes/submit.sh',
] as const;

const SAFE = /^[A-Za-z0-9._/-]+$/;

/** Check what goes into shell lines and manifests: plain relative paths and names only. */
export function checkJobOptions(o: JobOptions): void {
  for (const [what, v] of [...o.configs.map((c) => ['a config', c] as const), ['--out', o.out] as const])
    if (!SAFE.test(v) || v.startsWith('/') || v.split('/').includes('..'))
      throw new CorlError('CORL_ERR_CLI_USAGE', `expected ${what} as a plain path inside the project, got "${v}"`, {
        where: what === '--out' ? '--out' : '<configs>',
        hint: 'letters, digits, . _ - and / only, relative to the project folder',
      });
  if (!/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/.test(o.name))
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected a job name of lower-case letters, digits and -, got "${o.name}"`,
      {
        where: '--job-name',
        hint: 'Kubernetes names allow a-z, 0-9 and - (at most 42 here), starting and ending with a letter or digit',
      },
    );
  if (!Number.isSafeInteger(o.shards) || o.shards < 1 || !Number.isSafeInteger(o.seeds) || o.shards > o.seeds)
    throw new CorlError(
      'CORL_ERR_CLI_USAGE',
      `expected between 1 and --seeds (${o.seeds}) shards, got ${o.shards}: a shard holds whole seeds`,
      { where: '--shards', hint: `give --shards ${Math.max(1, Math.min(o.seeds, 2))}, or more seeds` },
    );
}

/** The `corl compare` arguments every job runs (the shards add --shard). */
function compareArgs(o: JobOptions): string[] {
  return ['compare', ...o.configs, '--seeds', String(o.seeds), '--out', o.out, '--progress', 'lines'];
}

const CHECK_NODE = `command -v node >/dev/null || { echo "corl: node is not on PATH on $(hostname): load Node 20 there (module load nodejs, or install it)" >&2; exit 1; }
CORL="\${CORL:-node_modules/.bin/corl}"   # the project's corl (npm install); set CORL to use another
[ -x "$CORL" ] || { echo "corl: $CORL not found in $(pwd): run npm install in the project folder first" >&2; exit 1; }`;

/** The Slurm array job, its render job and the script that submits both. */
export function slurmFiles(o: JobOptions): JobFile[] {
  checkJobOptions(o);
  const args = compareArgs(o).join(' ');
  // One batch script: what it is, its #SBATCH directives, then the checks every job makes and its corl command.
  const sbatch = (what: string, directives: readonly string[], run: string): string =>
    `#!/bin/bash
# Written by corl init --slurm: ${what}
# Submit the sweep with: bash slurm/submit.sh   (extra arguments go to both sbatch calls)
${directives.map((d) => `#SBATCH ${d}`).join('\n')}
set -euo pipefail
cd "\${SLURM_SUBMIT_DIR:-.}"
${CHECK_NODE}
exec "$CORL" ${run}
`;
  return [
    {
      path: 'slurm/compare.sbatch',
      executable: true,
      text: sbatch(
        `the comparison's shards, one per task of an array job. Each task runs
# corl compare --shard auto, which takes its shard from SLURM_ARRAY_TASK_ID and the count from the
# array (so --array=0-<n−1> alone sets the shards). A requeued task (scontrol requeue, a node
# failure with --requeue) resumes its seeds from their last checkpoint; a duplicate skips seeds
# another task holds; a finished seed is skipped.`,
        [
          `--job-name=${o.name}`,
          `--array=0-${o.shards - 1}`,
          '--cpus-per-task=2',
          '--output=runs/slurm/%x-%A_%a.out',
          '--open-mode=append',
          '--requeue',
        ],
        `${args} --shard auto`,
      ),
    },
    {
      path: 'slurm/render.sbatch',
      executable: true,
      text: sbatch(
        `the render step: the same comparison without --shard, queued by
# submit.sh to start once every shard succeeded (--dependency=afterok). It finds every run
# finished (waiting for, or resuming, any a shard left), then writes the table, the verdicts and
# ${o.out}/report.html.`,
        [`--job-name=${o.name}-render`, '--cpus-per-task=2', '--output=runs/slurm/%x-%j.out', '--open-mode=append'],
        args,
      ),
    },
    {
      path: 'slurm/submit.sh',
      executable: true,
      text: `#!/bin/bash
# Written by corl init --slurm: submit the comparison's shards as one array job, then the render
# step, which Slurm starts only once every shard succeeded (--dependency=afterok).
#   bash slurm/submit.sh                    # or: bash slurm/submit.sh --partition=cpu --time=12:00:00
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p runs/slurm
shards=$(sbatch --parsable "$@" slurm/compare.sbatch)
shards=\${shards%%;*}
render=$(sbatch --parsable "$@" --dependency=afterok:"$shards" --kill-on-invalid-dep=yes slurm/render.sbatch)
render=\${render%%;*}
echo "shards: array job $shards; render: job $render, after every shard succeeded"
echo "watch: squeue -j $shards,$render   logs: runs/slurm/   report: ${o.out}/report.html"
`,
    },
  ];
}

/** The container of a Kubernetes job: the project folder, installed, on the volume claimed as `<name>-lab`. */
function container(o: JobOptions, args: readonly string[]): string {
  return `      containers:
        - name: corl
          image: node:20-bookworm
          workingDir: /lab
          command: ${JSON.stringify(['node_modules/.bin/corl', ...args])}
          resources:
            requests:
              cpu: "2"
          volumeMounts:
            - name: lab
              mountPath: /lab
      volumes:
        - name: lab
          persistentVolumeClaim:
            claimName: ${o.name}-lab`;
}

/** One Job manifest: what it is, its name `<name>-<suffix>`, its spec's counts, and its pod running `corl <args>`. */
function job(o: JobOptions, what: string, suffix: string, spec: readonly string[], args: readonly string[]): string {
  return `${what}
# The project folder, installed (npm install on linux x64, so node_modules/.bin/corl runs in
# the node:20 image), is on a ReadWriteMany volume claimed as ${o.name}-lab, mounted at /lab.
apiVersion: batch/v1
kind: Job
metadata:
  name: ${o.name}-${suffix}
  labels:
    app.kubernetes.io/name: corl
spec:
${spec.map((line) => `  ${line}`).join('\n')}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: corl
    spec:
      restartPolicy: Never
${container(o, args)}
`;
}

/** The Indexed Job of the shards, the render Job and the script that applies one after the other. */
export function kubernetesFiles(o: JobOptions): JobFile[] {
  checkJobOptions(o);
  const args = compareArgs(o);
  return [
    {
      path: 'kubernetes/compare-job.yaml',
      executable: false,
      text: job(
        o,
        `# Written by corl init --kubernetes: the comparison's shards as one Indexed Job. Pod i runs
# corl compare --shard auto/${o.shards}, which takes its shard from JOB_COMPLETION_INDEX (i, set by
# Kubernetes); "completions" and the n of auto/<n> must stay equal. A replaced pod resumes its
# seeds from their last checkpoint (the old pod's lock is taken over once its heartbeat stops, a
# minute on); a finished seed is skipped. Apply with: bash kubernetes/submit.sh`,
        'shards',
        [
          'completionMode: Indexed',
          `completions: ${o.shards}`,
          `parallelism: ${o.shards}`,
          `backoffLimit: ${2 * o.shards}`,
        ],
        [...args, '--shard', `auto/${o.shards}`],
      ),
    },
    {
      path: 'kubernetes/render-job.yaml',
      executable: false,
      text: job(
        o,
        `# Written by corl init --kubernetes: the render step, the same comparison without --shard, applied
# by kubernetes/submit.sh once the shards' Job is complete. It finds every run finished (waiting
# for, or resuming, any a shard left), then writes the table, the verdicts and ${o.out}/report.html.`,
        'render',
        ['completions: 1', 'parallelism: 1', 'backoffLimit: 2'],
        args,
      ),
    },
    {
      path: 'kubernetes/submit.sh',
      executable: true,
      text: `#!/bin/bash
# Written by corl init --kubernetes: apply the shards' Indexed Job, wait until it is complete, then
# apply the render Job. Extra arguments (-n <namespace>, --context …) go to every kubectl call.
#   bash kubernetes/submit.sh               # or: bash kubernetes/submit.sh -n research
set -euo pipefail
cd "$(dirname "$0")/.."
kubectl apply "$@" -f kubernetes/compare-job.yaml
while :; do
  state=$(kubectl get "$@" job/${o.name}-shards -o jsonpath='{.status.conditions[?(@.status=="True")].type}')
  case "$state" in
    *Complete*) break ;;
    *Failed*) echo "corl: job ${o.name}-shards failed: kubectl logs $* job/${o.name}-shards" >&2; exit 1 ;;
  esac
  sleep 10
done
kubectl apply "$@" -f kubernetes/render-job.yaml
kubectl wait "$@" --for=condition=complete --timeout=-1s job/${o.name}-render
echo "report: ${o.out}/report.html on the volume ${o.name}-lab"
`,
    },
  ];
}
