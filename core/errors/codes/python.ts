import { defineCodes } from './spec';

export const PYTHON_CODES = defineCodes({
  CORL_ERR_PYTHON_INTERPRETER: {
    cause:
      'The interpreter a Python plugin (`corl:python`) names in its `python` option cannot be started (not found, not executable), or it exited before saying it was ready without a word from the host script (too old a Python: the host needs 3.8 or later).',
    fix: 'set the option `python` to a Python 3.8+ interpreter: a name on PATH (`python3`) or a path (`.venv/bin/python`, relative to the config file); `python3 --version` checks it',
  },
  CORL_ERR_PYTHON_IMPORT: {
    cause:
      "The module a Python plugin names in `module` could not be imported: the file is missing, it has a syntax error, or importing it raised (an ImportError for a package the interpreter lacks, an exception at module level). The message shows the traceback's last line and where it was raised; the whole traceback is on stderr.",
    fix: 'fix the module (`python -c "import <module>"` with the same interpreter reproduces it), install what it imports into that interpreter, or point `module` at the right file (relative to the config file)',
  },
  CORL_ERR_PYTHON_FUNCTION: {
    cause:
      'The module has no callable of the name in the option `function`, or the function requires a parameter corl never passes in this run (the reference, e.g. `solution` or `ground_truth`, in a label-free run).',
    fix: 'name a function the module defines (the message lists them); for a parameter corl does not pass, give it a default or take **kwargs; a reward that needs the reference must set `groundTruth: true` (a supervised run)',
  },
  CORL_ERR_PYTHON_RAISED: {
    cause:
      "The Python reward function raised an exception (SystemExit included). The message shows the traceback's last line and the line of the function that raised; the whole traceback is on stderr. The run stops; what it wrote (metrics, checkpoints) is kept and `corl train --resume` continues once the function is fixed.",
    fix: 'fix the function (the traceback on stderr says where), then continue the run: corl train --resume <run directory>',
  },
  CORL_ERR_PYTHON_OUTPUT: {
    cause:
      'The Python reward function returned something corl cannot use: not a list, not one reward per completion, a value that is not a number (or None, for TRL-style functions), NaN or infinity; a verl-style `compute_score` returned None or a dict without "score"; or a `log_metric`/`log_extra` call had a bad value or length; or two names corl passes collided with a problem metadata key.',
    fix: 'return a list with one finite number (or None to abstain) per completion, in order (verl: one number or {"score": number, ...} per sample); the message says which value is wrong',
  },
  CORL_ERR_PYTHON_EXITED: {
    cause:
      "The Python process ended while corl was waiting for it: a crash (segmentation fault, out of memory), `os._exit`, a signal, or a message on the pipe that was not corl's protocol. The message shows the exit code or signal and the last line the process wrote to stderr.",
    fix: 'run the function on the same inputs outside corl to find the crash; a process killed by SIGKILL often ran out of memory',
  },
  CORL_ERR_PYTHON_TIMEOUT: {
    cause:
      'A Python reward took longer than `timeoutSeconds` to import its module or to answer one batch of calls (an endless loop, a blocked read, a server that never answers). corl kills the process and everything it started; the next call starts a fresh one.',
    fix: 'make the function return (look at what it waits for), or raise `timeoutSeconds` if a batch legitimately takes that long',
  },
});
