// Bad inputs met through the real command line, each refused with a coded error that names what to
// fix, with no stack lines, no hang, and nothing already written lost (issue 30): deep configs and
// data, manifests that throw, sink paths that are folders, devices or kernel files, task files that
// are devices or FIFOs, sizes that cannot fit in memory, and a metrics sink across kill and resume.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coRlConfig, fixture, tempDir, writeConfig } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/corl.js');

function corl(
  args: string[],
  env: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A refusal as the user meets it: exit status 1 (2 for a usage error), the code, the words, and no JavaScript stack line. */
function refused(r: { status: number | null; stderr: string }, code: string, ...says: (string | RegExp)[]): void {
  expect(r.status, r.stderr).to.equal(code === 'CORL_ERR_CLI_USAGE' ? 2 : 1);
  expect(r.stderr).to.contain(code);
  for (const s of says) expect(r.stderr).to.match(typeof s === 'string' ? new RegExp(escape(s)) : s);
  expect(r.stderr, 'no stack lines').not.to.match(/\n\s+at \S|internal error/);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The shipped default job (two transformers from models/), with absolute checkpoint paths. */
function defaultJob(edit: (c: any) => void): any {
  const c = JSON.parse(fs.readFileSync(path.join(ROOT, 'configs/co-rl.json'), 'utf8'));
  delete c.$schema;
  for (const a of c.agents) a.policy.options.checkpoint = path.resolve(ROOT, 'configs', a.policy.options.checkpoint);
  edit(c);
  return c;
}

function mkfifo(file: string): void {
  const r = spawnSync('mkfifo', [file]);
  expect(r.status, 'mkfifo (coreutils) makes the FIFO').to.equal(0);
}

describe('e2e: bad inputs are refused with coded errors, through the command line', function () {
  this.timeout(300000);
  let tmp: ReturnType<typeof tempDir>;
  let runs = 0;
  beforeEach(() => (tmp = tempDir('corl-bad-')));
  /** A fresh --out for each command (a refused run keeps its folder, with a report saying why). */
  const runDir = (): string => path.join(tmp.dir, `run-${runs++}`);
  afterEach(() => tmp.cleanup());

  it('a config nested 5,000 deep (in an unknown key, a description, plugin options) names the line and column', () => {
    const deep = (inner: string) => '['.repeat(5000) + inner + ']'.repeat(5000);
    const base = JSON.stringify(coRlConfig()).slice(0, -1);
    for (const text of [
      `${base}, "description": ${deep('1')}}`,
      `${base}, "x": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
      JSON.stringify(coRlConfig({ reward: { use: 'corl:vote', options: { threshold: 0 } } })).replace(
        '"threshold":0',
        `"threshold": ${deep('0')}`,
      ),
    ]) {
      const file = writeConfig(tmp.dir, 'deep.json', text);
      for (const cmd of [
        ['validate', file],
        ['train', '-c', file, '--out', runDir()],
      ]) {
        refused(corl(cmd), 'CORL_ERR_CONFIG_PARSE', 'nested at most 100 levels deep', /deep\.json:1:\d+/);
      }
    }
  });

  it('deep data is refused too: a task line nested 5,000 deep, deep JSON options on the command line', () => {
    const data = path.join(tmp.dir, 'train.jsonl');
    fs.writeFileSync(data, `{"question": "1+1?", "answer": "2", "x": ${'['.repeat(5000)}${']'.repeat(5000)}}\n`);
    const file = writeConfig(
      tmp.dir,
      'deep-data.json',
      coRlConfig({
        task: { use: 'corl:jsonl', options: { format: 'plain', train: 'train.jsonl', heldOutFraction: 0 } },
      }),
    );
    refused(corl(['validate', file]), 'CORL_ERR_TASK_DATA', 'train.jsonl:1', 'nested more than 100 levels deep');
    const answers = spawnSync(
      process.execPath,
      [BIN, 'answers', 'extract', '--extractor-options', `{"x": ${'['.repeat(5000)}${']'.repeat(5000)}}`],
      { encoding: 'utf8', input: '{"text": "the answer is 4"}\n' },
    );
    refused(
      { status: answers.status, stderr: answers.stderr },
      'CORL_ERR_CLI_USAGE',
      'nested more than 100 levels deep',
    );
  });

  it('a manifest whose readsGroundTruth throws, as a function or as a getter, is a coded error naming it', () => {
    const fn = writeConfig(
      tmp.dir,
      'throws.json',
      coRlConfig({
        plugins: [fixture('categorical-policy.js'), fixture('throwing-manifests.js')],
        reward: 'test:throws-question',
      }),
    );
    for (const cmd of [
      ['validate', fn],
      ['train', '-c', fn, '--out', runDir()],
    ]) {
      const r = corl(cmd);
      refused(
        r,
        'CORL_ERR_PLUGIN_INVALID',
        'manifest.readsGroundTruth of "test:throws-question"',
        'the manifest broke',
        /throws\.json:\d+:\d+ reward/,
      );
      expect(r.stderr).not.to.contain('secretHelper');
    }
    const getter = writeConfig(
      tmp.dir,
      'getter.json',
      coRlConfig({ plugins: [fixture('categorical-policy.js'), fixture('throwing-getter.js')] }),
    );
    const r = corl(['validate', getter]);
    refused(
      r,
      'CORL_ERR_PLUGIN_INVALID',
      'manifest.readsGroundTruth of "test:throws-getter" to be readable',
      /getter\.json:\d+:\d+ plugins\[1\]/,
    );
    expect(r.stderr).not.to.contain('secretHelper');
  });

  it('a corl:jsonl sink path that is a folder, a device, a FIFO, a symlink to one, or a kernel file is refused by validate and train', () => {
    fs.mkdirSync(path.join(tmp.dir, 'folder'));
    mkfifo(path.join(tmp.dir, 'fifo'));
    fs.symlinkSync(path.join(tmp.dir, 'fifo'), path.join(tmp.dir, 'to-fifo'));
    fs.writeFileSync(path.join(tmp.dir, 'plain'), '');
    for (const [where, says] of [
      ['folder', 'got a folder'],
      ['/dev/null', 'got a character device'],
      ['fifo', 'got a FIFO'],
      ['to-fifo', 'got a FIFO'],
      ['/proc/self/fd/0', /got a (character device|FIFO|socket)/],
      ['/proc/sys/kernel/corl-metrics.jsonl', "kernel's proc file system"],
      ['/sys/kernel/corl-metrics.jsonl', "kernel's sysfs file system"],
      ['plain/under-a-file.jsonl', 'which is a file'],
    ] as const) {
      const file = writeConfig(
        tmp.dir,
        'sink.json',
        coRlConfig({ metrics: [{ use: 'corl:jsonl', options: { path: where } }] }),
      );
      for (const cmd of [
        ['validate', file],
        ['train', '-c', file, '--out', runDir(), '-q'],
      ]) {
        refused(corl(cmd), 'CORL_ERR_PLUGIN_OPTIONS', 'metrics[0].options.path', says);
      }
    }
    expect(fs.readFileSync(path.join(tmp.dir, 'plain'), 'utf8')).to.equal('');
  });

  it('a task file or config that is a device, a FIFO, a symlink to one, or a folder is refused at once', () => {
    mkfifo(path.join(tmp.dir, 'fifo.jsonl'));
    fs.symlinkSync('/dev/zero', path.join(tmp.dir, 'zero.jsonl'));
    fs.mkdirSync(path.join(tmp.dir, 'dir.jsonl'));
    for (const [train, says] of [
      ['/dev/zero', 'got a character device'],
      ['/dev/urandom', 'got a character device'],
      ['zero.jsonl', 'got a character device'],
      ['fifo.jsonl', 'got a FIFO'],
      ['dir.jsonl', 'got a folder'],
      ['/proc/self/environ', "kernel's proc file system"],
    ] as const) {
      const file = writeConfig(
        tmp.dir,
        'task.json',
        coRlConfig({ task: { use: 'corl:jsonl', options: { format: 'plain', train, heldOutFraction: 0.5 } } }),
      );
      refused(corl(['validate', file]), 'CORL_ERR_TASK_DATA', says);
      refused(corl(['train', '-c', file, '--out', runDir()]), 'CORL_ERR_TASK_DATA', says);
    }
    for (const [config, says] of [
      ['/dev/zero', 'got a character device'],
      [path.join(tmp.dir, 'fifo.jsonl'), 'got a FIFO'],
    ] as const) {
      refused(corl(['validate', config]), 'CORL_ERR_CONFIG_NOT_FOUND', says);
      refused(corl(['train', '-c', config, '--out', runDir()]), 'CORL_ERR_CONFIG_NOT_FOUND', says);
    }
  });

  it('a plugin module, --out and a service token file that are FIFOs, devices or kernel paths are refused at once', () => {
    mkfifo(path.join(tmp.dir, 'fifo.js'));
    fs.symlinkSync('/dev/zero', path.join(tmp.dir, 'zero.js'));
    fs.writeFileSync(path.join(tmp.dir, 'plain'), '');
    for (const [module, says] of [
      ['./fifo.js', 'got a FIFO'],
      ['./zero.js', 'got a character device'],
    ] as const) {
      const file = writeConfig(tmp.dir, 'plugin.json', coRlConfig({ plugins: [module] }));
      refused(corl(['validate', file]), 'CORL_ERR_PLUGIN_LOAD', `"${module}"`, says);
      refused(corl(['train', '-c', file, '--out', runDir(), '-q']), 'CORL_ERR_PLUGIN_LOAD', says);
    }
    const config = writeConfig(tmp.dir, 'run.json', coRlConfig());
    for (const [out, says] of [
      [path.join(tmp.dir, 'fifo.js'), 'got a FIFO'],
      ['/dev/null', 'got a character device'],
      ['/proc/self/corl-run', "kernel's proc file system"],
      ['/sys/kernel/corl-run', "kernel's sysfs file system"],
      [path.join(tmp.dir, 'plain/run'), 'which is a file'],
    ] as const) {
      refused(corl(['train', '-c', config, '--out', out, '-q']), 'CORL_ERR_IO', '--out', says);
    }
    const serve = path.join(ROOT, 'configs/serve/co-rl.json');
    for (const [token, says] of [
      [path.join(tmp.dir, 'fifo.js'), 'got a FIFO'],
      ['/dev/zero', 'got a character device'],
    ] as const) {
      const journal = path.join(tmp.dir, 'never.journal.jsonl');
      const r = corl(['serve', '-c', serve, '--port', '0', '--journal', journal, '--token-file', token]);
      refused(r, 'CORL_ERR_CLI_USAGE', '--token-file', says);
      expect(fs.existsSync(journal), 'refused before the journal is made').to.equal(false);
    }
  });

  it("corl compare's --out that is a file, FIFO, device or kernel path, and seeds past what memory or a config takes, are refused before anything is written", () => {
    const config = writeConfig(tmp.dir, 'run.json', coRlConfig());
    fs.writeFileSync(path.join(tmp.dir, 'plain'), 'mine');
    mkfifo(path.join(tmp.dir, 'fifo'));
    for (const [out, says] of [
      [path.join(tmp.dir, 'plain'), 'got a file'],
      [path.join(tmp.dir, 'fifo'), 'got a FIFO'],
      ['/dev/null', 'got a character device'],
      ['/proc/self/corl-cmp', "kernel's proc file system"],
    ] as const) {
      refused(
        corl(['compare', config, '--seeds', '1', '--out', out]),
        'CORL_ERR_IO',
        '--out',
        says,
        'nothing was written',
      );
    }
    expect(fs.readFileSync(path.join(tmp.dir, 'plain'), 'utf8'), 'the file is as it was').to.equal('mine');
    // a seed list of a billion would fill the heap before the first run: refused as usage
    const out = path.join(tmp.dir, 'cmp');
    refused(
      corl(['compare', config, '--seeds', '1000000000', '--out', out]),
      'CORL_ERR_CLI_USAGE',
      '--seeds of at most 10000',
    );
    refused(
      corl(['compare', config, '--looks', '2,100000', '--out', out]),
      'CORL_ERR_CLI_USAGE',
      '--looks of at most 10000',
    );
    refused(
      corl(['init', path.join(tmp.dir, 'proj'), '--slurm', '--seeds', '1e9']),
      'CORL_ERR_CLI_USAGE',
      '--seeds of at most',
    );
    // seeds are the config's seed + 1000 x index: past the largest seed a config takes, refused up front
    const high = writeConfig(tmp.dir, 'high.json', coRlConfig({ seed: 4294967000 }));
    refused(
      corl(['compare', high, '--seeds', '2', '--out', out]),
      'CORL_ERR_CLI_USAGE',
      '--seeds, --first-seed',
      'to stay at most 4294967295, got 4294968000',
    );
    expect(fs.existsSync(out), 'nothing was written').to.equal(false);
    expect(fs.existsSync(path.join(tmp.dir, 'proj')), 'nothing was written').to.equal(false);
  });

  it('a checkpoint whose corl.json, model or optimizer file is a FIFO or a device is refused, not read', () => {
    const from = path.join(ROOT, 'models/slips/alpha');
    for (const name of ['corl.json', 'model.onnx', 'optimizer.bin']) {
      for (const kind of ['FIFO', 'character device'] as const) {
        const dir = path.join(tmp.dir, `ck-${name}-${kind.length}`);
        fs.cpSync(from, dir, { recursive: true });
        fs.rmSync(path.join(dir, name));
        if (kind === 'FIFO') mkfifo(path.join(dir, name));
        else fs.symlinkSync('/dev/zero', path.join(dir, name));
        const file = writeConfig(
          tmp.dir,
          'ck.json',
          defaultJob((c) => (c.agents[0].policy.options.checkpoint = dir)),
        );
        refused(corl(['validate', file]), 'CORL_ERR_POLICY_CHECKPOINT', path.join(dir, name), `got a ${kind}`);
      }
    }
  });

  it('a run folder whose state, config or metrics file is a FIFO: resume and report refuse it, coded', () => {
    const out = runDir();
    const ran = corl([
      'train',
      '-c',
      writeConfig(tmp.dir, 'run.json', coRlConfig()),
      '--out',
      out,
      '--steps',
      '0',
      '-q',
    ]);
    expect(ran.status, ran.stderr).to.equal(0);
    for (const [name, code] of [
      ['state.json', 'CORL_ERR_RUN_CORRUPT'],
      ['config.source.json', 'CORL_ERR_RUN_CORRUPT'],
      ['run.json', 'CORL_ERR_RUN_CORRUPT'],
    ] as const) {
      const copy = runDir();
      fs.cpSync(out, copy, { recursive: true });
      fs.rmSync(path.join(copy, name));
      mkfifo(path.join(copy, name));
      refused(corl(['train', '--resume', copy, '--steps', '1', '-q']), code, path.join(copy, name), 'got a FIFO');
    }
    for (const [name, code] of [
      ['metrics.jsonl', 'CORL_ERR_RUN_CORRUPT'],
      ['config.json', 'CORL_ERR_RUN_CORRUPT'],
    ] as const) {
      const copy = runDir();
      fs.cpSync(out, copy, { recursive: true });
      fs.rmSync(path.join(copy, name));
      mkfifo(path.join(copy, name));
      refused(corl(['report', copy]), code, path.join(copy, name), 'got a FIFO');
    }
  });

  it('sizes that cannot fit in memory are refused by validate and train, naming the field to lower', () => {
    for (const [edit, field] of [
      [(c: any) => (c.trainer.batchSize = 1e6), 'trainer.batchSize'],
      [(c: any) => (c.trainer.groupSize = 100000), 'trainer.groupSize'],
      [(c: any) => (c.eval = { ...c.eval, samples: 1e6 }), 'eval.samples'],
    ] as const) {
      const file = writeConfig(tmp.dir, 'big.json', defaultJob(edit));
      for (const cmd of [
        ['validate', file],
        ['train', '-c', file, '--out', runDir()],
      ]) {
        refused(corl(cmd), 'CORL_ERR_CONFIG_MEMORY', `${field}: expected`, `lower ${field}`);
      }
    }
  });

  it('corl:arith sizes past what the options can draw, or past the schema, are refused before drawing', () => {
    for (const [options, code, says] of [
      [{ train: 1e7 }, 'CORL_ERR_CONFIG_INVALID', 'task.options.train: expected a number <= 1000000'],
      [
        { pretrain: { size: 1e7 } },
        'CORL_ERR_CONFIG_INVALID',
        'task.options.pretrain.size: expected a number <= 1000000',
      ],
      [
        { train: 30000, digits: { min: 1, max: 1 }, operands: { min: 2, max: 2 } },
        'CORL_ERR_TASK_DATA',
        'task.options.train: expected at most 200 distinct problems',
      ],
    ] as const) {
      const file = writeConfig(
        tmp.dir,
        'arith.json',
        defaultJob((c) => Object.assign(c.task.options, options)),
      );
      refused(corl(['validate', file]), code, says);
    }
  });

  it('the corl:jsonl sink holds each record exactly once when a run stops in the middle and resumes', () => {
    const config = (sink: string) =>
      coRlConfig({
        metrics: [{ use: 'corl:jsonl', options: { path: sink } }],
        trainer: { steps: 9, batchSize: 4, groupSize: 5, evalEvery: 3, checkpointEvery: 2, sampling: { maxTokens: 4 } },
      });
    const whole = path.join(tmp.dir, 'whole');
    expect(
      corl(['train', '-c', writeConfig(tmp.dir, 'whole.json', config('whole.jsonl')), '--out', whole, '-q']).status,
    ).to.equal(0);
    // The sink file starts with another run's lines (runs that follow one another may share it).
    const shared = path.join(tmp.dir, 'shared.jsonl');
    fs.writeFileSync(shared, '{"earlier":"run","step":99}\n');
    const file = writeConfig(tmp.dir, 'crash.json', config('shared.jsonl'));
    const out = runDir();
    // Update 6 is step 6: checkpoint 4 is behind it, steps 5 and 6's records already in the sink.
    const crashed = corl(['train', '-c', file, '--out', out, '-q'], { CORL_TEST_CRASH_AT_UPDATE: '6' });
    expect(crashed.status, crashed.stderr).to.equal(1);
    expect(fs.readFileSync(shared, 'utf8')).to.contain('"step":5');
    const resumed = corl(['train', '--resume', out, '-q']);
    expect(resumed.status, resumed.stderr).to.equal(0);
    const lines = fs.readFileSync(shared, 'utf8').split('\n');
    expect(lines[0]).to.equal('{"earlier":"run","step":99}');
    expect(lines.slice(1).join('\n')).to.equal(fs.readFileSync(path.join(whole, 'metrics.jsonl'), 'utf8'));
    expect(fs.readFileSync(path.join(out, 'metrics.jsonl'), 'utf8')).to.equal(
      fs.readFileSync(path.join(whole, 'metrics.jsonl'), 'utf8'),
    );
  });

  it('the corl:jsonl sink holds each record exactly once after kill -9 and resume', async () => {
    const config = coRlConfig({
      metrics: [{ use: 'corl:jsonl', options: { path: 'sink.jsonl' } }],
      trainer: { steps: 60, batchSize: 4, groupSize: 5, evalEvery: 3, checkpointEvery: 4, sampling: { maxTokens: 4 } },
    });
    const file = writeConfig(tmp.dir, 'kill.json', config);
    const whole = path.join(tmp.dir, 'whole');
    const wholeConfig = writeConfig(tmp.dir, 'whole.json', {
      ...config,
      metrics: [{ use: 'corl:jsonl', options: { path: 'whole-sink.jsonl' } }],
    });
    expect(corl(['train', '-c', wholeConfig, '--out', whole, '-q']).status).to.equal(0);
    const out = runDir();
    const sink = path.join(tmp.dir, 'sink.jsonl');
    // Killed once a checkpoint is behind it and the sink holds records past that checkpoint.
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'train', '-c', file, '--out', out, '-q'], { stdio: 'ignore' });
      const poll = setInterval(() => {
        try {
          const next = JSON.parse(fs.readFileSync(path.join(out, 'state.json'), 'utf8')).nextStep as number;
          const steps = fs
            .readFileSync(sink, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l).step as number);
          if (next >= 4 && steps.some((s) => s > next)) {
            clearInterval(poll);
            child.kill('SIGKILL');
          }
        } catch {
          /* not there yet */
        }
      }, 20);
      child.on('exit', (code, signal) => {
        clearInterval(poll);
        if (signal === 'SIGKILL') resolve();
        else reject(new Error(`the run ended (${code}) before it could be killed`));
      });
    });
    const resumed = corl(['train', '--resume', out, '-q']);
    expect(resumed.status, resumed.stderr).to.equal(0);
    expect(fs.readFileSync(sink, 'utf8')).to.equal(fs.readFileSync(path.join(tmp.dir, 'whole-sink.jsonl'), 'utf8'));
  });
});
