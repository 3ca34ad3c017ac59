// The snippets of docs/guide/serve.md, docs/integrations/*.md and the adapters' docstrings, as
// written: Python marked `<!-- corl:run python -->` (and the client's docstring example) runs
// against the shipped ring (configs/serve/co-rl.json, a fresh service each) and must print what its
// `print(...)  # …` comments say; trainer commands marked `<!-- corl:trainer verl|trl|openrlhf|slime -->`
// (and the adapters' docstring examples, and every command of openrlhf.md) pass the validation
// rules of the trainer release read (trainer-rules.ts: Hydra's override rules on verl's config,
// TRL's GRPOConfig batch checks on 1 to 8 processes, OpenRLHF's flags and checks and its 180 s
// request timeout against the service's waits) and load the adapter the way that trainer loads it;
// the verl data row carries the columns verl and the adapters read; every `npx corl serve -c X`
// names a shipped config or one the page defines; one set of agent names.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';
import { loadServeConfigValue } from '../../core/serve/setup';
import { buildProgram } from '../../core/cli/main';
import { INTEGRATIONS, PYTHON, checkPython, startService, type Service } from '../integrations/serve-process';
import {
  OPENRLHF_REQUEST_TIMEOUT_S,
  SLIME_FLAGS,
  cliFlags,
  grpoConfigArgs,
  hydraOverrides,
  openrlhfErrors,
  trlGrpoConfigErrors,
  verlOverrideErrors,
  verlRowErrors,
  type GrpoBatchArgs,
} from './trainer-rules';

const PAGES = ['docs/guide/serve.md', 'docs/integrations/openrlhf.md', 'docs/integrations/README.md'];
const SHIPPED = 'configs/serve/co-rl.json';

/** The environment openrlhf_agent.py reads. */
const OPENRLHF_ENV = new Set(['CORL_AGENT', 'CORL_GROUP_SIZE', 'CORL_GROUP_BY', 'CORL_SERVE_URL', 'CORL_SERVE_TOKEN', 'CORL_TOKEN_STATS', 'CORL_TOP_LOGPROBS', 'CORL_VOCAB_SIZE']);
/** TRL v1.9.0: exports of trl/__init__.py, and keyword arguments of GRPOTrainer.__init__ and GRPOConfig used here. */
const TRL_IMPORTS = new Set(['GRPOConfig', 'GRPOTrainer']);
const TRL_KWARGS: Record<string, Set<string>> = {
  GRPOTrainer: new Set(['model', 'reward_funcs', 'args', 'train_dataset', 'eval_dataset', 'processing_class']),
  GRPOConfig: new Set([
    'num_generations',
    'num_generations_eval',
    'per_device_train_batch_size',
    'per_device_eval_batch_size',
    'gradient_accumulation_steps',
    'steps_per_generation',
    'generation_batch_size',
    'remove_unused_columns',
    'seed',
  ]),
};
/** `corl serve` flags (docs/reference/cli.md). */
/** The flags `corl serve` has, read from the command itself (so a new flag needs no edit here). */
const SERVE_FLAGS = new Set(
  buildProgram()
    .commands.find((c) => c.name() === 'serve')!
    .options.flatMap((o) => [o.short, o.long])
    .filter((f): f is string => typeof f === 'string'),
);

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

