// The real `corl serve` as a child process, Python drivers as child processes, and the expected
// rewards of a ring computed by hand: shared by the integration tests of the Python adapters.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Rng } from '../../core/util/rng';
import { ROOT } from '../../scripts/generate';

export const INTEGRATIONS = path.join(ROOT, 'docs', 'integrations');
export const PY = path.join(ROOT, 'test', 'integrations', 'py');

/**
 * The interpreter the drivers run with: Debian's python3 (numpy and aiohttp stand in for the
 * trainers' tensors and HTTP client; the adapters themselves import only the standard library).
 */
export const PYTHON =
  process.env.CORL_TEST_PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/** Throws, saying what to install, unless the driver's interpreter has numpy and aiohttp. */
export function checkPython(): void {
  const r = spawnSync(PYTHON, ['-c', 'import numpy, aiohttp, sys; print(sys.version_info[0])'], { encoding: 'utf8' });
  if (r.error || r.status !== 0 || r.stdout.trim() !== '3') {
    throw new Error(
      `expected ${PYTHON} with numpy and aiohttp for the trainer integration tests, got ${r.error ? r.error.message : `exit ${r.status}: ${r.stderr.trim().split('\n').pop()}`}; on Debian or Ubuntu: apt-get install -y python3-numpy python3-aiohttp (or set CORL_TEST_PYTHON)`,
    );
  }
}

/** A running `corl serve` child process. */
export interface Service {
  readonly url: string;
  readonly proc: ChildProcess;
  /** Send a signal and wait for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `node bin/corl.js serve -c <config> --port 0 [--journal <file>]`, resolved once it listens. */
export function startService(config: string, journal?: string, cwd = ROOT): Promise<Service> {
  const args = [path.join(ROOT, 'bin', 'corl.js'), 'serve', '-c', config, '--port', '0'];
  if (journal) args.push('--journal', journal);
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
  let out = '';
  let err = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      err += d;
    });
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m)
        resolve({
          url: m[1]!,
          proc,
          stop: (signal = 'SIGTERM') => {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            return exited;
          },
        });
    });
    proc.once('exit', (code) => reject(new Error(`corl serve exited (${code}) before listening:\n${out}\n${err}`)));
  });
}

/**
 * How a driver finds the adapter it drives, never through docs/integrations on a path:
 * - `file` (default): `python3 -I` (no PYTHONPATH, no user site, not even the script's own folder on
 *   sys.path); the driver loads the adapter by file path, as verl and OpenRLHF do.
 * - `{ userScript: [files] }`: the driver and its stand-ins run as a user's training script from a
 *   fresh folder of `dir` holding copies of those adapter files alone (`python3 -E -s`: the script's
 *   folder is on sys.path, as for any script; no PYTHONPATH, no user site), as a TRL user imports it.
 * - `{ pythonPath: [files] }`: `python3 -s` with PYTHONPATH set to a fresh folder of `dir` holding
 *   copies of those adapter files alone, as slime's import_module finds a module on the job's path.
 */
export type Loading = 'file' | { readonly userScript: readonly string[] } | { readonly pythonPath: readonly string[] };

/** A fresh folder of `dir` named `name` holding copies of `files` of docs/integrations (nothing else). */
function adapterFolder(dir: string, name: string, files: readonly string[]): string {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder, { recursive: true });
  for (const f of files) fs.copyFileSync(path.join(INTEGRATIONS, f), path.join(folder, f));
  return folder;
}

/** Run `script` (in test/integrations/py) on a job written to `dir`; resolves with its JSON output. */
export function python(
  script: string,
  job: Record<string, unknown>,
  dir: string,
  name: string,
  env: Record<string, string> = {},
  loading: Loading = 'file',
): Promise<any> {
  const file = path.join(dir, `${name}.job.json`);
  fs.writeFileSync(file, JSON.stringify({ integrations: INTEGRATIONS, ...job }));
  const childEnv: Record<string, string | undefined> = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env };
  delete childEnv.PYTHONPATH;
  // -B: no __pycache__ in docs/integrations or the test tree (-I and -E ignore PYTHONDONTWRITEBYTECODE).
  let args: string[];
  if (loading === 'file') args = ['-I', '-B', path.join(PY, script), file];
  else if ('userScript' in loading) {
    const folder = adapterFolder(dir, `${name}-user`, loading.userScript);
    for (const f of [script, 'stand_ins.py']) fs.copyFileSync(path.join(PY, f), path.join(folder, f));
    args = ['-E', '-s', '-B', path.join(folder, script), file];
  } else {
    childEnv.PYTHONPATH = adapterFolder(dir, `${name}-path`, loading.pythonPath);
    args = ['-s', '-B', path.join(PY, script), file];
  }
  return new Promise((resolve, reject) => {
    const p = spawn(PYTHON, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      err += d;
    });
    p.once('error', (e) => reject(new Error(`expected to run ${PYTHON}, got ${e.message}`)));
    p.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${PYTHON} ${script} (${name}) exited with ${code}:\n${err}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`${name}: expected JSON, got ${out.slice(0, 300)}\n${err}`));
      }
    });
  });
}

