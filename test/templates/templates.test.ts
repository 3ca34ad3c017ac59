// CI for templates/: every template folder, as it stands, builds with its own tsconfig, passes its
// own tests and trains with its own corl.config.json. Each runs in a temporary copy whose
// node_modules links corl (this checkout) and the toolchain corl itself uses, the layout
// `npm install` produces for a package depending on them by `file:` (no download, one toolchain).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { templatePluginKind, templateTokens, TEMPLATE_KINDS } from '../../core/scaffold/names';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';

const corlPkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

function link(target: string, at: string): void {
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.symlinkSync(target, at, 'dir');
}

/** Copy a template and give it a node_modules with corl and the tools of its devDependencies. */
function prepare(kind: string, dir: string): void {
  fs.cpSync(path.join(ROOT, 'templates', kind), dir, { recursive: true, filter: (src) => !/[\\/](node_modules|dist|runs)$/.test(src) });
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(pkg.devDependencies)) {
    const target = dep === 'corl' ? ROOT : path.dirname(require.resolve(`${dep}/package.json`, { paths: [ROOT] }));
    link(target, path.join(dir, 'node_modules', dep));
  }
}

function run(cwd: string, args: string[]): { code: number; out: string } {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
  return { code: r.status ?? -1, out: `${r.stdout}\n${r.stderr}` };
}

describe('templates/ (every template is a real package that builds, passes its tests and trains)', function () {
  this.timeout(300000);

  it('one template per scaffolder kind, named with the tokens the scaffolder rewrites', () => {
    expect(fs.readdirSync(path.join(ROOT, 'templates')).sort()).to.deep.equal([...TEMPLATE_KINDS].sort());
    for (const kind of TEMPLATE_KINDS) {
      const dir = path.join(ROOT, 'templates', kind);
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      const t = templateTokens(kind);
      expect(pkg.name, kind).to.equal(t.packageName);
      expect(pkg.devDependencies.corl, `${kind}: as it stands a template uses the corl it sits in`).to.equal('file:../..');
      expect(pkg.peerDependencies.corl).to.equal(`^${corlPkg.version}`);
      for (const [dep, range] of Object.entries(pkg.devDependencies)) {
        if (dep !== 'corl') expect(range, `${kind}: ${dep} should match corl's own devDependency`).to.equal(corlPkg.devDependencies[dep]);
      }
      for (const f of ['README.md', '_gitignore', 'tsconfig.json', '.mocharc.json', 'corl.config.json', 'src/index.ts']) expect(fs.existsSync(path.join(dir, f)), `${kind}/${f}`).to.equal(true);
      const sources = fs.readdirSync(path.join(dir, 'src')).map((f) => fs.readFileSync(path.join(dir, 'src', f), 'utf8')).join('\n');
      const define = kind === 'python-reward' ? 'definePythonReward' : 'definePlugin';
      expect(sources, kind).to.contain(`name: '${t.pluginName}'`).and.contain(`export const ${t.identifier} = ${define}(`);
      const tests = fs.readdirSync(path.join(dir, 'test')).map((f) => fs.readFileSync(path.join(dir, 'test', f), 'utf8')).join('\n');
      expect(tests, `${kind} runs the corl/testing suite of its kind`).to.contain(`${templatePluginKind(kind)}Contract(${t.identifier}`);
      expect(fs.readFileSync(path.join(dir, 'corl.config.json'), 'utf8'), `${kind}: the config uses the plugin`).to.contain(t.pluginName);
    }
  });

  describe('each template in a temporary copy', () => {
    let tmp: ReturnType<typeof tempDir>;
    let build: { code: number; out: string };
    before(() => {
      tmp = tempDir('corl-templates-');
      for (const kind of TEMPLATE_KINDS) prepare(kind, path.join(tmp.dir, kind));
      // One tsc in build mode compiles every template with its own tsconfig, sharing the parse of corl's types.
      build = run(tmp.dir, [require.resolve('typescript/bin/tsc', { paths: [ROOT] }), '-b', ...TEMPLATE_KINDS]);
    });
    after(() => tmp?.cleanup());

    for (const kind of TEMPLATE_KINDS) {
      it(`templates/${kind}: tsc builds it, its mocha tests pass, corl train runs its config`, () => {
        const dir = path.join(tmp.dir, kind);
        const mine = build.out.split('\n').filter((l) => l.startsWith(`${kind}/`) || l.includes(`/${kind}/`));
        expect(mine, build.out).to.deep.equal([]);
        expect(fs.existsSync(path.join(dir, 'dist/src/index.js')), build.out).to.equal(true);
        const test = run(dir, [path.join(dir, 'node_modules/mocha/bin/mocha.js')]);
        expect(test.code, test.out).to.equal(0);
        expect(test.out).to.match(/\d+ passing/).and.not.match(/failing|pending/);
        expect(test.out).to.contain(`${templateTokens(kind).pluginName} satisfies the ${templatePluginKind(kind)} contract`);
        const train = run(dir, [path.join(ROOT, 'bin/corl.js'), 'train', '-c', 'corl.config.json', '--out', 'runs/ci', '-q']);
        expect(train.code, train.out).to.equal(0);
        expect(train.out).to.contain('label-free run: 20 step(s)');
        const metrics = fs.readFileSync(path.join(dir, 'runs/ci/metrics.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
        expect(metrics.filter((m) => m.phase === 'train').length).to.equal(20 * (kind === 'topology' ? 3 : 2));
        if (kind === 'reward') expect(metrics.some((m) => m.metrics['agreement/mean_reward'] !== undefined), 'the run used the plugin\'s reward').to.equal(true);
        if (kind === 'python-reward') {
          // reward.py ran in Python for every step: its log_metric reached the run's metrics
          const train = metrics.filter((m) => m.phase === 'train');
          expect(train.every((m) => m.metrics['python/steps_hold'] === 1), 'the run used reward.py').to.equal(true);
        }
        if (kind === 'judge') {
          // corl:comas judged every (proposal, evaluation) pair with the plugin: 4 problems × 2 evaluators × 6 debates, no model asked.
          const train = metrics.filter((m) => m.phase === 'train');
          expect(train.map((m) => m.metrics['judge/verdicts'])).to.deep.equal(new Array(40).fill(48));
          expect(train.every((m) => m.metrics['judge/calls'] === 0 && m.metrics['judge/samples'] === 0)).to.equal(true);
          // The embedded-benchmark config resolves against the shipped checkpoints and the built plugin.
          const arith = run(dir, [path.join(ROOT, 'bin/corl.js'), 'validate', 'comas-arith.config.json']);
          expect(arith.code, arith.out).to.equal(0);
          expect(arith.out).to.contain('2 agent(s)').and.contain('label-free');
        }
      });
    }

    it('the build as a whole succeeded', () => {
      expect(build.code, build.out).to.equal(0);
    });
  });
});
