import { defineCodes } from './spec';

export const RUN_CODES = defineCodes({
  CORL_ERR_RUN_EXISTS: {
    cause: '`corl train --out DIR` points at a folder that already holds a run.',
    fix: 'choose another --out, or continue that run with `corl train --resume DIR`',
  },
  CORL_ERR_RUN_NOT_FOUND: {
    cause: '`--resume DIR` points at a folder that is not a corl run (no state.json or config.json).',
    fix: 'give the run directory that `corl train` printed when it started',
  },
  CORL_ERR_RUN_CORRUPT: {
    cause: "A run directory's state.json, config.json or metrics.jsonl is unreadable or inconsistent.",
    fix: 'resume from an intact copy, or start a new run; nothing was changed in the folder',
  },
  CORL_ERR_RUN_OUT_FOREIGN: {
    cause:
      "`--out` names a folder where a file corl would write (config.json, report.html, metrics.jsonl, ...) already exists and corl did not write it, or where the run's files would replace the config being read.",
    fix: 'give --out a new folder (e.g. runs/<name>); corl never overwrites a file it did not write',
  },
  CORL_ERR_RUN_LOCKED: {
    cause:
      "Another corl process (named with its pid, host and start time) holds the folder's lock file `corl.lock`: one writer at a time. Also raised for a damaged lock file.",
    fix: 'wait for that process or stop it; a lock whose process has ended is taken over by the next run, and one of another host whose corl has ended may be deleted',
  },
  CORL_ERR_RUN_MISMATCH: {
    cause: 'A resume was asked with a config that differs from the one the run started with.',
    fix: "resume without -c (the run's own config.json is used), or start a new run for the new config",
  },
  CORL_ERR_RUN_AGENT_FAILED: {
    cause:
      'A policy, reward source or other plugin threw during a training step. Metrics and checkpoints written before the failure are intact.',
    fix: 'read the underlying error; after fixing it, `corl train --resume DIR` continues from the last checkpoint',
  },
  CORL_ERR_RUN_SEALED: {
    cause:
      "A planned run's evaluations are sealed with its comparison's key (seal.key in the comparison folder), and the key is missing or damaged: a run folder copied out of its comparison, or a seal.key edited or deleted. Also raised when a reader other than a comparison's report (`corl agreement`, say) is given a sealed file, and when `corl eval` (or `evaluate`) would evaluate a config's own split from a planned run (its config.json, or a checkpoint an option names inside it) before the plan's look opened that run: that would recompute its sealed held-out results without counting a read.",
    fix: "read the run inside its comparison folder (corl report <comparison>), or restore seal.key from a copy of that folder; a copy must take the whole comparison folder. For `corl eval`: wait for the plan's look (after it the run's checkpoints may be evaluated), or evaluate on another benchmark with `--data`",
  },
  CORL_ERR_RUN_SINK: {
    cause:
      "A metrics sink of the config failed when the run started or while it wrote a record (its own error, uncoded: a folder it cannot create, a full disk). The run's metrics.jsonl and checkpoints written before are intact.",
    fix: "fix what the underlying error names (usually the sink's path), then `corl train --resume DIR` continues from the last checkpoint",
  },
});