/** A series of GET /metrics, undefined when absent. */
export async function metric(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * The config verl reads to use the shipped CorlRewardManager (its Hydra keys: the manager loaded by
 * file path, `source: importlib`), with the adapter's `corl` keyword arguments and K samples per
 * prompt. `moduleName` is verl's optional `module.name`; null leaves it out (verl then names the
 * module by a hash of its path).
 */
export function verlRewardConfig(
  corl: Record<string, unknown>,
  K: number,
  moduleName: string | null = 'custom_reward_manager',
): Record<string, unknown> {
  const file = path.join(INTEGRATIONS, 'verl_reward_loop.py');
  return {
    reward: {
      reward_manager: {
        source: 'importlib',
        name: 'CorlRewardManager',
        module: moduleName === null ? { path: file } : { path: file, name: moduleName },
      },
      reward_kwargs: { corl },
    },
    actor_rollout_ref: { rollout: { n: K, response_length: 64 } },
  };
}

// -- data: completions of space-separated words whose only number is the boxed answer -----------------

const WORDS = 'let us read the problem again carefully and set up the equation then simplify both sides'.split(' ');

/** The vocabulary every completion and prompt below is made of (the stand-in tokenizer's). */
export function vocabulary(extra: readonly string[] = []): string[] {
  const answers = ['1', '2', '3', '4', '5', '6', '7'].map((a) => `$\\boxed{${a}}$.`);
  const prompts = ['Problem', 'find', 'it.', 'q0:', 'q1:', 'q2:'];
  return [...new Set([...WORDS, 'so', 'answer', 'is', 'I', 'stop', 'here.', ...prompts, ...answers, ...extra])];
}

/** A completion with `words` filler words, ending on the boxed answer (null: no answer). */
export function completion(rng: Rng, answer: string | null, words = 4 + rng.int(12)): string {
  const filler = Array.from({ length: words }, () => WORDS[rng.int(WORDS.length)]!);
  // No answer: no "answer is" either (the extractor would take the words after it).
  return [
    ...filler,
    ...(answer === null ? ['so', 'I', 'stop', 'here.'] : ['so', 'answer', 'is', `$\\boxed{${answer}}$.`]),
  ].join(' ');
}

/** The answer a completion text carries, as the extractor reads it (null: none). */
export function keyOf(text: string): string | null {
  return /\\boxed\{(\d+)\}/.exec(text)?.[1] ?? null;
}

/** K answers from a small alphabet with some missing, so votes split and ties happen. */
export function answers(rng: Rng, K: number): (string | null)[] {
  return Array.from({ length: K }, () => {
    const u = rng.int(10);
    return u === 0 ? null : String(1 + (u % 3));
  });
}

/**
 * The label corl serves for a group: completions in text order (code units), plurality over the
 * non-null answers, ties to the first seen in that order.
 */
export function servedLabel(texts: readonly string[], keys: readonly (string | null)[]): string | null {
  const order = texts.map((_, i) => i).sort((i, j) => (texts[i]! < texts[j]! ? -1 : texts[i]! > texts[j]! ? 1 : i - j));
  const counts = new Map<string, number>();
  for (const i of order) {
    const k = keys[i];
    if (k !== null && k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  let best: string | null = null;
  let n = 0;
  for (const [k, c] of counts)
    if (c > n) {
      best = k;
      n = c;
    }
  return best;
}

/** A two-agent ring serve config with `reward` and the given serve settings. */
export function ringConfig(
  reward: unknown,
  serve: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name: 'trainers-ring',
    agents: [{ name: 'agent-0' }, { name: 'agent-1' }],
    topology: 'corl:ring',
    reward,
    serve: { port: 0, ...serve },
    ...extra,
  };
}

/** Deterministic shuffle of 0..n-1. */
export function shuffled(n: number, seed: number): number[] {
  const rng = new Rng(seed);
  const xs = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}
