// How a new project depends on corl: one rule (`corlDependency`) for `corl init` and
// `create-corl-plugin`, checked case by case on installations laid out on disk as npm leaves them,
// and through both programs, which must write the same spec.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initProject, INIT_CONFIGS } from '../../../core/cli/commands/init';
import { scaffold } from '../../../core/scaffold/scaffold';
import {
  corlDependency,
  corlInstallAt,
  installedFrom,
  parseCorlChoice,
  type CorlChoice,
  type CorlInstall,
} from '../../../core/util/npm';
import { CORL_VERSION } from '../../../core/version';
import { ROOT } from '../../../scripts/generate';
import { tempDir } from '../../fixtures/configs';

describe('core/util/npm corlDependency (how corl init and create-corl-plugin depend on corl)', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-npm-');
  });
  afterEach(() => tmp.cleanup());

  /** A package root named `name` at `root`, with what init and the scaffolder copy from it. */
  function lay(root: string, name: string): string {
    fs.mkdirSync(path.join(root, 'configs'), { recursive: true });
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name, version: CORL_VERSION }));
    for (const c of INIT_CONFIGS) fs.copyFileSync(path.join(ROOT, 'configs', c), path.join(root, 'configs', c));
    fs.cpSync(path.join(ROOT, 'templates/reward'), path.join(root, 'templates/reward'), {
      recursive: true,
      filter: (src) => !['node_modules', 'dist', 'runs'].includes(path.basename(src)),
    });
    return root;
  }

  /** npm's hidden lockfile of `project`, recording where node_modules/corl was resolved from. */
  function lock(project: string, resolved: string): void {
    fs.writeFileSync(
      path.join(project, 'node_modules/.package-lock.json'),
      JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/corl': { version: CORL_VERSION, resolved } } }),
    );
  }

  /** What `corl init` and `create-corl-plugin` write for corl from `root` with `choice`; they must agree. */
  function bothWrite(root: string, choice: string | undefined, label: string): string {
    const lab = initProject({
      dir: path.join(tmp.dir, `lab-${label}`),
      root,
      npmVersion: '11.19.1',
      ...(choice !== undefined ? { corl: choice } : {}),
    });
    const plugin = scaffold({
      dir: path.join(tmp.dir, `plugin-${label}`),
      kind: 'reward',
      name: 'lab:x',
      packageName: 'x',
      toolchain: 'registry',
      npmVersion: '11.19.1',
      install: corlInstallAt(root, CORL_VERSION),
      ...(choice !== undefined ? { corl: parseCorlChoice(choice) } : {}),
    });
    const labPkg = JSON.parse(fs.readFileSync(path.join(lab.dir, 'package.json'), 'utf8'));
    const pluginPkg = JSON.parse(fs.readFileSync(path.join(plugin.dir, 'package.json'), 'utf8'));
    expect(labPkg.dependencies.corl, `${label}: the lab's package.json`).to.equal(lab.corlSpec);
    expect(pluginPkg.devDependencies.corl, `${label}: the plugin's package.json`).to.equal(plugin.corlSpec);
    expect(plugin.corlSpec, `${label}: corl init and create-corl-plugin agree`).to.equal(lab.corlSpec);
    return lab.corlSpec;
  }

  it('with no choice: where this corl came from (checkout, tarball by npx, registry, the standalone scaffolder)', () => {
    const checkout = lay(path.join(tmp.dir, 'src', 'corl'), 'corl');
    expect(corlInstallAt(checkout, CORL_VERSION)).to.deep.equal({
      root: checkout,
      checkout: true,
      version: CORL_VERSION,
    });
    expect(bothWrite(checkout, undefined, 'checkout')).to.equal(`file:${fs.realpathSync(checkout)}`);

    // `npm install corl` from the registry: the lockfile records an https tarball, no local file.
    const project = path.join(tmp.dir, 'proj');
    const installed = lay(path.join(project, 'node_modules', 'corl'), 'corl');
    lock(project, `https://registry.npmjs.org/corl/-/corl-${CORL_VERSION}.tgz`);
    expect(corlInstallAt(installed, CORL_VERSION)).to.deep.equal({
      root: installed,
      checkout: false,
      version: CORL_VERSION,
    });
    expect(bothWrite(installed, undefined, 'registry')).to.equal(`^${CORL_VERSION}`);

    // `npx --package=./corl-x.y.z.tgz`: npx installs into its cache and records the tarball it read.
    const tgz = path.join(tmp.dir, `corl-${CORL_VERSION}.tgz`);
    fs.writeFileSync(tgz, 'only its path matters here');
    const npx = path.join(tmp.dir, '.npm', '_npx', '0123abcd');
    const cached = lay(path.join(npx, 'node_modules', 'corl'), 'corl');
    lock(npx, `file:${tgz}`);
    expect(installedFrom(cached)).to.equal(tgz);
    expect(bothWrite(cached, undefined, 'npx-tarball')).to.equal(`file:${tgz}`);
    fs.rmSync(tgz);
    expect(corlDependency(corlInstallAt(cached, CORL_VERSION)), 'the tarball is gone: the registry').to.equal(
      `^${CORL_VERSION}`,
    );

    // The create-corl-plugin package carries templates, not corl.
    const standalone: CorlInstall = corlInstallAt(lay(path.join(tmp.dir, 'ccp'), 'create-corl-plugin'), '0.1.3');
    expect(standalone.corl).to.equal(false);
    expect(corlDependency(standalone)).to.equal('^0.1.3');
  });

  it('an explicit choice: file, registry, a tarball, an npm spec; what cannot be refused with nothing written', () => {
    const checkout = lay(path.join(tmp.dir, 'corl'), 'corl');
    const tgz = path.join(tmp.dir, 'corl-0.1.0.tgz');
    fs.writeFileSync(tgz, '');
    const cases: ReadonlyArray<readonly [string, string]> = [
      ['file', `file:${fs.realpathSync(checkout)}`],
      ['registry', `^${CORL_VERSION}`],
      [`tarball:${tgz}`, `file:${tgz}`],
      [tgz, `file:${tgz}`],
      ['^0.1.0', '^0.1.0'],
      ['github:lab/corl', 'github:lab/corl'],
      ['npm:corl@next', 'npm:corl@next'],
    ];
    cases.forEach(([choice, spec], i) => expect(bothWrite(checkout, choice, `choice-${i}`), choice).to.equal(spec));

    // A corl installed from the registry named with --corl file: its own folder.
    const project = path.join(tmp.dir, 'proj');
    const installed = lay(path.join(project, 'node_modules', 'corl'), 'corl');
    lock(project, `https://registry.npmjs.org/corl/-/corl-${CORL_VERSION}.tgz`);
    expect(corlDependency(corlInstallAt(installed, CORL_VERSION), 'file')).to.equal(
      `file:${fs.realpathSync(installed)}`,
    );

    const standalone = corlInstallAt(lay(path.join(tmp.dir, 'ccp'), 'create-corl-plugin'), '0.1.0');
    const refused: ReadonlyArray<readonly [CorlInstall, CorlChoice, RegExp]> = [
      [standalone, 'file', /CORL_ERR_SCAFFOLD_CORL.*does not contain corl/],
      [standalone, { tarball: path.join(tmp.dir, 'missing.tgz') }, /CORL_ERR_SCAFFOLD_CORL.*missing\.tgz, got nothing/],
      [standalone, { tarball: tmp.dir }, /CORL_ERR_SCAFFOLD_CORL.*got a folder/],
    ];
    for (const [install, choice, error] of refused) expect(() => corlDependency(install, choice)).to.throw(error);
    expect(corlDependency(standalone, { tarball: tgz })).to.equal(`file:${tgz}`);
    for (const bad of ['registy', 'latest', '', path.join(tmp.dir, 'missing.tgz')]) {
      const dir = path.join(tmp.dir, `refused-${bad.length}`);
      expect(() => initProject({ dir, root: checkout, corl: bad }), `init --corl ${bad}`).to.throw(
        /CORL_ERR_SCAFFOLD_CORL/,
      );
      expect(fs.existsSync(dir), `init --corl ${bad}: nothing written`).to.equal(false);
    }
  });
});
