// Run folders as a hostile user meets them through the real command line (issue 39, item 4): one
// writer at a time (a lock with its owner, stale locks taken over, shards that skip a run another
// process holds), `--out` that never overwrites a file corl did not write nor the config it reads,
// and every file read back from a run folder checked, so damage is a coded error naming the file and
// the field, with no stack, and the folder left as it was.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, tempDir, writeConfig } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/corl.js');
const LOCK_MODULE = path.join(ROOT, 'dist/core/util/folder-lock.js');

function corl(args: string[], cwd?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', ...(cwd ? { cwd } : {}), timeout: 240000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function refused(r: { status: number | null; stderr: string }, code: string, ...says: string[]): void {
  expect(r.status, r.stderr).to.equal(code === 'CORL_ERR_CLI_USAGE' ? 2 : 1);
  expect(r.stderr).to.contain(code);
  for (const s of says) expect(r.stderr).to.match(new RegExp(escape(s)));
  expect(r.stderr, 'no stack lines').not.to.match(/\n\s+at \S|internal error/);
}

/** Every file under `dir` with its bytes, to show that a refusal changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[path.relative(dir, p)] = fs.readFileSync(p).toString('base64');
    }
  };
  walk(dir);
  return out;
}

/** A child process holding the lock of `dir` (as another corl would) until it is killed. */
function holder(dir: string): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(process.execPath, [
    '-e',
    `const { FolderLock } = require(${JSON.stringify(LOCK_MODULE)});
     FolderLock.acquire(${JSON.stringify(dir)}, { command: 'corl train (the other one)' });
     process.stdout.write('held\\n');
     setInterval(() => undefined, 1000);`,
  ]);
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
}

async function kill(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
}

const small = (name: string, extra: Record<string, unknown> = {}) =>
  coRlConfig({
    name,
    trainer: { steps: 2, batchSize: 4, groupSize: 5, evalEvery: 1, checkpointEvery: 1, sampling: { maxTokens: 4 } },
    ...extra,
  });

