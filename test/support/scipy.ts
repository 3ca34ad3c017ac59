// An independent implementation for numerical tests: Debian's scipy, run through /usr/bin/python3
// (`python3` on PATH may be another Python without it). .ci/run installs python3-scipy; a machine
// without it fails these tests with the command that installs it. scipy is a test oracle only,
// never a dependency of corl.
import { spawnSync } from 'node:child_process';

const PYTHON = process.env.CORL_SCIPY_PYTHON ?? '/usr/bin/python3';

/**
 * Run a Python snippet that reads JSON `input` as the variable `data` and assigns JSON-serializable
 * `out`; returns `out`. numpy and scipy are imported as `np` and `scipy` (with `scipy.stats` as `st`).
 */
export function scipy<T>(code: string, input: unknown): T {
  const program = [
    'import json, sys',
    'import numpy as np, scipy, scipy.stats as st, scipy.special, scipy.integrate',
    'data = json.load(sys.stdin)',
    code,
    'json.dump(out, sys.stdout)',
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', program], { input: JSON.stringify(input), encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : r.stderr;
    throw new Error(
      `the scipy oracle failed (${PYTHON}): ${why.trim().split('\n').slice(-3).join(' ')}; install it with: apt-get install -y python3-scipy (or set CORL_SCIPY_PYTHON to a Python with scipy)`,
    );
  }
  return JSON.parse(r.stdout) as T;
}
