import { defineCodes } from './spec';

export const CLI_CODES = defineCodes({
  CORL_ERR_CLI_USAGE: {
    cause: 'A command was called with a missing or invalid argument or flag.',
    fix: 'see `corl <command> --help`',
  },
  CORL_ERR_SHARD_ENVIRONMENT: {
    cause:
      '`corl compare --shard auto` found no engine that says which shard this process is (no SLURM_ARRAY_TASK_ID of a Slurm array job, no JOB_COMPLETION_INDEX of a Kubernetes Indexed Job), or found their variables inconsistent: a Slurm job that is not an array, an array that is not one contiguous range, a count that disagrees with --shard auto/<n>, an index past the count, or both engines at once.',
    fix: 'run it as the command of `sbatch --array=0-<n−1>` (`--shard auto`) or of an Indexed Job of n completions (`--shard auto/<n>`); `corl init --slurm --kubernetes` writes both; or give the shard yourself: `--shard k/n`',
  },
  CORL_ERR_IO: {
    cause:
      'A file could not be read or written (permissions, a full disk, a path that is a folder), or a path names a FIFO, a device, a socket or a kernel file (/proc, /sys) where corl reads or writes data: refused at once instead of blocking on it or reading it for ever.',
    fix: 'check the path and free space; files corl writes are replaced atomically, so earlier contents are intact',
  },
});
