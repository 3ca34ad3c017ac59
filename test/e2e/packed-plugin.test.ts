// A new user's path with the published package, not the checkout: `npm pack` this corl (its prepack
// rebuilds dist/ in place from the same sources), install the tarball into a fresh project outside
// the checkout, run the create-corl-plugin that came with it, then install, test and train the
// generated plugin, and install and test a judge plugin generated the same way. Nothing is copied or
// linked by hand: npm resolves everything, from its cache where it can (--prefer-offline). The
// environment of every command is stripped of what `npm test` and this checkout add (npm_* settings,
// onnxruntime switches, the checkout's node_modules/.bin), so the repository's own .npmrc cannot help. Slow (one pack, three installs of corl's dependencies).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { needsNpmrc } from '../../core/scaffold/scaffold';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';
import { pack, sh, userEnv } from '../fixtures/user-shell';

const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];

describe('e2e: npm pack → install the tarball → npx create-corl-plugin → npm install, test, train', function () {
  this.timeout(0); // packing, installing and compiling take what the machine takes
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-e2e-packed-');
  });
  after(() => tmp?.cleanup());

  it('the tarball ships the runtime, templates and docs but no tests or dev output, and a plugin made from it trains', () => {
    // npm pack in the checkout, as a release would (prepack empties and rebuilds dist/).
    const { tarball, files: shipped } = pack(ROOT, tmp.dir);
    expect(shipped).to.include.members([
      'package.json',
      'bin/corl.js',
      'bin/create-corl-plugin.js',
      'dist/entry/index.js',
      'dist/entry/testing.js',
      'templates/reward/package.json',
      'templates/judge/package.json',
      'templates/judge/comas-arith.config.json',
      'schema/corl.schema.json',
      'docs/guide/writing-a-reward-plugin.md',
      'docs/guide/writing-a-judge.md',
      'plugins/rewards/python/host.py', // the Python side of corl:python, run by the installed package
    ]);
    const dev = shipped.filter(
      (f) =>
        (f !== 'plugins/rewards/python/host.py' &&
          /^(dist\/(test|scripts|bench)|test|scripts|bench|core|plugins|entry)\//.test(f)) ||
        /\.(map|tsbuildinfo)$/.test(f) ||
        /^templates\/[^/]+\/(node_modules|dist|runs)\//.test(f) ||
        /(^|\/)\.npmrc$/.test(f),
    );
    expect(dev, 'tests, sources, build maps and template build output stay out of the package').to.deep.equal([]);
    expect(fs.existsSync(tarball)).to.equal(true);

    // A project of the user's that installs corl from the tarball. allowScripts keeps onnxruntime-node
    // from downloading CUDA libraries (the docs' advice; an npm that ignores it needs the env switch).
    const app = path.join(tmp.dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'app', version: '1.0.0', private: true, allowScripts: { 'onnxruntime-node': false } }),
    );
    const npmVersion = sh('npm', ['--version'], app).stdout.trim();
    const oldNpm = needsNpmrc(npmVersion);
    const appEnv = { ...userEnv(), ...(oldNpm ? { ONNXRUNTIME_NODE_INSTALL: 'skip' } : {}) };
    const installApp = sh('npm', ['install', ...NPM_FLAGS, tarball], app, appEnv);
    expect(installApp.code, installApp.out).to.equal(0);
    expect(fs.lstatSync(path.join(app, 'node_modules/corl')).isSymbolicLink(), 'a real install').to.equal(false);

    // `corl init` from the tarball in an empty folder, as getting-started puts first: npx installs corl
    // into its own cache (the docs' ONNXRUNTIME_NODE_INSTALL=skip covers that one install), then the
    // project installs with nothing but what init wrote, in a network namespace with no network at
    // all: onnxruntime-node's CUDA download would fail there (ENOTFOUND), so it must not run.
    const lab = path.join(tmp.dir, 'lab');
    fs.mkdirSync(lab);
    const init = sh('npx', ['--yes', '--prefer-offline', `--package=${tarball}`, 'corl', 'init'], lab, {
      ...userEnv(),
      ONNXRUNTIME_NODE_INSTALL: 'skip',
    });
    expect(init.code, init.out).to.equal(0);
    const labPkg = JSON.parse(fs.readFileSync(path.join(lab, 'package.json'), 'utf8'));
    expect(labPkg.dependencies.corl, 'the one rule create-corl-plugin follows too').to.equal(`file:${tarball}`);
    expect(labPkg.allowScripts).to.deep.equal({ 'onnxruntime-node': false });
    const offline = sh('unshare', ['-n', 'npm', 'install', '--offline', '--no-audit', '--no-fund'], lab);
    expect(offline.code, offline.out).to.equal(0);
    expect(offline.out).to.not.match(/ENOTFOUND|nuget/i);
    expect(
      fs.existsSync(
        path.join(lab, 'node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so'),
      ),
    ).to.equal(false);
    // The configs train where they are, and in a copy of the folder elsewhere (no relative path into corl).
    const copy = path.join(tmp.dir, 'elsewhere', 'lab-copy');
    fs.cpSync(lab, copy, { recursive: true, verbatimSymlinks: true });
    for (const where of [lab, copy]) {
      const v = sh('npx', ['corl', 'validate', 'configs/co-rl.json'], where);
      expect(v.code, v.out).to.equal(0);
      expect(v.stdout).to.contain('plugins created');
    }
    const labTrain = sh(
      'npx',
      ['corl', 'train', 'configs/co-rl.json', '--steps', '1', '--out', 'runs/one', '-q'],
      copy,
    );
    expect(labTrain.code, labTrain.out).to.equal(0);
    expect(labTrain.stdout).to.contain('label-free run: 1 step(s)');
    expect(fs.readdirSync(path.join(copy, 'runs/one/tensorboard')).sort()).to.deep.equal(['alpha', 'beta', 'cohort']);

    // The scaffolder that shipped in the package, into a folder beside the project (not inside it,
    // so nothing can resolve through the project's node_modules).
    const made = sh('npx', ['create-corl-plugin', '../lab-agree', '--kind', 'reward', '--name', 'lab:agree'], app);
    expect(made.code, made.out).to.equal(0);
    expect(made.stdout).to.contain('a reward plugin "lab:agree"').and.contain(`corl comes from file:${tarball}`);
    const dir = path.join(tmp.dir, 'lab-agree');
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.devDependencies.corl).to.equal(`file:${tarball}`);
    expect(pkg.allowScripts).to.deep.equal({ 'onnxruntime-node': false });
    expect(
      fs.existsSync(path.join(dir, '.npmrc')),
      `.npmrc only for an npm older than allowScripts (npm ${npmVersion})`,
    ).to.equal(oldNpm);

    // The plugin installs with nothing but what the scaffolder wrote: no switch in the environment.
    const install = sh('npm', ['install', ...NPM_FLAGS], dir);
    expect(install.code, install.out).to.equal(0);
    expect(install.out).to.not.match(/ENOTFOUND|nuget/i);
    if (!oldNpm)
      expect(install.out, 'quiet: no unknown config, no unreviewed install script: ' + install.out).to.not.match(
        /Unknown project config|install-scripts/,
      );
    const installed = path.join(dir, 'node_modules/corl');
    expect(fs.lstatSync(installed).isSymbolicLink(), 'corl unpacked from the tarball').to.equal(false);
    expect(fs.existsSync(path.join(installed, 'dist/test'))).to.equal(false);
    expect(fs.existsSync(path.join(installed, 'dist/entry/testing.js'))).to.equal(true);

    const test = sh('npm', ['test'], dir);
    expect(test.code, test.out).to.equal(0);
    expect(test.stdout)
      .to.contain('lab:agree satisfies the reward contract')
      .and.match(/\d+ passing/)
      .and.not.match(/failing/);

    const train = sh('npm', ['run', 'train', '--', '--out', 'runs/e2e', '-q'], dir);
    expect(train.code, train.out).to.equal(0);
    expect(train.stdout).to.contain('label-free run: 20 step(s)');
    const metrics = fs
      .readFileSync(path.join(dir, 'runs/e2e/metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(
      metrics.some((m) => m.phase === 'train' && m.metrics['agreement/mean_reward'] !== undefined),
      'rewards came from the generated plugin',
    ).to.equal(true);

    // The newest kind from the same tarball: a judge, whose tests run corl/testing's judge contract.
    const judge = sh('npx', ['create-corl-plugin', '../lab-steps', '--kind', 'judge', '--name', 'lab:steps'], app);
    expect(judge.code, judge.out).to.equal(0);
    const judgeDir = path.join(tmp.dir, 'lab-steps');
    const judgeInstall = sh('npm', ['install', ...NPM_FLAGS], judgeDir);
    expect(judgeInstall.code, judgeInstall.out).to.equal(0);
    const judgeTest = sh('npm', ['test'], judgeDir);
    expect(judgeTest.code, judgeTest.out).to.equal(0);
    expect(judgeTest.stdout)
      .to.contain('lab:steps satisfies the judge contract')
      .and.match(/\d+ passing/)
      .and.not.match(/failing/);
    // Its embedded-benchmark config finds the checkpoints the tarball ships.
    const validate = sh('npx', ['corl', 'validate', 'comas-arith.config.json'], judgeDir);
    expect(validate.code, validate.out).to.equal(0);
  });
});
