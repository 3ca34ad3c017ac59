import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  callerNpmVersion,
  needsNpmrc,
  linkedTools,
  rewriteNames,
  scaffold,
  thisInstall,
  type CorlInstall,
} from '../../../core/scaffold/scaffold';
import { TEMPLATE_KINDS } from '../../../core/scaffold/names';
import { ROOT } from '../../../scripts/generate';
import { tempDir } from '../../fixtures/configs';

describe('core/scaffold/scaffold (copy a template, rewrite its names, point it at corl)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-scaffold-');
  });
  afterEach(() => tmp.cleanup());

  it('this corl is a checkout at the repository root', () => {
    expect(thisInstall()).to.deep.include({ root: ROOT, checkout: true });
  });

  it('copies every template file, renames _gitignore, and rewrites package name, plugin name and identifier', () => {
    const dir = path.join(tmp.dir, 'agree');
    const r = scaffold({
      dir,
      kind: 'reward',
      name: 'lab:soft-agree',
      packageName: '@lab/agree',
      npmVersion: '11.19.1',
    });
    const template = fs
      .readdirSync(path.join(ROOT, 'templates/reward'), { recursive: true })
      .map(String)
      .filter((f) => fs.statSync(path.join(ROOT, 'templates/reward', f)).isFile());
    expect(r.files).to.have.length(template.length);
    expect(r.files).to.include('.gitignore').and.not.include('_gitignore');
    const src = fs.readFileSync(path.join(dir, 'src/agreement.ts'), 'utf8');
    expect(src)
      .to.contain("name: 'lab:soft-agree'")
      .and.contain('export const softAgreeReward = definePlugin(')
      .and.not.contain('example');
    expect(fs.readFileSync(path.join(dir, 'test/agreement.test.ts'), 'utf8')).to.contain(
      'rewardContract(softAgreeReward, { register',
    );
    expect(fs.readFileSync(path.join(dir, 'corl.config.json'), 'utf8'))
      .to.contain('"use": "lab:soft-agree"')
      .and.contain('"name": "@lab/agree"');
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.name).to.equal('@lab/agree');
    expect(pkg.devDependencies.corl).to.equal(`file:${fs.realpathSync(ROOT)}`);
    expect(r.next).to.deep.equal([
      `cd ${path.relative(process.cwd(), dir)}`,
      'npm install',
      'npm test',
      'npm run train',
    ]);
  });

  it("link mode points every tool at the copy corl resolves; registry mode keeps the template's ranges", () => {
    const linked = scaffold({
      dir: path.join(tmp.dir, 'a'),
      kind: 'task',
      name: 'lab:a',
      packageName: 'a',
      toolchain: 'link',
    });
    expect(linked.toolchain).to.equal('link');
    const a = JSON.parse(fs.readFileSync(path.join(tmp.dir, 'a/package.json'), 'utf8'));
    expect(a.devDependencies.typescript).to.equal(
      `file:${fs.realpathSync(path.dirname(require.resolve('typescript/package.json', { paths: [ROOT] })))}`,
    );
    expect(fs.existsSync(a.devDependencies.mocha.slice(5) + '/bin/mocha.js')).to.equal(true);
    scaffold({
      dir: path.join(tmp.dir, 'b'),
      kind: 'task',
      name: 'lab:b',
      packageName: 'b',
      toolchain: 'registry',
      corl: { spec: '^0.1.0' },
      description: "Lab's rows: 'quoted'",
    });
    const b = JSON.parse(fs.readFileSync(path.join(tmp.dir, 'b/package.json'), 'utf8'));
    const template = JSON.parse(fs.readFileSync(path.join(ROOT, 'templates/task/package.json'), 'utf8'));
    expect(b.devDependencies).to.deep.equal({ ...template.devDependencies, corl: '^0.1.0' });
    expect(b.description).to.equal("Lab's rows: 'quoted'");
    expect(fs.readFileSync(path.join(tmp.dir, 'b/src/jsonl.ts'), 'utf8')).to.contain(
      "description: 'Lab\\'s rows: \\'quoted\\'',",
    );
  });

  it("--description replaces every kind's manifest description, and no options schema description", () => {
    for (const kind of TEMPLATE_KINDS) {
      const dir = path.join(tmp.dir, `d-${kind}`);
      scaffold({ dir, kind, name: 'lab:d', packageName: `d-${kind}`, toolchain: 'registry', description: 'Mine' });
      const template = path.join(ROOT, 'templates', kind, 'src');
      for (const f of fs.readdirSync(template).filter((x) => x !== 'index.ts')) {
        const before = fs.readFileSync(path.join(template, f), 'utf8').split('\n');
        const after = fs.readFileSync(path.join(dir, 'src', f), 'utf8').split('\n');
        const changed = after.flatMap((line, i) =>
          line === rewriteNames(before[i]!, kind, { name: 'lab:d', packageName: `d-${kind}` }) ? [] : [i],
        );
        expect(changed, `${kind}/src/${f}: one line changes`).to.have.length(1);
        expect(after[changed[0]!]!.trim(), kind).to.equal("description: 'Mine',");
        expect(
          after.slice(0, changed[0]).some((l) => l.includes('manifest: {') || l.includes('definePythonReward({')),
          `${kind}: the line is in the manifest (or a Python reward's definition)`,
        ).to.equal(true);
      }
    }
  });

  it('an installed corl (under node_modules, from the registry) gives ^version, and its peer range', () => {
    const fake = path.join(tmp.dir, 'node_modules', 'corl');
    fs.mkdirSync(fake, { recursive: true });
    fs.cpSync(path.join(ROOT, 'templates'), path.join(fake, 'templates'), { recursive: true });
    const install: CorlInstall = { root: fake, checkout: false, version: '0.1.3' };
    const r = scaffold({ dir: path.join(tmp.dir, 'c'), kind: 'extractor', name: 'lab:c', packageName: 'c', install });
    expect(r.toolchain).to.equal('registry');
    expect(r.corlSpec).to.equal('^0.1.3');
    const pkg = JSON.parse(fs.readFileSync(path.join(tmp.dir, 'c/package.json'), 'utf8'));
    expect(pkg.devDependencies.corl).to.equal('^0.1.3');
    expect(pkg.peerDependencies.corl).to.equal('^0.1.3');
    expect(pkg.devDependencies.typescript).to.equal('~6.0.3');
    expect(linkedTools(install, ['surely-not-installed-anywhere'])).to.deep.equal({
      specs: {},
      missing: ['surely-not-installed-anywhere'],
    });
  });

  it('onnxruntime-node skips its CUDA download: allowScripts in package.json, and .npmrc for an older npm', () => {
    const make = (d: string, npmVersion: string | undefined) =>
      scaffold({ dir: path.join(tmp.dir, d), kind: 'policy', name: `lab:${d}`, packageName: d, npmVersion });
    const modern = make('modern', '11.19.1');
    expect(modern.npmrc).to.equal(false);
    expect(modern.files).to.not.include('.npmrc');
    expect(JSON.parse(fs.readFileSync(path.join(tmp.dir, 'modern/package.json'), 'utf8')).allowScripts).to.deep.equal({
      'onnxruntime-node': false,
    });
    for (const [d, v] of [
      ['old', '10.8.2'],
      ['unknown', undefined],
    ] as const) {
      const r = make(d, v);
      expect(r.npmrc, d).to.equal(true);
      expect(r.files).to.include('.npmrc');
      expect(fs.readFileSync(path.join(tmp.dir, d, '.npmrc'), 'utf8')).to.match(/^onnxruntime-node-install=skip$/m);
    }
    expect(
      callerNpmVersion({ npm_config_user_agent: 'npm/11.19.1 node/v20.20.2 linux x64 workspaces/false' }),
    ).to.equal('11.19.1');
    expect(callerNpmVersion({ npm_config_user_agent: 'yarn/1.22.0 npm/? node/v20.20.2' })).to.equal(undefined);
    expect(callerNpmVersion({})).to.equal(undefined);
    expect([needsNpmrc('11.19.0'), needsNpmrc('11.19.1'), needsNpmrc('12.0.0'), needsNpmrc('x')]).to.deep.equal([
      true,
      false,
      false,
      true,
    ]);
  });

  it('a --corl that cannot be followed writes nothing (its cases: test/core/util/npm.test.ts)', () => {
    expect(() =>
      scaffold({
        dir: path.join(tmp.dir, 'f'),
        kind: 'reward',
        name: 'lab:f',
        packageName: 'f',
        corl: { tarball: 'nope.tgz' },
      }),
    ).to.throw(/CORL_ERR_SCAFFOLD_CORL/);
    expect(fs.existsSync(path.join(tmp.dir, 'f')), 'nothing written').to.equal(false);
  });

  it('the standalone create-corl-plugin package holds no corl: registry by default, --corl file refused', () => {
    const standalone: CorlInstall = { root: ROOT, checkout: false, version: '0.1.0', corl: false };
    const r = scaffold({
      dir: path.join(tmp.dir, 'standalone'),
      kind: 'reward',
      name: 'lab:s',
      packageName: 's',
      install: standalone,
    });
    expect(r.corlSpec).to.equal('^0.1.0');
    expect(r.toolchain).to.equal('registry');
    expect(() =>
      scaffold({
        dir: path.join(tmp.dir, 'sf'),
        kind: 'reward',
        name: 'lab:sf',
        packageName: 'sf',
        install: standalone,
        corl: 'file',
      }),
    ).to.throw(/CORL_ERR_SCAFFOLD_CORL/);
    expect(fs.existsSync(path.join(tmp.dir, 'sf')), 'nothing written').to.equal(false);
  });

  it('refuses a non-empty folder or a file unless forced, and a missing template', () => {
    const dir = path.join(tmp.dir, 'busy');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    expect(() => scaffold({ dir, kind: 'reward', name: 'lab:x', packageName: 'x' })).to.throw(
      /CORL_ERR_SCAFFOLD_TARGET.*1 entry \(notes\.txt\)/,
    );
    expect(fs.readdirSync(dir)).to.deep.equal(['notes.txt']);
    scaffold({ dir, kind: 'reward', name: 'lab:x', packageName: 'x', force: true });
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).to.equal('mine');
    expect(() =>
      scaffold({ dir: path.join(dir, 'notes.txt'), kind: 'reward', name: 'lab:x', packageName: 'x' }),
    ).to.throw(/CORL_ERR_SCAFFOLD_TARGET.*a file/);
    const empty: CorlInstall = { root: tmp.dir, checkout: true, version: '0.1.0' };
    expect(() =>
      scaffold({ dir: path.join(tmp.dir, 'none'), kind: 'policy', name: 'lab:x', packageName: 'x', install: empty }),
    ).to.throw(/CORL_ERR_SCAFFOLD_TEMPLATE/);
  });

  it("rewrites only the template's own tokens", () => {
    expect(
      rewriteNames("name: 'example:reward' in example-corl-reward, exampleReward; example:task stays", 'reward', {
        name: 'lab:y',
        packageName: 'y',
      }),
    ).to.equal("name: 'lab:y' in y, yReward; example:task stays");
  });
});
