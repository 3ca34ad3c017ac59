// `corl init`: the project it writes (configs whose models resolve from the installed package, a
// package.json that installs without onnxruntime-node's download, a README), how it treats a
// package.json already there, and what it refuses. test/e2e/packed-plugin.test.ts installs and
// trains such a project from a packed tarball with no network.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../../../core/config/load';
import { initProject, INIT_CONFIGS, portableConfig } from '../../../../core/cli/commands/init';
import { isCorlError } from '../../../../core/errors';
import { ROOT } from '../../../../scripts/generate';
import { tempDir } from '../../../fixtures/configs';

describe('corl init', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-init-');
  });
  afterEach(() => tmp.cleanup());

  it('rewrites paths into corl as package references, and only those', () => {
    const text = JSON.stringify({
      $schema: '../schema/corl.schema.json',
      agents: [{ policy: { options: { checkpoint: '../models/slips/alpha', other: './not-in-corl.json' } } }],
      name: 'x',
    });
    const out = portableConfig(text, path.join(ROOT, 'configs'), ROOT) as any;
    expect(out.agents[0].policy.options.checkpoint).to.equal('package:corl/models/slips/alpha');
    expect(out.agents[0].policy.options.other).to.equal('./not-in-corl.json');
    expect(out.$schema).to.equal('../node_modules/corl/schema/corl.schema.json');
    expect(out.metrics).to.deep.equal(['corl:tensorboard']);
  });

  it('writes configs that validate from the new folder, package.json, README and .npmrc for an old npm', async () => {
    const dir = path.join(tmp.dir, 'My Lab');
    const tarball = path.join(tmp.dir, 'corl-0.1.0.tgz');
    fs.writeFileSync(tarball, '');
    const r = initProject({ dir, corl: tarball, npmVersion: '10.9.2' });
    expect(r.files).to.deep.equal([
      '.gitignore',
      '.npmrc',
      'README.md',
      'configs/base.json',
      'configs/co-rl.json',
      'configs/ttrl.json',
      'package.json',
    ]);
    expect(r.corlSpec, 'absolute, as create-corl-plugin writes it').to.equal(`file:${tarball}`);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg).to.deep.include({ name: 'my-lab', private: true, allowScripts: { 'onnxruntime-node': false } });
    expect(pkg.dependencies).to.deep.equal({ corl: `file:${tarball}` });
    expect(pkg.scripts.train).to.equal('corl train configs/co-rl.json');
    expect(fs.readFileSync(path.join(dir, '.npmrc'), 'utf8')).to.contain('onnxruntime-node-install=skip');
    expect(fs.readFileSync(path.join(dir, 'README.md'), 'utf8'))
      .to.contain('npx corl train configs/co-rl.json')
      .and.contain('npm install');
    for (const name of INIT_CONFIGS) {
      const loaded = await loadConfig(path.join(dir, 'configs', name));
      for (const a of loaded.config.agents)
        expect(String(a.policy.options.checkpoint)).to.match(/^package:corl\/models\/slips\/(alpha|beta)$/);
      expect(loaded.config.metrics.map((m) => m.use)).to.deep.equal(['corl:tensorboard']);
    }
  });

  it('keeps a package.json already there (its corl, scripts, fields), adds allowScripts; an npm with allowScripts gets no .npmrc', () => {
    fs.writeFileSync(
      path.join(tmp.dir, 'package.json'),
      JSON.stringify({
        name: 'mine',
        dependencies: { corl: 'file:../corl.tgz', left: '^1.0.0' },
        scripts: { train: 'my own' },
        keep: 1,
      }),
    );
    const r = initProject({ dir: tmp.dir, npmVersion: '11.19.1' });
    expect(r.npmrc).to.equal(false);
    const pkg = JSON.parse(fs.readFileSync(path.join(tmp.dir, 'package.json'), 'utf8'));
    expect(pkg).to.deep.include({ name: 'mine', keep: 1, allowScripts: { 'onnxruntime-node': false } });
    expect(pkg.dependencies).to.deep.equal({ corl: 'file:../corl.tgz', left: '^1.0.0' });
    expect(pkg.scripts.train).to.equal('my own');
    expect(pkg.scripts.compare).to.contain('corl compare');
  });

  it('refuses to overwrite configs or a README, and writes nothing then', () => {
    fs.mkdirSync(path.join(tmp.dir, 'configs'));
    fs.writeFileSync(path.join(tmp.dir, 'configs/co-rl.json'), '{}');
    let err: unknown;
    try {
      initProject({ dir: tmp.dir, npmVersion: '11.19.1' });
    } catch (e) {
      err = e;
    }
    expect(isCorlError(err, 'CORL_ERR_CLI_USAGE')).to.equal(true);
    expect((err as Error).message).to.contain('configs/co-rl.json');
    expect(fs.readdirSync(tmp.dir).sort()).to.deep.equal(['configs']);
    expect(fs.readdirSync(path.join(tmp.dir, 'configs'))).to.deep.equal(['co-rl.json']);
  });

  it('a write that fails on the way leaves nothing behind: folders it made are gone, files that were there unchanged', () => {
    // a corl root whose second config cannot be read: the first is written before the failure
    const root = path.join(tmp.dir, 'root');
    fs.mkdirSync(path.join(root, 'configs'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'configs', INIT_CONFIGS[0]), path.join(root, 'configs', INIT_CONFIGS[0]));
    const fresh = path.join(tmp.dir, 'new', 'deep');
    expect(() => initProject({ dir: fresh, root, npmVersion: '11.19.1' })).to.throw(/ENOENT/);
    expect(fs.existsSync(path.join(tmp.dir, 'new'))).to.equal(false);
    const mine = path.join(tmp.dir, 'mine');
    fs.mkdirSync(mine);
    fs.writeFileSync(path.join(mine, 'package.json'), '{"name": "mine"}');
    expect(() => initProject({ dir: mine, root, npmVersion: '11.19.1' })).to.throw(/ENOENT/);
    expect(fs.readdirSync(mine)).to.deep.equal(['package.json']);
    expect(fs.readFileSync(path.join(mine, 'package.json'), 'utf8')).to.equal('{"name": "mine"}');
  });

  const refusedInit = (o: Parameters<typeof initProject>[0], where: string, says: string): void => {
    let err: unknown;
    try {
      initProject(o);
    } catch (e) {
      err = e;
    }
    expect(isCorlError(err, 'CORL_ERR_CLI_USAGE'), String(err)).to.equal(true);
    expect((err as Error).message)
      .to.contain(where)
      .and.contain(says);
  };

  it('--slurm and --kubernetes add the sweep: sbatch array job, render job after it, Indexed Job and render Job', () => {
    const dir = path.join(tmp.dir, 'lab');
    const r = initProject({ dir, npmVersion: '11.19.1', slurm: true, kubernetes: true, shards: 3, seeds: 5 });
    for (const f of [
      'slurm/compare.sbatch',
      'slurm/render.sbatch',
      'slurm/submit.sh',
      'kubernetes/compare-job.yaml',
      'kubernetes/render-job.yaml',
      'kubernetes/submit.sh',
    ])
      expect(r.files).to.include(f);
    const mode = (f: string): number => fs.statSync(path.join(dir, f)).mode & 0o777;
    expect(mode('slurm/submit.sh')).to.equal(0o755);
    expect(mode('kubernetes/compare-job.yaml')).to.equal(0o644);
    const sbatch = fs.readFileSync(path.join(dir, 'slurm/compare.sbatch'), 'utf8');
    expect(sbatch).to.contain('#SBATCH --array=0-2\n');
    const run =
      'compare configs/base.json configs/ttrl.json configs/co-rl.json --seeds 5 --out runs/sweep --progress lines';
    expect(sbatch).to.contain(`exec "$CORL" ${run} --shard auto\n`);
    expect(fs.readFileSync(path.join(dir, 'slurm/render.sbatch'), 'utf8')).to.contain(`exec "$CORL" ${run}\n`);
    expect(fs.readFileSync(path.join(dir, 'slurm/submit.sh'), 'utf8')).to.contain(
      '--dependency=afterok:"$shards" --kill-on-invalid-dep=yes slurm/render.sbatch',
    );
    const job = fs.readFileSync(path.join(dir, 'kubernetes/compare-job.yaml'), 'utf8');
    expect(job).to.contain('completions: 3\n').and.contain('"--shard","auto/3"]');
    expect(fs.readFileSync(path.join(dir, 'README.md'), 'utf8')).to.contain('bash slurm/submit.sh');
    // without them: no job files
    const plain = initProject({ dir: path.join(tmp.dir, 'plain'), npmVersion: '11.19.1' });
    expect(plain.files.some((f) => f.startsWith('slurm/') || f.startsWith('kubernetes/'))).to.equal(false);
  });

  it('refuses shards beyond the seeds, --shards alone, and job files or folders in the way, writing nothing', () => {
    const dir = path.join(tmp.dir, 'x');
    refusedInit({ dir, slurm: true, shards: 5, seeds: 4 }, '--shards', 'a shard holds whole seeds');
    refusedInit({ dir, shards: 2 }, '--shards', 'only with --slurm or --kubernetes');
    expect(fs.existsSync(dir)).to.equal(false);
    fs.mkdirSync(path.join(dir, 'slurm'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'slurm/submit.sh'), 'mine');
    refusedInit({ dir, slurm: true }, 'slurm/submit.sh', 'expected a folder without');
    fs.rmSync(path.join(dir, 'slurm'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'kubernetes'), 'a file');
    refusedInit({ dir, kubernetes: true }, 'kubernetes', 'to be a folder');
    expect(fs.readdirSync(dir)).to.deep.equal(['kubernetes']);
  });
});
