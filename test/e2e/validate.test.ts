// `corl validate` runs every check `corl train` runs before its first step: each config below passes
// the schema, and both commands refuse it with the same coded error (the shipped default validates).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir, writeConfig } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/corl.js');

function corl(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The shipped default job with absolute checkpoint paths, changed by `edit`. */
function defaultJob(edit: (c: any) => void): any {
  const c = JSON.parse(fs.readFileSync(path.join(ROOT, 'configs/co-rl.json'), 'utf8'));
  delete c.$schema;
  for (const a of c.agents) a.policy.options.checkpoint = path.resolve(ROOT, 'configs', a.policy.options.checkpoint);
  edit(c);
  return c;
}

const CASES: { name: string; code: string; edit: (c: any, dir: string) => void }[] = [
  {
    name: 'heads not dividing dModel',
    code: 'CORL_ERR_CONFIG_INVALID',
    edit: (c) => (c.agents[0].policy.options.heads = 5),
  },
  {
    name: 'a folder that holds no checkpoint',
    code: 'CORL_ERR_POLICY_CHECKPOINT',
    edit: (c, dir) => (c.agents[1].policy.options.checkpoint = dir),
  },
  {
    name: 'a missing checkpoint folder',
    code: 'CORL_ERR_CONFIG_PATH',
    edit: (c) => (c.agents[1].policy.options.checkpoint = '/nonexistent/ckpt'),
  },
  {
    name: 'missing task files',
    code: 'CORL_ERR_TASK_DATA',
    edit: (c) =>
      (c.task = { use: 'corl:jsonl', options: { train: 'missing-train.jsonl', heldOut: 'missing-test.jsonl' } }),
  },
  {
    name: 'a bad regular expression',
    code: 'CORL_ERR_REWARD_OPTIONS',
    edit: (c) => (c.reward = { use: 'corl:format', options: { check: 'pattern', pattern: '([' } }),
  },
  {
    name: 'all-zero weights of a weighted reward',
    code: 'CORL_ERR_REWARD_OPTIONS',
    edit: (c) =>
      (c.reward = {
        use: 'corl:weighted',
        options: {
          sources: [
            { source: 'corl:vote', weight: 0 },
            { source: 'corl:format', weight: 0 },
          ],
        },
      }),
  },
  {
    name: 'evaluation on a validation split the task lacks',
    code: 'CORL_ERR_TASK_DATA',
    edit: (c) => {
      c.task.options.validation = 0;
      c.eval.split = 'validation';
    },
  },
  {
    name: 'a variants file without the training problems',
    code: 'CORL_ERR_TASK_DATA',
    edit: (c, dir) => {
      const file = path.join(dir, 'variants-of-other-problems.jsonl');
      fs.writeFileSync(
        file,
        JSON.stringify({ id: 'not-a-problem-of-this-task', variants: ['What is 1 plus 1?'] }) + '\n',
      );
      c.diversity = { use: 'corl:rephrase', options: { file } };
    },
  },
];

describe('e2e: corl validate checks what corl train checks before its first step', () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it('the shipped default job validates, with its plugins created', () => {
    const r = corl('validate', path.join(ROOT, 'configs/co-rl.json'));
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/plugins created \(2000 train \/ 200 held-out problems\)/);
  });

  for (const k of CASES) {
    it(`${k.name}: validate and train both refuse with ${k.code}`, () => {
      const file = writeConfig(
        tmp.dir,
        `${k.name.replace(/\W+/g, '-')}.json`,
        defaultJob((c) => k.edit(c, tmp.dir)),
      );
      const v = corl('validate', file);
      expect(v.status, v.stdout).to.equal(1);
      expect(v.stderr).to.match(new RegExp(`^${k.code}`));
      const out = path.join(tmp.dir, `run-${k.name.replace(/\W+/g, '-')}`);
      const t = corl('train', '-c', file, '--out', out);
      expect(t.status).to.equal(1);
      expect(t.stderr).to.contain(k.code);
      // refused before the run started: no folder, no report of a run that never was
      expect(fs.existsSync(out), 'no run folder').to.equal(false);
      expect(t.stderr).to.not.contain('run directory:').and.not.contain('report:');
    });
  }

  it('every missing checkpoint at once: the field, the agent and the resolved path of each, with the shipped reference', () => {
    const file = writeConfig(
      tmp.dir,
      'copied.json',
      defaultJob((c) => {
        c.agents[0].policy.options.checkpoint = '../models/slips/alpha';
        c.agents[1].policy.options.checkpoint = 'package:corl/models/slips/gamma';
      }),
    );
    const r = corl('validate', file);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.match(
      /^CORL_ERR_CONFIG_PATH: expected every path of the config to name a file or folder, got 2 that do not/,
    );
    expect(r.stderr).to.contain(
      `agents[0].policy.options.checkpoint: agent 0 (alpha): expected a folder at ${path.resolve(tmp.dir, '../models/slips/alpha')}, got nothing (corl ships this model: write "package:corl/models/slips/alpha"`,
    );
    expect(r.stderr).to.contain(
      `agents[1].policy.options.checkpoint: agent 1 (beta): expected a folder at ${path.join(ROOT, 'models/slips/gamma')}, got nothing`,
    );
  });

  it('--schema-only skips creating the plugins', () => {
    const file = writeConfig(
      tmp.dir,
      'schema-only.json',
      defaultJob((c) => CASES[1]!.edit(c, tmp.dir)),
    );
    expect(CASES[1]!.code).to.equal('CORL_ERR_POLICY_CHECKPOINT');
    const r = corl('validate', '--schema-only', file);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.not.contain('plugins created');
  });
});
