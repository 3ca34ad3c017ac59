// create-corl-plugin as its own package, as create-vite is: `npm pack` it (its prepack compiles the
// scaffolder and copies the templates in), then, with no network at all (a network namespace) and
// npm's cache only, `npx` it from the tarball to generate a reward plugin against a corl tarball,
// install that plugin offline and run its tests (the corl/testing contract suite included). The
// package does not contain or depend on corl. Slow (two packs, one install of corl's dependencies).
// The offline steps use a cache of the test's own with the lockfile's versions alone, so they need
// no other process to have fetched anything (test/fixtures/npm-cache.ts says why).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';
import { lockedNpmCache } from '../fixtures/npm-cache';
import { pack, sh, userEnv } from '../fixtures/user-shell';

const PACKAGE = path.join(ROOT, 'packages/create-corl-plugin');

describe('e2e: the create-corl-plugin package, packed and run offline with npx', function () {
  this.timeout(0); // packing and installing take what the machine takes
  let tmp: ReturnType<typeof tempDir>;
  let cache: string;
  /** A command as a user runs it, with onnxruntime-node's download switched off, on the test's own npm cache. */
  const user = (cmd: string, args: string[], cwd: string) =>
    sh(cmd, args, cwd, userEnv({ ONNXRUNTIME_NODE_INSTALL: 'skip', npm_config_cache: cache }));
  before(async () => {
    tmp = tempDir('corl-e2e-create-pkg-');
    // offline installs resolve against the locked versions only: see test/fixtures/npm-cache.ts
    cache = await lockedNpmCache(path.join(tmp.dir, 'npm-cache'));
  });
  after(() => tmp?.cleanup());

  it('is a package of its own with the scaffolder and the templates, and makes a plugin that passes its tests', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
    const corlPkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.name).to.equal('create-corl-plugin');
    expect(pkg.version, 'released with corl, in lockstep').to.equal(corlPkg.version);
    expect({ ...pkg.dependencies, ...pkg.peerDependencies }).to.not.have.property('corl');
    expect(Object.keys(pkg.dependencies).sort()).to.deep.equal(['commander', 'semver']);
    for (const d of Object.keys(pkg.dependencies)) expect(pkg.dependencies[d]).to.equal(corlPkg.dependencies[d]);

    const creator = pack(PACKAGE, tmp.dir);
    expect(creator.files).to.include.members([
      'index.js',
      'package.json',
      'dist/core/scaffold/cli.js',
      'templates/reward/package.json',
      'templates/judge/package.json',
      'templates/python-reward/package.json',
    ]);
    expect(creator.files.filter((f) => /node_modules|\.map$|^dist\/(test|plugins|entry)\//.test(f))).to.deep.equal([]);
    const corl = pack(ROOT, tmp.dir, ['--ignore-scripts']);
    expect(
      corl.files.filter((f) => f.startsWith('packages/')),
      'corl no longer carries the scaffolder package',
    ).to.deep.equal([]);

    const work = path.join(tmp.dir, 'work');
    fs.mkdirSync(work);
    const npx = (args: string[]) =>
      user(
        'unshare',
        ['-n', 'npx', '--offline', '--yes', `--package=${creator.tarball}`, 'create-corl-plugin', ...args],
        work,
      );
    // Without corl beside it, `--corl file` cannot mean anything: a coded error, nothing written.
    const refused = npx(['lab-nothing', '--kind', 'reward', '--corl', 'file']);
    expect(refused.code, refused.out).to.equal(1);
    expect(refused.out).to.contain('CORL_ERR_SCAFFOLD_CORL').and.contain('--corl tarball:');
    expect(fs.existsSync(path.join(work, 'lab-nothing'))).to.equal(false);

    const made = npx(['lab-agree', '--kind', 'reward', '--name', 'lab:agree', '--corl', `tarball:${corl.tarball}`]);
    expect(made.code, made.out).to.equal(0);
    expect(made.stdout).to.contain('a reward plugin "lab:agree"').and.contain(`corl comes from file:${corl.tarball}`);
    const dir = path.join(work, 'lab-agree');
    const generated = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(generated.devDependencies.corl).to.equal(`file:${corl.tarball}`);
    expect(generated.peerDependencies.corl).to.equal(`^${corlPkg.version}`);

    const install = user('unshare', ['-n', 'npm', 'install', '--offline', '--no-audit', '--no-fund'], dir);
    expect(install.code, install.out).to.equal(0);
    const test = user('npm', ['test'], dir);
    expect(test.code, test.out).to.equal(0);
    expect(test.stdout)
      .to.contain('lab:agree satisfies the reward contract')
      .and.match(/\d+ passing/)
      .and.not.match(/failing/);
  });
});
