// The five-minute path, for real: the create-corl-plugin binary generates a reward plugin (and a
// judge) into a temporary folder, `npm install` links it to this corl offline, `npm test` builds it
// and passes its tests, and `npm run train` (corl train) picks it up from the config's `plugins` list.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';
import { lockedNpmCache } from '../fixtures/npm-cache';

const BIN = path.join(ROOT, 'bin/create-corl-plugin.js');
const NPM_FLAGS = ['--offline', '--no-audit', '--no-fund', '--loglevel=error'];

/** The test's own npm cache of the locked versions, for the offline installs (test/fixtures/npm-cache.ts says why). */
let cache: string | undefined;

function sh(cmd: string, args: string[], cwd: string): { code: number; out: string; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      FORCE_COLOR: '0',
      npm_config_update_notifier: 'false',
      ...(cache ? { npm_config_cache: cache } : {}),
    },
  });
  return { code: r.status ?? -1, out: `${r.stdout}\n${r.stderr}`, stdout: r.stdout, stderr: r.stderr };
}
const npm = (args: string[], cwd: string) => sh('npm', args, cwd);
const create = (args: string[], cwd: string) => sh(process.execPath, [BIN, ...args], cwd);

/**
 * A generated package as its author runs it: `npm install` offline, `npm test` (its contract suite
 * must pass under `contract`'s title) and `npm run train` (a label-free run of 20 steps). Returns the
 * run's resolved config and its train-phase metric rows.
 */
