import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildScaffoldProgram, main, resolveInputs } from '../../../core/scaffold/cli';
import { tempDir } from '../../fixtures/configs';
import { CORL_VERSION } from '../../../core/version';
import { ROOT } from '../../../scripts/generate';

function scripted(answers: string[]): { ask: (q: string) => Promise<string>; questions: string[] } {
  const questions: string[] = [];
  return {
    questions,
    ask: async (q) => {
      questions.push(q);
      return answers.shift() ?? '';
    },
  };
}

describe('core/scaffold/cli (create-corl-plugin: flags, prompts on a terminal only, defaults)', () => {
  it('prompts for what the flags leave out, re-asking after an invalid answer', async () => {
    const out: string[] = [];
    const s = scripted(['work/my-task', 'rewards', 'task', '', 'Lab:Bad', 'lab:good', 'Rows from a file']);
    const inputs = await resolveInputs(undefined, {}, { out: (x) => out.push(x), ask: s.ask });
    expect(inputs).to.deep.equal({
      dir: 'work/my-task',
      kind: 'task',
      name: 'lab:good',
      packageName: 'my-task',
      description: 'Rows from a file',
    });
    expect(s.questions[1]).to.contain('reward, topology, diversity, extractor, policy, task, interaction, judge');
    expect(s.questions[3]).to.contain('(my-task)');
    expect(s.questions[4]).to.contain('(local:my-task)');
    expect(out.join('')).to.contain('expected --kind to be one of').and.contain('expected a plugin name "scope:name"');
  });

  it('flags are never asked again; --yes and a non-terminal never prompt', async () => {
    const s = scripted([]);
    const inputs = await resolveInputs(
      'agree',
      { kind: 'reward', name: 'lab:agree', package: 'agree-pkg', description: 'd' },
      { out: () => undefined, ask: s.ask },
    );
    expect(s.questions).to.deep.equal([]);
    expect(inputs).to.deep.equal({
      dir: 'agree',
      kind: 'reward',
      name: 'lab:agree',
      packageName: 'agree-pkg',
      description: 'd',
    });
    expect(
      await resolveInputs('My Plugin', { kind: 'policy', yes: true }, { out: () => undefined, ask: s.ask }),
    ).to.deep.include({ packageName: 'my-plugin', name: 'local:my-plugin', description: undefined });
    expect(s.questions).to.deep.equal([]);
  });

  it('off a terminal a missing folder is a usage error and a missing kind lists the kinds', async () => {
    const io = { out: () => undefined };
    await resolveInputs(undefined, { kind: 'reward' }, io).then(
      () => expect.fail('should throw'),
      (e: Error) => expect(e.message).to.match(/^CORL_ERR_CLI_USAGE: <dir>/),
    );
    await resolveInputs('x', {}, io).then(
      () => expect.fail('should throw'),
      (e: Error) => expect(e.message).to.match(/CORL_ERR_SCAFFOLD_KIND.*got none/),
    );
    await resolveInputs('x', { kind: 'reward', name: 'corl:x' }, io).then(
      () => expect.fail('should throw'),
      (e: Error) => expect(e.message).to.match(/CORL_ERR_SCAFFOLD_NAME.*reserved/),
    );
  });

  it('main generates the package and prints the next commands; errors give exit codes 1 and 2', async () => {
    const tmp = tempDir('corl-scaffold-cli-');
    const quiet = process.stderr.write;
    try {
      const out: string[] = [];
      const dir = path.join(tmp.dir, 'lab-topo');
      expect(
        await main(['node', 'create-corl-plugin', dir, '--kind', 'topology', '--name', 'lab:topo'], {
          out: (s) => out.push(s),
        }),
      ).to.equal(0);
      expect(out.join(''))
        .to.contain(`created ${dir}: a topology plugin "lab:topo"`)
        .and.contain(`corl comes from file:${fs.realpathSync(ROOT)}`)
        .and.contain('npm install\n  npm test\n  npm run train');
      const reg = path.join(tmp.dir, 'reg');
      expect(
        await main(['node', 'create-corl-plugin', reg, '--kind', 'task', '--corl', 'registry'], {
          out: () => undefined,
        }),
      ).to.equal(0);
      expect(JSON.parse(fs.readFileSync(path.join(reg, 'package.json'), 'utf8')).devDependencies.corl).to.equal(
        `^${CORL_VERSION}`,
      );
      expect(fs.readFileSync(path.join(dir, 'src/previous-peers.ts'), 'utf8')).to.contain("name: 'lab:topo'");
      process.stderr.write = (() => true) as typeof process.stderr.write;
      expect(await main(['node', 'create-corl-plugin', dir, '--kind', 'topology'], { out: () => undefined })).to.equal(
        1,
      ); // not empty
      expect(
        await main(['node', 'create-corl-plugin', path.join(tmp.dir, 'y'), '--kind', 'nope'], { out: () => undefined }),
      ).to.equal(1);
      expect(
        await main(['node', 'create-corl-plugin', path.join(tmp.dir, 'y'), '--kind', 'task', '--toolchain', 'pip'], {
          out: () => undefined,
        }),
      ).to.equal(2);
      expect(await main(['node', 'create-corl-plugin', '--bogus'], { out: () => undefined })).to.equal(2);
      const bad = path.join(tmp.dir, 'bad');
      expect(
        await main(['node', 'create-corl-plugin', bad, '--kind', 'task', '--corl', 'regsitry'], {
          out: () => undefined,
        }),
      ).to.equal(1);
      expect(fs.existsSync(bad), 'a bad --corl writes nothing').to.equal(false);
    } finally {
      process.stderr.write = quiet;
      tmp.cleanup();
    }
  });

  it('--help lists every flag, so every prompt has one', () => {
    const help = buildScaffoldProgram({ out: () => undefined }).helpInformation();
    for (const flag of ['--kind', '--name', '--package', '--description', '--corl', '--toolchain', '--force', '--yes'])
      expect(help).to.contain(flag);
  });
});
