// The snippets of docs/guide/serve.md, docs/integrations/*.md and the adapters' docstrings, as
// written: Python marked `<!-- corl:run python -->` (and the client's docstring example) runs
// against the shipped ring (configs/serve/co-rl.json, a fresh service each) and must print what its
// `print(...)  # …` comments say; trainer commands marked `<!-- corl:trainer verl|trl|openrlhf -->`
// (and the adapters' docstring examples) may only name settings that the trainer release read has
// (the facts below, from its source at that tag) and that corl's adapters accept; every
// `npx corl serve -c X` names a shipped config or one the page defines; one set of agent names.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';
import { INTEGRATIONS, PYTHON, checkPython, startService, type Service } from '../integrations/serve-process';

const PAGES = ['docs/guide/serve.md', 'docs/integrations/openrlhf.md', 'docs/integrations/README.md'];
const SHIPPED = 'configs/serve/co-rl.json';

/** verl v0.9.0: keys of verl/trainer/config/reward/reward.yaml and rollout/rollout.yaml a command may set. */
const VERL_KEYS = new Set([
  'actor_rollout_ref.rollout.n',
  'actor_rollout_ref.rollout.response_length',
  'reward.num_workers',
  'reward.custom_reward_function.path',
  'reward.custom_reward_function.name',
  'reward.reward_manager.source',
  'reward.reward_manager.name',
  'reward.reward_manager.module.path',
  'reward.reward_manager.module.name',
]);
/** What CorlRewardManager reads under reward.reward_kwargs.corl (added with "+": reward.yaml has no reward_kwargs). */
const VERL_CORL = new Set(['agent', 'url', 'token', 'wait', 'group_size', 'id_key', 'validation_splits']);
/** OpenRLHF v0.11.0: flags of openrlhf/cli/train_ppo_ray.py that the docs use. */
const OPENRLHF_FLAGS = new Set([
  '--rollout.n_samples_per_prompt',
  '--data.label_key',
  '--reward.remote_url',
  '--train.agent_func_path',
  '--eval.n_samples_per_prompt',
]);
/** The environment openrlhf_agent.py reads. */
const OPENRLHF_ENV = new Set(['CORL_AGENT', 'CORL_GROUP_SIZE', 'CORL_GROUP_BY', 'CORL_SERVE_URL', 'CORL_SERVE_TOKEN']);
/** TRL v1.9.0: exports of trl/__init__.py, and keyword arguments of GRPOTrainer.__init__ and GRPOConfig used here. */
const TRL_IMPORTS = new Set(['GRPOConfig', 'GRPOTrainer']);
const TRL_KWARGS: Record<string, Set<string>> = {
  GRPOTrainer: new Set(['model', 'reward_funcs', 'args', 'train_dataset', 'eval_dataset', 'processing_class']),
  GRPOConfig: new Set(['num_generations', 'num_generations_eval', 'per_device_train_batch_size', 'steps_per_generation', 'seed']),
};
/** slime v0.3.1: flags of slime/utils/arguments.py for a group reward. */
const SLIME_FLAGS = new Set(['--group-rm', '--custom-rm-path']);
/** `corl serve` flags (docs/reference/cli.md). */
const SERVE_FLAGS = new Set(['-c', '--host', '--port', '--journal', '--tokens-file', '--token-file', '--allow-no-token']);

interface Block {
  readonly page: string;
  readonly kind: string;
  readonly code: string;
}

function blocks(page: string): Block[] {
  const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
  return [...text.matchAll(/<!-- corl:(run python|trainer \w+) -->\s*\n```\w+\n([\s\S]*?)\n```/g)].map((m) => ({
    page,
    kind: m[1]!,
    code: m[2]!,
  }));
}

/** The indented example blocks of a Python file's module docstring. */
function docstringExamples(file: string): string[] {
  const text = fs.readFileSync(path.join(INTEGRATIONS, file), 'utf8');
  const doc = /^r?"""([\s\S]*?)"""/.exec(text)![1]!;
  const out: string[] = [];
  let cur: string[] = [];
  for (const line of [...doc.split('\n'), '']) {
    if (line.startsWith('    ')) cur.push(line.slice(4));
    else if (line.trim() === '' && cur.length) cur.push('');
    else if (cur.length) {
      out.push(cur.join('\n').trim());
      cur = [];
    }
  }
  if (cur.length) out.push(cur.join('\n').trim());
  return out.filter((b) => b.length > 0);
}