function installTestTrain(dir: string, contract: string): { config: any; train: any[] } {
  const install = npm(['install', ...NPM_FLAGS], dir);
  expect(install.code, install.out).to.equal(0);
  const test = npm(['test'], dir);
  expect(test.code, test.out).to.equal(0);
  expect(test.stdout)
    .to.contain(contract)
    .and.match(/\d+ passing/)
    .and.not.match(/failing/);
  const run = npm(['run', 'train', '--', '--out', 'runs/e2e', '-q'], dir);
  expect(run.code, run.out).to.equal(0);
  expect(run.stdout).to.contain('label-free run: 20 step(s)');
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'runs/e2e/config.json'), 'utf8'));
  const train = fs
    .readFileSync(path.join(dir, 'runs/e2e/metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((m) => m.phase === 'train');
  return { config, train };
}

describe('e2e: create-corl-plugin → npm install → npm test → corl train', function () {
  this.timeout(300000);
  let tmp: ReturnType<typeof tempDir>;
  before(async () => {
    tmp = tempDir('corl-e2e-create-');
    cache = await lockedNpmCache(path.join(tmp.dir, 'npm-cache'));
  });
  after(() => tmp.cleanup());

  it('generates a reward plugin that installs offline, builds, passes its tests and trains', () => {
    const made = create(['lab-agree', '--kind', 'reward', '--name', 'lab:agree'], tmp.dir);
    expect(made.code, made.out).to.equal(0);
    expect(made.stdout)
      .to.contain('a reward plugin "lab:agree"')
      .and.contain('next:\n  cd lab-agree\n  npm install\n  npm test\n  npm run train');
    const dir = path.join(tmp.dir, 'lab-agree');

    const { config, train } = installTestTrain(dir, 'lab:agree satisfies the reward contract');
    expect(fs.realpathSync(path.join(dir, 'node_modules/corl'))).to.equal(fs.realpathSync(ROOT));
    expect(JSON.stringify(config)).to.contain('"lab:agree"');
    expect(
      train.some((m) => m.metrics['agreement/mean_reward'] !== undefined),
      'rewards came from the generated plugin',
    ).to.equal(true);
  });

  it('generates a judge plugin that installs offline, passes its tests and judges a corl:comas run', () => {
    const made = create(['lab-steps', '--kind', 'judge', '--name', 'lab:steps'], tmp.dir);
    expect(made.code, made.out).to.equal(0);
    expect(made.stdout).to.contain('a judge plugin "lab:steps"');
    const dir = path.join(tmp.dir, 'lab-steps');
    expect(fs.readFileSync(path.join(dir, 'src/step-check.ts'), 'utf8'))
      .to.contain("name: 'lab:steps'")
      .and.contain('export const stepsJudge = definePlugin(');

    const { config, train: train1 } = installTestTrain(dir, 'lab:steps satisfies the judge contract');
    expect(config.interaction.options.judge.use).to.equal('lab:steps');
    expect(train1.length).to.equal(40);
    expect(
      train1.every((m) => m.metrics['judge/verdicts'] > 0),
      'every step judged through the generated plugin',
    ).to.equal(true);
  });

  it('refuses a non-empty folder, an unknown kind and a bad name with coded errors, writing nothing', () => {
    fs.mkdirSync(path.join(tmp.dir, 'busy'));
    fs.writeFileSync(path.join(tmp.dir, 'busy/keep.txt'), 'mine');
    const busy = create(['busy', '--kind', 'task'], tmp.dir);
    expect(busy.code).to.equal(1);
    expect(busy.stderr).to.contain('CORL_ERR_SCAFFOLD_TARGET').and.contain('--force');
    expect(fs.readdirSync(path.join(tmp.dir, 'busy'))).to.deep.equal(['keep.txt']);
    const kind = create(['k', '--kind', 'rewards'], tmp.dir);
    expect(kind.code).to.equal(1);
    expect(kind.stderr)
      .to.contain('CORL_ERR_SCAFFOLD_KIND')
      .and.contain('reward, topology, diversity, extractor, policy, task, interaction, judge');
    const noKind = create(['k'], tmp.dir); // not a terminal: no prompt, so the kind is required
    expect(noKind.code).to.equal(1);
    expect(noKind.stderr).to.contain('CORL_ERR_SCAFFOLD_KIND');
    const name = create(['n', '--kind', 'reward', '--name', 'Lab Agree'], tmp.dir);
    expect(name.code).to.equal(1);
    expect(name.stderr).to.contain('CORL_ERR_SCAFFOLD_NAME').and.contain('scope:name');
    const usage = create([], tmp.dir);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.contain('CORL_ERR_CLI_USAGE');
    for (const d of ['k', 'n']) expect(fs.existsSync(path.join(tmp.dir, d)), d).to.equal(false);
  });

  it('with corl installed in a project: npx create-corl-plugin, npm exec --package=corl, and npm init corl-plugin', () => {
    const proj = path.join(tmp.dir, 'project');
    fs.mkdirSync(proj);
    fs.writeFileSync(
      path.join(proj, 'package.json'),
      JSON.stringify({
        name: 'project',
        version: '1.0.0',
        private: true,
        devDependencies: {
          corl: `file:${ROOT}`,
          'create-corl-plugin': `file:${path.join(ROOT, 'packages/create-corl-plugin')}`,
        },
      }),
    );
    const install = npm(['install', ...NPM_FLAGS], proj);
    expect(install.code, install.out).to.equal(0);
    const viaNpx = npm(['exec', '--offline', '--', 'create-corl-plugin', 'p1', '--kind', 'task'], proj);
    expect(viaNpx.code, viaNpx.out).to.equal(0);
    const viaPackage = npm(
      ['exec', '--offline', '--package=corl', '--', 'create-corl-plugin', 'p2', '--kind', 'topology'],
      proj,
    );
    expect(viaPackage.code, viaPackage.out).to.equal(0);
    const viaInit = npm(
      ['init', '--offline', 'corl-plugin', 'p3', '--', '--kind', 'diversity', '--name', 'lab:views'],
      proj,
    );
    expect(viaInit.code, viaInit.out).to.equal(0);
    expect(JSON.parse(fs.readFileSync(path.join(proj, 'p1/package.json'), 'utf8')).name).to.equal('p1');
    expect(fs.readFileSync(path.join(proj, 'p2/src/previous-peers.ts'), 'utf8')).to.contain("name: 'local:p2'");
    expect(fs.readFileSync(path.join(proj, 'p3/src/instructions.ts'), 'utf8')).to.contain("name: 'lab:views'");
  });
});
