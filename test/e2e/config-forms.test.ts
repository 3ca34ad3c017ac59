// One way to name a config, on every command that reads one: as its argument or with -c, each the
// same; two different files are refused showing both forms, and so is none.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/corl.js');

function corl(cwd: string, ...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', cwd });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Each command that reads a config, with the arguments it needs besides it. */
const COMMANDS: { name: string; before: string[]; after: string[] }[] = [
  { name: 'train', before: [], after: [] },
  { name: 'validate', before: [], after: [] },
  { name: 'pretrain', before: [], after: ['--out', 'm'] },
  { name: 'eval', before: [], after: ['--out', 'e'] },
  { name: 'serve', before: [], after: [] },
  { name: 'rephrase', before: [], after: ['--out', 'v.jsonl'] },
  { name: 'list', before: [], after: [] },
  { name: 'agreement', before: ['a.jsonl', 'b.jsonl'], after: [] },
  { name: 'compare', before: [], after: [] },
];

describe('e2e: every command takes its config as an argument or with -c', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-config-forms-');
  });
  after(() => tmp.cleanup());

  for (const c of COMMANDS) {
    it(`corl ${c.name}: both forms reach the config; two different ones are refused with the right forms`, () => {
      for (const form of [['missing.json'], ['-c', 'missing.json']]) {
        const r = corl(tmp.dir, c.name, ...c.before, ...form, ...c.after);
        expect(r.status, `${form.join(' ')}: ${r.out}`).to.not.equal(0);
        expect(r.out, form.join(' ')).to.contain('CORL_ERR_CONFIG_NOT_FOUND').and.contain('missing.json');
      }
      const two = corl(tmp.dir, c.name, ...c.before, 'one.json', '-c', 'two.json', ...c.after);
      if (c.name === 'compare') {
        // compare takes several: the argument and -c are two rows
        expect(two.out).to.contain('CORL_ERR_CONFIG_NOT_FOUND').and.contain('one.json');
        return;
      }
      expect(two.status).to.equal(2);
      expect(two.out)
        .to.contain('CORL_ERR_CLI_USAGE')
        .and.contain('expected one config, got two: "one.json" (argument) and "two.json" (-c)')
        .and.contain('-c <config>');
    });
  }

  it('validate and train run the same config named either way; without one they show both forms', () => {
    const file = writeConfig(tmp.dir, 'job.json', coRlConfig({ trainer: { steps: 1, batchSize: 2, groupSize: 2 } }));
    for (const form of [[file], ['-c', file]]) {
      const v = corl(tmp.dir, 'validate', ...form);
      expect(v.status, v.out).to.equal(0);
      expect(v.out).to.contain(`ok: ${file}`);
    }
    const t = corl(tmp.dir, 'train', file, '--out', 'runs/pos', '-q');
    expect(t.status, t.out).to.equal(0);
    expect(t.out).to.contain('label-free run: 1 step(s)');
    for (const cmd of ['train', 'validate', 'eval', 'serve', 'pretrain']) {
      const none = corl(tmp.dir, cmd);
      expect(none.status, cmd).to.equal(2);
      expect(none.out, cmd).to.contain(`corl ${cmd} <config>\` or \`corl ${cmd} -c <config>`);
    }
    const list = corl(tmp.dir, 'list', file);
    expect(list.status, list.out).to.equal(0);
    expect(list.out).to.contain('test:categorical');
  });
});