describe('e2e: run folders have one writer, are never overwritten, and are read back checked', function () {
  this.timeout(600000);
  let tmp: ReturnType<typeof tempDir>;
  let trained: string;
  before(() => {
    tmp = tempDir('corl-folders-');
    const file = writeConfig(tmp.dir, 'c.json', small('folders'));
    trained = path.join(tmp.dir, 'trained');
    const r = corl(['train', '-c', file, '--out', trained, '-q']);
    expect(r.status, r.stderr).to.equal(0);
  });
  after(() => tmp.cleanup());

  /** A copy of the trained run with `damage` done to it. */
  const damaged = (name: string, damage: (dir: string) => void): string => {
    const dir = path.join(tmp.dir, name);
    fs.cpSync(trained, dir, { recursive: true });
    damage(dir);
    return dir;
  };
  const editJson = (file: string, edit: (v: Record<string, unknown>) => unknown) =>
    fs.writeFileSync(file, JSON.stringify(edit(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>)));

  it('`corl train config.json --out .` refuses to overwrite the config it reads and files corl did not write', () => {
    const project = path.join(tmp.dir, 'project');
    fs.mkdirSync(project);
    writeConfig(project, 'config.json', small('mine'));
    fs.writeFileSync(path.join(project, 'report.html'), '<p>my own report</p>');
    const before = snapshot(project);
    refused(
      corl(['train', 'config.json', '--out', '.', '-q'], project),
      'CORL_ERR_RUN_OUT_FOREIGN',
      "the run's config.json would replace",
    );
    // the config elsewhere, the folder still holding a report corl did not write
    fs.renameSync(path.join(project, 'config.json'), path.join(tmp.dir, 'mine.json'));
    refused(
      corl(['train', path.join(tmp.dir, 'mine.json'), '--out', project, '-q']),
      'CORL_ERR_RUN_OUT_FOREIGN',
      'which holds report.html that corl did not write',
    );
    fs.renameSync(path.join(tmp.dir, 'mine.json'), path.join(project, 'config.json'));
    expect(snapshot(project)).to.deep.equal(before);
  });

  it('damaged run.json, state.json, config.json, metrics.jsonl or eval/: coded errors naming file and field, folder unchanged', () => {
    const cases: [string, (dir: string) => void, string][] = [
      ['meta-null', (d) => fs.writeFileSync(path.join(d, 'run.json'), 'null'), 'run.json (root)'],
      [
        'meta-field',
        (d) => editJson(path.join(d, 'run.json'), (v) => ({ ...v, supervised: 'no' })),
        'run.json supervised',
      ],
      [
        'next-step',
        (d) => editJson(path.join(d, 'state.json'), (v) => ({ ...v, nextStep: -5 })),
        'state.json nextStep',
      ],
      [
        'checkpoint-out',
        (d) => editJson(path.join(d, 'state.json'), (v) => ({ ...v, checkpoint: '../../../etc' })),
        'state.json checkpoint',
      ],
      ['state-array', (d) => fs.writeFileSync(path.join(d, 'state.json'), '[]'), 'state.json (root)'],
      [
        'eval-file',
        (d) => {
          fs.rmSync(path.join(d, 'eval'), { recursive: true });
          fs.writeFileSync(path.join(d, 'eval'), 'x');
        },
        'eval',
      ],
      ['config-null', (d) => fs.writeFileSync(path.join(d, 'config.json'), 'null'), 'config.json (root)'],
      [
        'metrics-line',
        (d) =>
          fs.appendFileSync(
            path.join(d, 'metrics.jsonl'),
            '{"step": "x", "agent": 0, "phase": "train", "metrics": {}}\n',
          ),
        'metrics.jsonl:',
      ],
    ];
    for (const [name, damage, where] of cases) {
      const dir = damaged(name, damage);
      const before = snapshot(dir);
      const report = corl(['report', dir]);
      const resume = corl(['train', '--resume', dir, '--steps', '3', '-q']);
      if (name === 'config-null' || name === 'metrics-line') {
        // the resume reads config.source.json and cuts metrics back to the checkpoint: only the report meets them
        refused(report, 'CORL_ERR_RUN_CORRUPT', where);
        continue;
      }
      if (name === 'eval-file') {
        refused(resume, 'CORL_ERR_RUN_CORRUPT', 'expected eval to be a folder');
        expect(snapshot(dir)).to.deep.equal(before);
        continue;
      }
      for (const r of [report, resume]) refused(r, 'CORL_ERR_RUN_CORRUPT', where);
      expect(snapshot(dir), name).to.deep.equal(before);
    }
  });

  it('a run another process holds is refused with its owner; once that process is dead, its lock is taken over', async () => {
    const dir = damaged('locked', () => undefined);
    const child = await holder(dir);
    try {
      refused(
        corl(['train', '--resume', dir, '--steps', '3', '-q']),
        'CORL_ERR_RUN_LOCKED',
        `corl train (the other one) (pid ${child.pid}`,
      );
    } finally {
      await kill(child);
    }
    const r = corl(['train', '--resume', dir, '--steps', '3', '-q']);
    expect(r.status, r.stderr).to.equal(0);
    expect(
      (JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { nextStep: number }).nextStep,
    ).to.equal(3);
    expect(fs.existsSync(path.join(dir, 'corl.lock'))).to.equal(false);
  });

  it('a second corl compare on one --out is refused before it writes; a shard skips a run another process holds', async () => {
    const a = writeConfig(tmp.dir, 'a.json', small('cmp-a'));
    const b = writeConfig(tmp.dir, 'b.json', small('cmp-b'));
    const out = path.join(tmp.dir, 'cmp');
    const other = await holder(out);
    try {
      refused(
        corl(['compare', a, b, '--seeds', '1', '--out', out, '--progress', 'none']),
        'CORL_ERR_RUN_LOCKED',
        `pid ${other.pid}`,
      );
      expect(fs.readdirSync(out)).to.deep.equal(['corl.lock']);
    } finally {
      await kill(other);
    }
    const seed = await holder(path.join(out, 'cmp-a', 'seed-0'));
    try {
      const r = corl(['compare', a, b, '--seeds', '2', '--out', out, '--progress', 'none', '--shard', '1/2']);
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stderr).to.match(/cmp-a seed 11: run by corl train \(the other one\) \(pid \d+ on [^)]+\), skipped/);
      expect(fs.existsSync(path.join(out, 'cmp-a', 'seed-0', 'state.json'))).to.equal(false);
      expect(fs.existsSync(path.join(out, 'cmp-b', 'seed-0', 'state.json'))).to.equal(true);
    } finally {
      await kill(seed);
    }
    // the holder died: the whole comparison takes its stale lock over and runs the seed
    const r = corl(['compare', a, b, '--seeds', '2', '--out', out, '--progress', 'none']);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.match(/cmp-b seed 11: done earlier, skipped/);
    expect(fs.existsSync(path.join(out, 'cmp-a', 'seed-0', 'state.json'))).to.equal(true);
  });

  it('corl init: a malformed package.json, a kernel folder, a configs file: coded, nothing written; node:fs as a plugin: coded', () => {
    const bad = path.join(tmp.dir, 'init-bad');
    fs.mkdirSync(bad);
    for (const [text, says] of [
      ['{bad', 'invalid JSON'],
      ['null', 'got null'],
      ['{"dependencies": ["corl"]}', 'a "dependencies" that is an array'],
      ['{"scripts": {"train": 5}}', 'scripts.train = 5'],
    ] as const) {
      fs.writeFileSync(path.join(bad, 'package.json'), text);
      refused(corl(['init'], bad), 'CORL_ERR_CLI_USAGE', says);
      expect(fs.readdirSync(bad)).to.deep.equal(['package.json']);
      expect(fs.readFileSync(path.join(bad, 'package.json'), 'utf8')).to.equal(text);
    }
    refused(corl(['init', '/proc/self/x']), 'CORL_ERR_CLI_USAGE', "kernel's proc file system");
    // a name too long for the file system is found before anything is made on the way to it
    const home = path.join(tmp.dir, 'init-long');
    fs.mkdirSync(home);
    const long = path.join('sub', 'n'.repeat(300), 'x');
    refused(corl(['init', long], home), 'CORL_ERR_CLI_USAGE', 'a name of 300 bytes', 'more than the 255');
    refused(corl(['init', path.join('sub', 'é'.repeat(128))], home), 'CORL_ERR_CLI_USAGE', 'a name of 256 bytes');
    refused(
      corl(['init', Array.from({ length: 20 }, () => 'd'.repeat(250)).join('/')], home),
      'CORL_ERR_CLI_USAGE',
      'more than the 4095 a path may have',
    );
    expect(fs.readdirSync(home)).to.deep.equal([]);
    refused(
      corl(['train', '-c', writeConfig(tmp.dir, 'long.json', small('long')), '--out', path.join(home, long), '-q']),
      'CORL_ERR_IO',
      'a name of 300 bytes',
    );
    expect(fs.readdirSync(home)).to.deep.equal([]);
    const withFile = path.join(tmp.dir, 'init-configs');
    fs.mkdirSync(withFile);
    fs.writeFileSync(path.join(withFile, 'configs'), 'mine');
    refused(corl(['init', withFile]), 'CORL_ERR_CLI_USAGE', 'expected configs to be a folder');
    expect(fs.readdirSync(withFile)).to.deep.equal(['configs']);
    for (const spec of ['node:fs', 'fs', 'node:child_process']) {
      const file = writeConfig(tmp.dir, 'builtin.json', small('builtin', { plugins: [spec] }));
      refused(
        corl(['train', '-c', file, '--out', path.join(tmp.dir, 'builtin-run'), '-q']),
        'CORL_ERR_PLUGIN_LOAD',
        'a module built into Node.js',
      );
    }
  });

  it("reads: one run's report counts a read of its comparison; a deleted or truncated ledger is reported", () => {
    const a = writeConfig(tmp.dir, 'ra.json', small('reads-a'));
    const b = writeConfig(tmp.dir, 'rb.json', small('reads-b'));
    const out = path.join(tmp.dir, 'reads');
    expect(corl(['compare', a, b, '--seeds', '1', '--out', out, '--progress', 'none']).status).to.equal(0);
    const ledger = () =>
      fs
        .readFileSync(path.join(out, 'reads.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { read: number; by: string; runs: Record<string, string> });
    expect(ledger().map((r) => r.runs)).to.deep.equal([{ 'reads-a': '0', 'reads-b': '0' }]);
    const one = corl(['report', path.join(out, 'reads-a', 'seed-0')]);
    expect(one.status, one.stderr).to.equal(0);
    expect(ledger().map((r) => [r.read, r.by, r.runs])).to.deep.equal([
      [1, 'corl compare', { 'reads-a': '0', 'reads-b': '0' }],
      [2, 'corl report (one run)', { 'reads-a': '0' }],
    ]);
    fs.rmSync(path.join(out, 'reads.jsonl'));
    const r = corl(['report', out]);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('reads.jsonl is missing, though compare.json records 2 read(s)');
    expect(fs.readFileSync(path.join(out, 'results.md'), 'utf8')).to.contain('the ledger is damaged');
  });
});
