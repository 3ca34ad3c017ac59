// The experiment API as a user gets it: `npm pack` this corl, install the tarball into an empty
// project offline (nothing from the network: npm's cache, in a network namespace without a
// network), compile the script of docs/guide/experiments.md against the installed package's own
// declarations (its typed results are what the compiler checks) and run it on two tiny configs:
// loadConfig, train and compare, no mock, through `import … from 'corl'` resolved by the package's
// `exports`. Slow (one pack, one install of corl's dependencies, a few tiny runs).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';
import { lockedNpmCache } from '../fixtures/npm-cache';
import { pack, sh, userEnv } from '../fixtures/user-shell';

/** The test's own npm cache of the locked versions (test/fixtures/npm-cache.ts says why). */
let cache = '';
/** A command as a user runs it, with onnxruntime-node's download switched off, on that cache. */
const user = (cmd: string, args: string[], cwd: string) =>
  sh(cmd, args, cwd, userEnv({ ONNXRUNTIME_NODE_INSTALL: 'skip', npm_config_cache: cache }));

/** The guide's script: the block marked `<!-- corl:example experiment -->`. */
function guideScript(): string {
  const text = fs.readFileSync(path.join(ROOT, 'docs/guide/experiments.md'), 'utf8');
  const m = /<!-- corl:example experiment -->\s*\n```ts\n([\s\S]*?)\n```/.exec(text);
  expect(m, 'docs/guide/experiments.md has a <!-- corl:example experiment --> block').to.not.equal(null);
  return m![1]!;
}

/** A tiny config over corl/testing's categorical policy: seconds per run. */
function tinyConfig(name: string, reward: string): Record<string, unknown> {
  const problems = (prefix: string) =>
    [
      ['What is 1 + 1?', '2'],
      ['What is 2 + 1?', '3'],
      ['What is 3 + 1?', '4'],
      ['What is 0 + 1?', '1'],
    ].map(([prompt, answer], i) => ({ id: `${prefix}${i}`, prompt, answer }));
  return {
    name,
    seed: 3,
    labelFree: true,
    plugins: ['corl/testing'],
    task: { use: 'corl:inline', options: { train: problems('t'), heldOut: problems('h') } },
    agents: [
      { name: 'a', policy: { use: 'testing:categorical', options: { family: 'family-a' } } },
      { name: 'b', policy: { use: 'testing:categorical', options: { family: 'family-b' } } },
    ],
    topology: reward === 'corl:vote' && name === 'ttrl' ? 'corl:self' : 'corl:ring',
    reward,
    trainer: { steps: 20, batchSize: 4, groupSize: 4, evalEvery: 1, checkpointEvery: 1, sampling: { maxTokens: 1 } },
    eval: { samples: 4, sampling: { temperature: 1, maxTokens: 1 } },
  };
}

describe('e2e: npm pack → install offline → a script runs loadConfig, train and compare from corl', function () {
  this.timeout(0); // packing and installing take what the machine takes
  let tmp: ReturnType<typeof tempDir>;
  before(async () => {
    tmp = tempDir('corl-e2e-api-');
    cache = await lockedNpmCache(path.join(tmp.dir, 'npm-cache'));
  });
  after(() => tmp?.cleanup());

  it("the guide's script compiles against the installed types and trains and compares", () => {
    // The tarball of this build (dist/ is what `npm test` just built; prepack would rebuild it).
    const { tarball } = pack(ROOT, tmp.dir, ['--ignore-scripts']);

    const app = path.join(tmp.dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'app', version: '1.0.0', private: true, allowScripts: { 'onnxruntime-node': false } }),
    );
    // Offline for real: no network at all, npm's cache only.
    const install = user('unshare', ['-n', 'npm', 'install', '--offline', '--no-audit', '--no-fund', tarball], app);
    expect(install.code, install.out).to.equal(0);
    expect(fs.lstatSync(path.join(app, 'node_modules/corl')).isSymbolicLink(), 'a real install').to.equal(false);

    for (const [name, reward] of [
      ['co-rl', 'corl:vote'],
      ['ttrl', 'corl:vote'],
    ] as const)
      fs.writeFileSync(path.join(app, `${name}.json`), JSON.stringify(tinyConfig(name, reward), null, 2));
    fs.writeFileSync(path.join(app, 'experiment.ts'), guideScript());

    // Compiled against node_modules/corl's declarations, resolved through its package.json exports.
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const types = path.join(ROOT, 'node_modules/@types');
    const compile = user(
      process.execPath,
      [
        tsc,
        'experiment.ts',
        '--strict',
        '--noUncheckedIndexedAccess',
        '--module',
        'node20',
        '--moduleResolution',
        'node16',
        '--target',
        'es2022',
        '--skipLibCheck',
        '--typeRoots',
        types,
        '--types',
        'node',
      ],
      app,
    );
    expect(compile.code, compile.out).to.equal(0);

    const run = user(process.execPath, ['experiment.js'], app);
    expect(run.code, run.out).to.equal(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).to.equal('co-rl: 2 agents, 2 steps');
    expect(lines[1]).to.match(/^a: pass@1 [\d.]+ -> [\d.]+$/);
    expect(lines[2]).to.match(/^b: pass@1 [\d.]+ -> [\d.]+$/);
    expect(lines[3]).to.match(/^agent 0 rewards by step: [\d.]+ [\d.]+$/);
    expect(lines[4]).to.match(/^ttrl: pass@1 [\d.]+ over 2 seeds$/);
    expect(lines[5]).to.match(/^co-rl: pass@1 [\d.]+ over 2 seeds$/);
    expect(lines[6]).to.match(/^co-rl - ttrl: -?[\d.]+ points, (ahead|behind|equivalent|inconclusive)$/);
    expect(lines).to.have.length(7);

    // What the script printed is what the run and the comparison wrote.
    const metrics = fs
      .readFileSync(path.join(app, 'runs/co-rl/metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const rewards = metrics.filter((m) => m.phase === 'train' && m.agent === 0).map((m) => m.metrics['reward/mean']);
    expect(lines[3]).to.equal(`agent 0 rewards by step: ${rewards.join(' ')}`);
    expect(fs.existsSync(path.join(app, 'runs/co-rl/report.html'))).to.equal(true);
    const rows = JSON.parse(fs.readFileSync(path.join(app, 'runs/cmp/results.json'), 'utf8'));
    expect(lines[4]).to.equal(`ttrl: pass@1 ${rows[0].average.mean} over 2 seeds`);
    expect(fs.readdirSync(path.join(app, 'runs/cmp/co-rl')).sort()).to.deep.equal(['seed-0', 'seed-1']);
  });
});