/** What a snippet's `print(...)  # expected: remark` comments say it prints, in order. */
function expectedPrints(code: string): string[] {
  return [...code.matchAll(/^\s*print\(.*\)\s+#\s*(.*)$/gm)].map((m) => m[1]!.split(/: /)[0]!.trim());
}

/**
 * Run `code` as a user's script in a fresh folder holding copies of `beside` (adapter files of
 * docs/integrations) and nothing else: `python3 -E -s script.py`, so the script's own folder is on
 * sys.path as for any script, and no PYTHONPATH or user site. With `pythonPath`, that folder is the
 * PYTHONPATH instead (slime's import_module) and the script runs from another.
 */
function python(
  code: string,
  env: Record<string, string>,
  { beside = [] as readonly string[], pythonPath = false } = {},
): { stdout: string; stderr: string; status: number | null } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-snippet-'));
  try {
    const lib = path.join(dir, 'lib');
    const user = path.join(dir, 'user');
    fs.mkdirSync(lib);
    fs.mkdirSync(user);
    for (const f of beside) fs.copyFileSync(path.join(INTEGRATIONS, f), path.join(pythonPath ? lib : user, f));
    fs.writeFileSync(path.join(user, 'script.py'), code);
    const childEnv: Record<string, string | undefined> = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env };
    delete childEnv.PYTHONPATH;
    if (pythonPath) childEnv.PYTHONPATH = lib;
    const flags = pythonPath ? ['-s', '-B'] : ['-E', '-s', '-B'];
    const r = spawnSync(PYTHON, [...flags, path.join(user, 'script.py')], {
      encoding: 'utf8',
      env: childEnv,
      cwd: user,
      timeout: 60000,
    });
    return { stdout: r.stdout, stderr: r.stderr, status: r.status };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function checkVerl(code: string, where: string): void {
  const settings = [...code.matchAll(/(\+?)([A-Za-z_.]+)=(\S+)/g)].filter((m) => m[2]!.includes('.'));
  expect(settings.length, where).to.be.greaterThan(2);
  const got: Record<string, string> = {};
  for (const [, plus, key, value] of settings) {
    if (plus) {
      expect(key, `${where}: ${key}`).to.match(/^reward\.reward_kwargs\.corl\./);
      expect(VERL_CORL, `${where}: ${key}`).to.include(key!.split('.').pop());
    } else expect(VERL_KEYS, `${where}: ${key} (verl v0.9.0)`).to.include(key);
    got[key!] = value!.replace(/^\$PWD\//, '').replace(/^\/abs\/path\//, '');
  }
  expect(got['reward.reward_manager.source'], where).to.equal('importlib');
  const file = got['reward.reward_manager.module.path']!;
  expect(fs.existsSync(path.join(ROOT, file)), `${where}: ${file}`).to.equal(true);
  const name = got['reward.reward_manager.name']!;
  const r = python(
    `import importlib.util, inspect; s = importlib.util.spec_from_file_location("m", ${JSON.stringify(path.join(ROOT, file))}); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); c = getattr(m, ${JSON.stringify(name)}); print(issubclass(c, m.RewardManagerBase), inspect.iscoroutinefunction(c.run_single))`,
    {},
  );
  expect(r.stdout.trim(), `${where}: ${r.stderr}`).to.equal('True True');
}

/** The top-level keyword names of each call `name(…)` in `code` (nested calls' keywords left out). */
function callKeywords(code: string, name: string): string[][] {
  const out: string[][] = [];
  for (const m of code.matchAll(new RegExp(`\\b${name}\\(`, 'g'))) {
    let depth = 0;
    let top = '';
    for (let i = m.index! + m[0].length; i < code.length; i++) {
      const c = code[i]!;
      if (c === '(' || c === '[' || c === '{') depth++;
      else if (c === ')' || c === ']' || c === '}') {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0) top += c;
      if (depth > 0) top += ' ';
    }
    out.push([...top.matchAll(/(?:^|,)\s*(\w+)\s*=/g)].map((k) => k[1]!));
  }
  return out;
}

function checkTrl(code: string, where: string): void {
  for (const m of code.matchAll(/^from trl import (.+)$/gm))
    for (const n of m[1]!.split(',')) expect(TRL_IMPORTS, `${where} (TRL v1.9.0)`).to.include(n.trim());
  for (const [cls, allowed] of Object.entries(TRL_KWARGS))
    for (const kws of callKeywords(code, cls)) for (const kw of kws) expect(allowed, `${where}: ${cls}(${kw}=)`).to.include(kw);
  // The adapter calls: imported and called with keywords its signature accepts.
  const adapter = /^from trl_reward import (.+)$/m.exec(code)?.[1]?.split(',').map((n) => n.trim()) ?? [];
  expect(adapter.length, where).to.be.greaterThan(0);
  const calls = adapter.flatMap((n) => callKeywords(code, n).map((kws) => [n, kws] as const));
  const r = python(
    `import inspect, json, trl_reward; print(json.dumps({n: list(inspect.signature(getattr(trl_reward, n)).parameters) for n in ${JSON.stringify(adapter)}}))`,
    {},
    { beside: ['trl_reward.py'] },
  );
  const params = JSON.parse(r.stdout) as Record<string, string[]>;
  for (const [n, kws] of calls) for (const kw of kws) expect(params[n], `${where}: ${n}(${kw}=)`).to.include(kw);
}

function checkOpenrlhf(code: string, where: string): void {
  const agents = (JSON.parse(fs.readFileSync(path.join(ROOT, SHIPPED), 'utf8')) as { agents: { name: string }[] }).agents.map((a) => a.name);
  // Every flag of the trainer's lines (the renamed ones of v0.10.2 included: --label_key is gone).
  const trainerLines = code.split('\n').filter((l) => !/npx corl serve/.test(l));
  for (const l of trainerLines)
    for (const m of l.matchAll(/(?<![\w-])(--[a-z][a-z_.]*)/g)) expect(OPENRLHF_FLAGS, `${where} (OpenRLHF v0.11.0)`).to.include(m[1]);
  for (const m of code.matchAll(/\b(CORL_[A-Z_]+)=/g)) expect(OPENRLHF_ENV, where).to.include(m[1]);
  for (const m of code.matchAll(/--train\.agent_func_path\s+(\S+)/g)) {
    const file = m[1]!.replace(/^\$PWD\//, '').replace(/^\/abs\/path\//, '');
    const r = python(
      `import importlib.util; s = importlib.util.spec_from_file_location("agent_module", ${JSON.stringify(path.join(ROOT, file))}); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); print(issubclass(m.AgentExecutor, m.AgentExecutorBase))`,
      {},
    );
    expect(r.stdout.trim(), `${where}: ${file} ${r.stderr}`).to.equal('True');
  }
  for (const m of code.matchAll(/\/get_reward\?agent=([\w-]+)/g)) expect(agents, where).to.include(m[1]);
}

function checkSlime(code: string, where: string): void {
  for (const l of code.split('\n'))
    for (const m of l.matchAll(/(?<![\w-])(--[a-z][a-z_.-]*)/g)) expect(SLIME_FLAGS, `${where} (slime v0.3.1)`).to.include(m[1]);
  for (const m of code.matchAll(/\b(CORL_[A-Z_]+)=/g)) expect(['CORL_AGENT', 'CORL_SERVE_URL', 'CORL_SERVE_TOKEN', 'CORL_ID_KEY'], where).to.include(m[1]);
  // slime's load_function: importlib.import_module of the dotted path's module, then the attribute.
  for (const m of code.matchAll(/--custom-rm-path\s+(\S+)/g)) {
    const r = python(
      `import importlib, inspect; m, _, a = ${JSON.stringify(m[1])}.rpartition("."); print(inspect.iscoroutinefunction(getattr(importlib.import_module(m), a)))`,
      {},
      { beside: ['slime_rm.py'], pythonPath: true },
    );
    expect(r.stdout.trim(), `${where}: ${m[1]} ${r.stderr}`).to.equal('True');
  }
}

describe('serve snippets: the guides and docstrings as written', function () {
  this.timeout(180000);
  let tmp: ReturnType<typeof tempDir>;
  before(checkPython);
  beforeEach(() => {
    tmp = tempDir('corl-snippets-');
  });
  afterEach(() => tmp.cleanup());

  const all = PAGES.flatMap(blocks);
  const runnable = [
    ...all.filter((b) => b.kind === 'run python').map((b) => ({ where: b.page, code: b.code })),
    { where: 'docs/integrations/corl_client.py (docstring)', code: docstringExamples('corl_client.py')[0]! },
  ];

  it('runs every Python snippet against the shipped ring, each printing what it says', async () => {
    expect(runnable.length).to.be.at.least(3);
    for (const [i, s] of runnable.entries()) {
      // A fresh service per snippet (each posts its own steps), its journal in a temporary folder.
      const service: Service = await startService(path.join(ROOT, SHIPPED), path.join(tmp.dir, `journal-${i}.jsonl`));
      try {
        // As a user runs it: a script with corl_client.py copied beside it.
        const r = python(s.code, { CORL_SERVE_URL: service.url }, { beside: ['corl_client.py'] });
        expect(r.status, `${s.where}: ${r.stderr}`).to.equal(0);
        const expected = expectedPrints(s.code);
        expect(expected.length, s.where).to.be.greaterThan(0);
        expect(r.stdout.trim().split('\n'), s.where).to.deep.equal(expected);
      } finally {
        await service.stop();
      }
    }
  });

  it('trainer commands name only settings of the trainer release read and of the adapters', () => {
    const trainers = all.filter((b) => b.kind.startsWith('trainer '));
    expect(trainers.map((b) => b.kind).sort()).to.include.members(['trainer openrlhf', 'trainer slime', 'trainer trl', 'trainer verl']);
    for (const b of trainers) {
      const kind = b.kind.slice('trainer '.length);
      if (kind === 'verl') checkVerl(b.code, b.page);
      else if (kind === 'trl') checkTrl(b.code, b.page);
      else if (kind === 'openrlhf') checkOpenrlhf(b.code, b.page);
      else if (kind === 'slime') checkSlime(b.code, b.page);
      else expect.fail(`${b.page}: unknown trainer block "${kind}"`);
    }
    checkVerl(docstringExamples('verl_reward_loop.py')[0]!, 'verl_reward_loop.py (docstring)');
    checkTrl(docstringExamples('trl_reward.py')[0]!, 'trl_reward.py (docstring)');
    checkOpenrlhf(docstringExamples('openrlhf_agent.py')[0]!, 'openrlhf_agent.py (docstring)');
    checkSlime(docstringExamples('slime_rm.py')[0]!, 'slime_rm.py (docstring)');
    // openrlhf.md's commands are plain sh blocks: their flags too.
    const orl = fs.readFileSync(path.join(ROOT, 'docs/integrations/openrlhf.md'), 'utf8');
    for (const m of orl.matchAll(/```sh\n([\s\S]*?)\n```/g)) checkOpenrlhf(m[1]!, 'docs/integrations/openrlhf.md');
  });

  it('every `corl serve` command names a shipped config or one its page defines, with flags corl serve has', () => {
    for (const page of PAGES) {
      const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
      const defined = new Set(
        [...text.matchAll(/<!-- corl:serve-config -->\s*\n```json\n([\s\S]*?)\n```/g)].map(
          (m) => `${(JSON.parse(m[1]!) as { name: string }).name}.json`,
        ),
      );
      const commands = [...text.matchAll(/```sh\n([\s\S]*?)\n```/g)].flatMap((b) => [...b[1]!.matchAll(/npx corl serve (.*)$/gm)]);
      for (const m of commands) {
        const args = m[1]!.replace(/#.*$/, '').trim().split(/\s+/);
        const config = args[args.indexOf('-c') + 1]!;
        expect(fs.existsSync(path.join(ROOT, config)) || defined.has(config), `${page}: ${config}`).to.equal(true);
        for (const a of args.filter((x) => x.startsWith('-'))) expect(SERVE_FLAGS, `${page}: ${a}`).to.include(a);
      }
    }
  });

  it('one set of agent names: the shipped configs, the guides and the adapters say agent-0 and agent-1', () => {
    const names = new Set<string>();
    for (const f of fs.readdirSync(path.join(ROOT, 'configs/serve')))
      for (const a of (JSON.parse(fs.readFileSync(path.join(ROOT, 'configs/serve', f), 'utf8')) as { agents: { name: string }[] }).agents)
        names.add(a.name);
    expect([...names].sort()).to.deep.equal(['agent-0', 'agent-1']);
    const texts = [
      ...PAGES,
      ...fs.readdirSync(INTEGRATIONS).filter((f) => f.endsWith('.py')).map((f) => `docs/integrations/${f}`),
    ].map((p) => [p, fs.readFileSync(path.join(ROOT, p), 'utf8')] as const);
    for (const [p, t] of texts) {
      for (const m of t.matchAll(/(?:"agent"\s*:\s*"|agent="|\?agent=|CORL_AGENT=)([\w-]+)/g))
        expect(names, `${p}: ${m[0]}`).to.include(m[1]);
      for (const m of t.matchAll(/"name":\s*"([\w-]+)"\s*\}/g)) expect(names, `${p}: ${m[0]}`).to.include(m[1]);
    }
  });
});
