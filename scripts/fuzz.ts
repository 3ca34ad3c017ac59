// `npm run fuzz -- --runs N [--seed S]`: the fuzz suite (test/fuzz/) at a larger size or another seed.
// --runs N gives the largest property N cases and scales the others alike (npm test runs them at their
// stated counts, seed 396); --seed S draws other inputs. Exits with mocha's status.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  const v = i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  if (i >= 0 && v === undefined) throw new Error(`${name} needs a value`);
  return v;
}

function positiveInteger(name: string, v: string | undefined): string | undefined {
  if (v !== undefined && !/^[1-9]\d*$/.test(v)) {
    process.stderr.write(`npm run fuzz: expected ${name} to be a positive integer, got "${v}"\n`);
    process.exit(2);
  }
  return v;
}

const args = process.argv.slice(2);
const runs = positiveInteger('--runs', flag(args, '--runs'));
const seed = positiveInteger('--seed', flag(args, '--seed'));
const env = { ...process.env, ...(runs ? { CORL_FUZZ_RUNS: runs } : {}), ...(seed ? { CORL_FUZZ_SEED: seed } : {}) };
const mocha = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
const r = spawnSync(process.execPath, [mocha, '--timeout', '0', 'dist/test/fuzz/**/*.test.js'], {
  cwd: ROOT,
  env,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