/** A path as the guides write it ($CORL/…, $PWD/… or /abs/path/… of the corl package), in this checkout. */
function inRepo(p: string): string {
  return path.join(ROOT, p.replace(/^"|"$/g, '').replace(/^(\$CORL|\$PWD|\/abs\/path)\//, ''));
}

/** A Python expression's printed value, with `m` the module at `file` loaded as `loader` loads it. */
function loaded(file: string, loader: 'verl' | 'openrlhf', expr: string): string {
  const name = loader === 'verl' ? `"custom_module_%d" % hash(${JSON.stringify(file)})` : '"agent_module"';
  const r = python(
    `import importlib.util, inspect, json; s = importlib.util.spec_from_file_location(${name}, ${JSON.stringify(file)}); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); print(${expr})`,
    {},
  );
  expect(r.status, `${file}: ${r.stderr}`).to.equal(0);
  return r.stdout.trim();
}

/** verl v0.9.0: Hydra's override rules on its config, then the route's own loader and arguments. */
function checkVerl(code: string, where: string): void {
  const overrides = hydraOverrides(code);
  expect(overrides.length, where).to.be.greaterThan(2);
  expect(verlOverrideErrors(overrides), `${where} (verl v0.9.0 Hydra)`).to.deep.equal([]);
  const got = new Map(overrides.map((o) => [o.key, o.value]));
  const n = got.get('actor_rollout_ref.rollout.n');
  if (got.get('reward.reward_manager.source') === 'importlib') {
    const file = inRepo(got.get('reward.reward_manager.module.path')!);
    expect(fs.existsSync(file), `${where}: ${file}`).to.equal(true);
    const name = got.get('reward.reward_manager.name')!;
    expect(
      loaded(file, 'verl', `issubclass(m.${name}, m.RewardManagerBase), inspect.iscoroutinefunction(m.${name}.run_single)`),
      where,
    ).to.equal('True True');
    // What the manager reads under reward.reward_kwargs.corl, from its own source.
    const reads = new Set([...fs.readFileSync(file, 'utf8').matchAll(/_get\(corl, "(\w+)"/g)].map((m) => m[1]!));
    expect(reads, file).to.include.members(['agent', 'url', 'group_size']);
    for (const o of overrides.filter((x) => x.key.startsWith('reward.reward_kwargs.'))) {
      expect(o.key, `${where}: ${o.key}`).to.match(/^reward\.reward_kwargs\.corl\.\w+$/);
      expect(reads, `${where}: ${o.key}`).to.include(o.key.split('.').pop());
    }
  } else if (got.has('reward.custom_reward_function.path')) {
    const file = inRepo(got.get('reward.custom_reward_function.path')!);
    expect(fs.existsSync(file), `${where}: ${file}`).to.equal(true);
    const name = got.get('reward.custom_reward_function.name') ?? 'compute_score';
    const params = JSON.parse(
      loaded(file, 'verl', `json.dumps([inspect.iscoroutinefunction(m.${name}), list(inspect.signature(m.${name}).parameters)])`),
    ) as [boolean, string[]];
    expect(params[0], `${where}: ${name} is awaited by the naive manager`).to.equal(true);
    // verl calls it with data_source, solution_str, ground_truth, extra_info, reward_kwargs merged in.
    expect(params[1], where).to.include.members(['data_source', 'solution_str', 'ground_truth', 'extra_info']);
    const kwargs = overrides.filter((x) => x.key.startsWith('reward.custom_reward_function.reward_kwargs.'));
    for (const o of kwargs) expect(params[1], `${where}: ${o.key}`).to.include(o.key.split('.').pop());
    // compute_score refuses to run without its agent and group size.
    expect(kwargs.map((o) => o.key.split('.').pop()), where).to.include.members(['agent', 'group_size']);
    const size = got.get('reward.custom_reward_function.reward_kwargs.group_size');
    if (n !== undefined) expect(size, `${where}: group_size = rollout.n`).to.equal(n);
  } else expect.fail(`${where}: neither reward.reward_manager.source=importlib nor reward.custom_reward_function.path`);
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
  // TRL v1.9.0 GRPOConfig.__post_init__'s batch rules, on one GPU and on several.
  const args = grpoConfigArgs(code) as GrpoBatchArgs;
  expect(Object.keys(args).length, `${where}: a GRPOConfig(...)`).to.be.greaterThan(0);
  for (const processes of [1, 2, 3, 4, 8])
    expect(trlGrpoConfigErrors(args, processes), `${where} on ${processes} process(es) (TRL v1.9.0)`).to.deep.equal([]);
  if (/id_column=/.test(code)) expect(args.remove_unused_columns, `${where}: columns must reach the reward`).to.not.equal(true);
}

/** The serve configs a page defines (`<!-- corl:serve-config -->`), by the file name its commands use. */
function pageConfigs(page: string): Map<string, unknown> {
  const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
  return new Map(
    [...text.matchAll(/<!-- corl:serve-config -->\s*\n```json\n([\s\S]*?)\n```/g)].map((m) => {
      const c = JSON.parse(m[1]!) as { name: string };
      return [`${c.name}.json`, c] as const;
    }),
  );
}

/** The serve config (defaults applied) that a block's `npx corl serve -c X` starts, if any. */
async function servedBy(code: string, page: string): Promise<{ serve: any; self: boolean; agents: string[] } | undefined> {
  const m = /npx corl serve -c (\S+)/.exec(code);
  if (!m) return undefined;
  const file = inRepo(m[1]!);
  const value = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : pageConfigs(page).get(m[1]!);
  expect(value, `${page}: ${m[1]}`).to.not.equal(undefined);
  const { config } = await loadServeConfigValue(value, { baseDir: ROOT });
  const c = config as any;
  const topology = typeof c.topology === 'string' ? c.topology : c.topology.use;
  return { serve: c.serve, self: topology === 'corl:self', agents: (c.agents as { name: string }[]).map((a) => a.name) };
}

/** OpenRLHF v0.11.0: its parser and checks, its loader, and the 180 s request timeout against the service's waits. */
async function checkOpenrlhf(code: string, where: string, page: string): Promise<void> {
  const flags = cliFlags(code);
  expect(openrlhfErrors(flags), `${where} (OpenRLHF v0.11.0)`).to.deep.equal([]);
  const env = new Map([...code.matchAll(/\b(CORL_[A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!] as const));
  for (const k of env.keys()) expect(OPENRLHF_ENV, where).to.include(k);
  const n = flags.get('--rollout.n_samples_per_prompt');
  expect(n, `${where}: a group reward needs K samples per prompt`).to.not.equal(undefined);
  const served = await servedBy(code, page);
  const agent = flags.get('--train.agent_func_path');
  if (agent !== undefined) {
    const file = inRepo(agent);
    expect(loaded(file, 'openrlhf', 'issubclass(m.AgentExecutor, m.AgentExecutorBase)'), `${where}: ${file}`).to.equal('True');
    if (env.has('CORL_GROUP_SIZE')) expect(env.get('CORL_GROUP_SIZE'), `${where}: CORL_GROUP_SIZE = K`).to.equal(n);
    if (flags.has('--eval.dataset'))
      expect(flags.get('--eval.n_samples_per_prompt'), `${where}: evaluation groups of K (default 4)`).to.equal(n);
    if (served && served.serve.groupSize > 0) expect(String(served.serve.groupSize), where).to.equal(n);
  }
  const url = flags.get('--reward.remote_url');
  if (url !== undefined) {
    expect(served, `${where}: a --reward.remote_url block starts the service it calls (npx corl serve -c …)`).to.not.equal(undefined);
    const s = served!;
    expect(String(s.serve.getReward.groupSize), `${where}: getReward.groupSize = K`).to.equal(n);
    const wait = s.serve.getReward.wait + (s.self ? 0 : s.serve.exchange.wait);
    expect(wait, `${where}: getReward.wait + exchange.wait under OpenRLHF's ${OPENRLHF_REQUEST_TIMEOUT_S} s`).to.be.below(
      OPENRLHF_REQUEST_TIMEOUT_S,
    );
    for (const m of url.matchAll(/[?&]agent=([\w-]+)/g)) expect(s.agents, where).to.include(m[1]);
  }
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

  it('trainer commands pass the trainer release own checks (trainer-rules.ts) and load the adapters as the trainer does', async () => {
    const trainers = all.filter((b) => b.kind.startsWith('trainer '));
    expect(trainers.map((b) => b.kind).sort()).to.include.members(['trainer openrlhf', 'trainer slime', 'trainer trl', 'trainer verl']);
    expect(trainers.filter((b) => b.kind === 'trainer verl').length).to.be.at.least(2); // both verl routes
    for (const b of trainers) {
      const kind = b.kind.slice('trainer '.length);
      if (kind === 'verl') checkVerl(b.code, b.page);
      else if (kind === 'trl') checkTrl(b.code, b.page);
      else if (kind === 'openrlhf') await checkOpenrlhf(b.code, b.page, b.page);
      else if (kind === 'slime') checkSlime(b.code, b.page);
      else expect.fail(`${b.page}: unknown trainer block "${kind}"`);
    }
    checkVerl(docstringExamples('verl_reward_loop.py')[0]!, 'verl_reward_loop.py (docstring)');
    checkTrl(docstringExamples('trl_reward.py')[0]!, 'trl_reward.py (docstring)');
    await checkOpenrlhf(docstringExamples('openrlhf_agent.py')[0]!, 'openrlhf_agent.py (docstring)', 'docs/integrations/openrlhf.md');
    checkSlime(docstringExamples('slime_rm.py')[0]!, 'slime_rm.py (docstring)');
    // openrlhf.md's commands are plain sh blocks: each is an OpenRLHF command, checked alike.
    const page = 'docs/integrations/openrlhf.md';
    const orl = fs.readFileSync(path.join(ROOT, page), 'utf8');
    const sh = [...orl.matchAll(/```sh\n([\s\S]*?)\n```/g)];
    expect(sh.length).to.be.at.least(3);
    for (const m of sh) await checkOpenrlhf(m[1]!, page, page);
  });

  it('no trainer command goes unchecked: every sh or Python block that runs a trainer is marked', () => {
    for (const page of PAGES) {
      const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
      for (const m of text.matchAll(/(<!-- corl:[^>]*-->\s*\n)?```(sh|python)\n([\s\S]*?)\n```/g)) {
        const runsTrainer = /verl\.trainer\.main_ppo|openrlhf\.cli|train\.py|from trl import/.test(m[3]!);
        if (runsTrainer && page !== 'docs/integrations/openrlhf.md')
          expect(m[1], `${page}: an unmarked trainer block:\n${m[3]}`).to.match(/corl:trainer/);
      }
    }
  });

  it('the verl data row of the guide has what verl v0.9.0 and the adapters read, for both routes', () => {
    const rows = [...fs.readFileSync(path.join(ROOT, 'docs/guide/serve.md'), 'utf8').matchAll(/<!-- corl:verl-row -->\s*\n```json\n([\s\S]*?)\n```/g)];
    expect(rows.length).to.equal(1);
    const row = JSON.parse(rows[0]![1]!) as Record<string, unknown>;
    expect(verlRowErrors(row, 'reward-loop')).to.deep.equal([]);
    expect(verlRowErrors(row, 'compute_score')).to.deep.equal([]);
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
        expect(fs.existsSync(inRepo(config)) || defined.has(config), `${page}: ${config}`).to.equal(true);
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
