// corl:python against real python3 processes: what a TRL-style and a verl-style function receive,
// how their answers become rewards, and every way a researcher's function can go wrong.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RewardContext, RewardSource } from '../../../../core/contracts/reward-source';
import { isCorlError, type CorlError } from '../../../../core/errors';
import { createPlugin, rewardContext } from '../../../../core/testing';
import { pythonReward } from '../../../../plugins/rewards/python';
import { voteReward } from '../../../../plugins/rewards/vote';
import { tempDir } from '../../../fixtures/configs';

let tmp: ReturnType<typeof tempDir>;
const open: RewardSource[] = [];

/** Write a Python module into the temporary folder; returns its path. */
function py(name: string, source: string): string {
  const file = path.join(tmp.dir, name);
  fs.writeFileSync(file, source.replace(/^\n/, ''));
  return file;
}

async function make(options: Record<string, unknown>, seed = 0): Promise<RewardSource> {
  const r = await createPlugin(pythonReward, { stderr: 'discard', ...options }, { baseDir: tmp.dir, seed });
  open.push(r);
  return r;
}

async function failure(p: Promise<unknown>): Promise<CorlError> {
  try {
    await p;
  } catch (e) {
    expect(isCorlError(e), String((e as Error)?.stack ?? e)).to.equal(true);
    const err = e as CorlError;
    expect(err.message, 'no JavaScript stack in the message').to.not.match(/\n\s+at /);
    return err;
  }
  expect.fail('expected a coded error');
}

/** A module whose function appends what it was called with to `calls.jsonl`, and returns `body`'s rewards. */
function recorder(name: string, body = 'return [0.0] * len(completions)'): string {
  const log = path.join(tmp.dir, `${name}.jsonl`);
  return py(
    `${name}.py`,
    `
import json

def plain(v):
    if callable(v):
        return "<callable %s>" % v.__name__
    if hasattr(v, "__dict__"):
        return {"__class__": type(v).__name__, **{k: plain(x) for k, x in vars(v).items()}}
    return v

def reward_func(prompts, completions, **kwargs):
    with open(${JSON.stringify(log)}, "a") as f:
        f.write(json.dumps({"prompts": prompts, "completions": completions,
                            **{k: plain(v) for k, v in kwargs.items()}}) + "\\n")
    ${body}
`,
  );
}

function calls(name: string): Record<string, any>[] {
  const file = path.join(tmp.dir, `${name}.jsonl`);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const problem = { id: 'p7', prompt: 'What is 2 + 2?', metadata: { level: 3, source: 'toy' } };

describe('corl:python (a Python reward function in a long-lived process)', function () {
  before(() => {
    tmp = tempDir('corl-python-');
  });
  afterEach(async () => {
    for (const r of open.splice(0)) await r.close?.();
  });
  after(() => tmp.cleanup());

  describe('TRL signature: reward_func(prompts, completions, **kwargs)', () => {
    it('is called with TRL’s keyword arguments, one entry per completion, and corl’s label-free context', async () => {
      const module = recorder('trl-args');
      const r = await make({ module });
      const ctx = rewardContext({
        problem,
        keys: ['4', '5', null],
        supervisors: [['4', '4', '5']],
        step: 2,
        totalSteps: 10,
        agent: 1,
        agents: 2,
        finishReasons: ['stop', 'length', 'stop'],
      });
      const res = await r.score(ctx);
      expect(res.rewards).to.deep.equal([0, 0, 0]);
      const [c] = calls('trl-args');
      const texts = ctx.completions.map((x) => x.text);
      expect(c!.prompts).to.deep.equal(['What is 2 + 2?', 'What is 2 + 2?', 'What is 2 + 2?']);
      expect(c!.completions).to.deep.equal(texts);
      expect(c!.completion_ids).to.deep.equal(texts.map((t) => [...t].map((ch) => ch.charCodeAt(0))));
      expect(c!.trainer_state).to.deep.include({ __class__: 'TrainerState', global_step: 2, max_steps: 10 });
      expect(c!.log_extra).to.equal('<callable log_extra>');
      expect(c!.log_metric).to.equal('<callable log_metric>');
      // dataset-like columns, repeated per completion as TRL repeats dataset columns
      expect(c!.problem_id).to.deep.equal(['p7', 'p7', 'p7']);
      expect(c!.level).to.deep.equal([3, 3, 3]);
      expect(c!.source).to.deep.equal(['toy', 'toy', 'toy']);
      // the label-free context
      expect(c!.answer_keys).to.deep.equal(['4', '5', null]);
      expect(c!.extracted_answers).to.deep.equal(['4', '5', null]);
      expect(c!.finish_reasons).to.deep.equal(['stop', 'length', 'stop']);
      expect(c!.pseudo_label).to.deep.equal(['4', '4', '4']);
      expect(c!.matches_pseudo_label).to.deep.equal([true, false, false]);
      expect(c!.supervisor_answer_keys).to.deep.equal(new Array(3).fill([['4', '4', '5']]));
      expect(c!.corl).to.deep.equal({
        __class__: 'SimpleNamespace',
        agent: 1,
        agents: 2,
        step: 2,
        round: null,
        supervisors: [2],
      });
      // nothing else, and never a reference
      expect(Object.keys(c!).sort()).to.deep.equal(
        [
          'prompts',
          'completions',
          'completion_ids',
          'trainer_state',
          'log_extra',
          'log_metric',
          'corl',
          'problem_id',
          'level',
          'source',
          'answer_keys',
          'extracted_answers',
          'finish_reasons',
          'pseudo_label',
          'matches_pseudo_label',
          'supervisor_answer_keys',
        ].sort(),
      );
    });

    it('a Co-RL reward in Python gives exactly corl:vote’s rewards and labels', async () => {
      const module = py(
        'co_rl.py',
        `
def reward_func(prompts, completions, matches_pseudo_label, **kwargs):
    return [1.0 if m else 0.0 for m in matches_pseudo_label]
`,
      );
      const r = await make({ module });
      const vote = await createPlugin(voteReward, {});
      const contexts: RewardContext[] = [
        rewardContext({ keys: ['4', '4', '4', '5'], supervisors: [['4', '4', '5', '4']] }),
        rewardContext({ keys: ['1', '2', '3', '4'], supervisors: [['4', '3', '2', '1']], step: 3 }),
        rewardContext({ keys: [null, '4', null, '6'], supervisors: [['6', null, null, '6']] }),
        rewardContext({ keys: ['7', '7', '8', null], supervisors: [{ agent: 0, keys: ['7', '7', '8', null] }] }),
        rewardContext({ keys: [null, null], supervisors: [[null, null]] }),
        rewardContext({ keys: [], supervisors: [['4', '4']] }),
      ];
      const got = await r.scoreMany!(contexts);
      for (const [i, ctx] of contexts.entries()) {
        const want = await vote.score(ctx);
        expect(got[i]!.rewards, `context ${i}`).to.deep.equal(want.rewards);
        expect(got[i]!.label, `context ${i}`).to.equal(want.label);
        expect(got[i]!.ownLabel, `context ${i}`).to.equal(want.ownLabel);
      }
    });

    it('None abstains: the completion gets its group’s mean of scored rewards (advantage 0), a group of only None gets 0', async () => {
      const module = py(
        'abstain.py',
        `
def reward_func(prompts, completions, **kwargs):
    table = {"a": 1.0, "b": None, "c": 0.0, "d": None, "e": 0.25}
    return [table[c[-1]] for c in completions]
`,
      );
      const r = await make({ module });
      const texts = (s: string) => [...s];
      const [one, all] = await r.scoreMany!([
        rewardContext({ keys: ['1', '2', '3', '4', '5'], texts: texts('abcde') }),
        rewardContext({ keys: ['1', '2'], texts: texts('bd') }),
      ]);
      const fill = (1 + 0 + 0.25) / 3;
      expect(one!.rewards).to.deep.equal([1, fill, 0, fill, 0.25]);
      expect(one!.metrics!['python/abstained']).to.equal(2 / 5);
      expect(all!.rewards).to.deep.equal([0, 0]);
      expect(all!.metrics!['python/abstained']).to.equal(1);
    });

    it('takes bools, ints, tuples and generators as TRL’s torch.tensor would; log_metric values become python/<name> means', async () => {
      const module = py(
        'kinds.py',
        `
def reward_func(prompts, completions, log_metric, answer_keys, **kwargs):
    log_metric("Hits", 2)
    log_metric("Hits", 4)
    log_metric("len mean", sum(len(c) for c in completions) / len(completions))
    return tuple(k == "4" if i % 2 == 0 else (1 if k else 0) for i, k in enumerate(answer_keys))
`,
      );
      const r = await make({ module });
      const ctx = rewardContext({ keys: ['4', '5', '5', null], texts: ['ab', 'abcd', 'a', 'abc'] });
      const res = await r.score(ctx);
      expect(res.rewards).to.deep.equal([1, 1, 0, 0]);
      // it reads no supervisor's answer: its results say the pseudo-label went unused
      expect(res.metrics).to.deep.equal({
        'python/hits': 3,
        'python/len_mean': 2.5,
        'python/abstained': 0,
        'python/label_unused': 1,
      });
    });

    it('conversational format: prompts and completions as message lists, like TRL’s conversational datasets', async () => {
      const module = recorder('conv');
      const r = await make({ module, format: 'conversational' });
      await r.score(rewardContext({ keys: ['4'], texts: ['four'] }));
      const [c] = calls('conv');
      expect(c!.prompts).to.deep.equal([[{ role: 'user', content: 'What is 2 + 2?' }]]);
      expect(c!.completions).to.deep.equal([[{ role: 'assistant', content: 'four' }]]);
    });

    it('batch "group" makes one call per group; batch "step" one call per agent with every group of its step, as GRPOTrainer’s batch', async () => {
      const contexts = [0, 1].flatMap((agent) =>
        ['p1', 'p2', 'p3'].map((id) =>
          rewardContext({
            agent,
            agents: 2,
            problem: { id, prompt: `Q ${id}?` },
            keys: ['1', '2'],
            supervisors: [['1', '1']],
          }),
        ),
      );
      const g = await make({ module: recorder('by-group') });
      await g.scoreMany!(contexts);
      expect(calls('by-group').map((c) => c.problem_id)).to.deep.equal(
        contexts.map((c) => [c.problem.id, c.problem.id]),
      );
      const s = await make({ module: recorder('by-step'), batch: 'step' });
      await s.scoreMany!(contexts);
      const got = calls('by-step');
      expect(got.map((c) => c.corl.agent)).to.deep.equal([0, 1]);
      expect(got[0]!.prompts).to.deep.equal(['Q p1?', 'Q p1?', 'Q p2?', 'Q p2?', 'Q p3?', 'Q p3?']);
      expect(got[1]!.problem_id).to.deep.equal(['p1', 'p1', 'p2', 'p2', 'p3', 'p3']);
    });

    it('an async function (async def) is awaited', async () => {
      const module = py(
        'async_reward.py',
        `
import asyncio

async def reward_func(prompts, completions, **kwargs):
    await asyncio.sleep(0)
    return [float(len(c)) for c in completions]
`,
      );
      const r = await make({ module });
      expect((await r.score(rewardContext({ keys: ['1', '2'], texts: ['abc', 'de'] }))).rewards).to.deep.equal([3, 2]);
    });

    it('is reproducible: a function that draws random numbers gives the same rewards for the same inputs, other draws at another step', async () => {
      const module = py(
        'noisy.py',
        `
import random

def reward_func(prompts, completions, **kwargs):
    return [random.random() for _ in completions]
`,
      );
      const a = await make({ module }, 5);
      const b = await make({ module }, 5);
      const ctx = rewardContext({ keys: ['1', '2', '3'] });
      const first = await a.score(ctx);
      expect((await a.score(ctx)).rewards, 'the same instance again').to.deep.equal(first.rewards);
      expect((await b.score(ctx)).rewards, 'another process').to.deep.equal(first.rewards);
      expect((await a.score(rewardContext({ keys: ['1', '2', '3'], step: 1 }))).rewards).to.not.deep.equal(
        first.rewards,
      );
    });

    it('with groundTruth the reference arrives as the "solution" column (TRL’s accuracy_reward), and the run is supervised', async () => {
      const module = py(
        'accuracy.py',
        `
def reward_func(completions, solution, **kwargs):
    return [1.0 if c.endswith("{%s}." % s) else 0.0 for c, s in zip(completions, solution)]
`,
      );
      expect(pythonReward.manifest.readsGroundTruth).to.be.a('function');
      const r = await make({ module, groundTruth: true });
      const res = await r.score(rewardContext({ keys: ['4', '5'], reference: '4' }));
      expect(res.rewards).to.deep.equal([1, 0]);
      const rec = await make({ module: recorder('gt'), groundTruth: true, referenceColumn: 'answer' });
      await rec.score(rewardContext({ keys: ['4'], reference: '4' }));
      expect(calls('gt')[0]!.answer).to.deep.equal(['4']);
      const err = await failure(rec.score(rewardContext({ keys: ['4'] })));
      expect(err.code).to.equal('CORL_ERR_TASK_DATA');
    });

    it('label-free: a function that requires the reference is refused at start, naming the parameter and the option', async () => {
      const module = py(
        'needs_solution.py',
        'def reward_func(completions, solution, **kwargs):\n    return [0.0] * len(completions)\n',
      );
      const err = await failure(make({ module }));
      expect(err.code).to.equal('CORL_ERR_PYTHON_FUNCTION');
      expect(err.message)
        .to.contain("'solution'")
        .and.contain('groundTruth')
        .and.contain('corl:python options.function');
    });

    it('a function without **kwargs gets only the arguments it names', async () => {
      const module = py(
        'narrow.py',
        'def reward_func(completions, answer_keys):\n    return [1.0 if k else 0.0 for k in answer_keys]\n',
      );
      const r = await make({ module });
      expect((await r.score(rewardContext({ keys: ['1', null] }))).rewards).to.deep.equal([1, 0]);
    });
  });

  describe('verl signature: compute_score(data_source, solution_str, ground_truth, extra_info)', () => {
    const verl = `
import json, os

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    with open(os.path.join(os.path.dirname(__file__), "verl.jsonl"), "a") as f:
        f.write(json.dumps({"data_source": data_source, "solution_str": solution_str,
                            "ground_truth": ground_truth, "extra_info": extra_info}) + "\\n")
    ok = solution_str.endswith("{%s}." % ground_truth)
    return {"score": 1.0 if ok else 0.0, "acc": ok, "note": "text is ignored"}
`;

    it('with groundTruth: once per completion, ground_truth the reference; extra numeric fields become python/<name>', async () => {
      const module = py('verl_gt.py', verl);
      fs.rmSync(path.join(tmp.dir, 'verl.jsonl'), { force: true });
      const r = await make({ module, signature: 'verl', groundTruth: true });
      const res = await r.score(rewardContext({ problem, keys: ['4', '5', null], reference: '4' }));
      expect(res.rewards).to.deep.equal([1, 0, 0]);
      expect(res.metrics).to.deep.equal({ 'python/acc': 1 / 3 });
      const got = calls('verl');
      expect(got.map((c) => c.ground_truth)).to.deep.equal(['4', '4', '4']);
      expect(got[0]!.data_source).to.equal('corl');
      expect(got[1]!.extra_info).to.deep.include({
        index: 'p7',
        problem_id: 'p7',
        level: 3,
        answer_key: '5',
        num_turns: null,
      });
      expect(got[1]!.extra_info).to.not.have.property('pseudo_label');
    });

    it('label-free: ground_truth is the supervisors’ plurality label (TTRL’s verl recipe); a group without a label gets 0 uncalled', async () => {
      const module = py('verl_free.py', verl);
      fs.rmSync(path.join(tmp.dir, 'verl.jsonl'), { force: true });
      const r = await make({ module, signature: 'verl' });
      const [a, b] = await r.scoreMany!([
        rewardContext({ keys: ['4', '5'], supervisors: [['5', '5', '4']] }),
        rewardContext({ keys: ['4', '5'], supervisors: [[null, null]] }),
      ]);
      expect(a!.rewards).to.deep.equal([0, 1]);
      expect(a!.label).to.equal('5');
      expect(b!.rewards).to.deep.equal([0, 0]);
      expect(calls('verl').map((c) => c.ground_truth)).to.deep.equal(['5', '5']);
      expect(calls('verl')[0]!.extra_info).to.deep.include({ pseudo_label: '5', matches_pseudo_label: false });
    });

    it('a plain number is a score; None is refused (verl needs a number)', async () => {
      const module = py(
        'verl_none.py',
        'def compute_score(data_source, solution_str, ground_truth, extra_info):\n    return None if "5" in solution_str else 2\n',
      );
      const r = await make({ module, signature: 'verl' });
      expect((await r.score(rewardContext({ keys: ['4', '4'] }))).rewards).to.deep.equal([2, 2]);
      const err = await failure(r.score(rewardContext({ keys: ['4', '5'], supervisors: [['4']] })));
      expect(err.code).to.equal('CORL_ERR_PYTHON_OUTPUT');
      expect(err.message).to.contain("sample 1's score is None");
    });
  });

  describe('a hostile or broken function', () => {
    it('printing to stdout (from Python and from the file descriptor) and reading stdin never touch the pipe', async () => {
      const module = py(
        'noisy_io.py',
        `
import os, sys
print('{"id": 1, "results": []}')
def reward_func(prompts, completions, **kwargs):
    print('{"id": 999, "results": [{"rewards": [5]}]}')
    sys.stdout.write("\\n\\n")
    os.write(1, b'{"ready": {}}\\n')
    data = sys.stdin.read()
    os.read(0, 10)
    return [float(len(data))] * len(completions)
`,
      );
      const r = await make({ module });
      for (let i = 0; i < 3; i++)
        expect((await r.score(rewardContext({ keys: ['1', '2'] }))).rewards).to.deep.equal([0, 0]);
    });

    it('input() meets the end of stdin: the EOFError is the error, with the line that raised', async () => {
      const module = py(
        'asks.py',
        'def reward_func(prompts, completions, **kwargs):\n    x = input("score? ")\n    return [float(x)] * len(completions)\n',
      );
      const r = await make({ module });
      const err = await failure(r.score(rewardContext({ keys: ['1'] })));
      expect(err.code).to.equal('CORL_ERR_PYTHON_RAISED');
      expect(err.message).to.contain('EOFError: EOF when reading a line').and.contain('asks.py:2 in reward_func');
    });

    it('an exception: the traceback’s last line and the line of the function, the process lives on', async () => {
      const module = py(
        'raises.py',
        `
def helper(x):
    return 1 / x

def reward_func(prompts, completions, step_zero=0, **kwargs):
    if kwargs["trainer_state"].global_step == 0:
        return [helper(0)]
    return [1.0] * len(completions)
`,
      );
      const r = await make({ module });
      const err = await failure(r.score(rewardContext({ keys: ['1'] })));
      expect(err.code).to.equal('CORL_ERR_PYTHON_RAISED');
      expect(err.message).to.contain('ZeroDivisionError: division by zero').and.contain('raises.py:2 in helper');
      expect(err.where).to.equal('corl:python options.function');
      expect((await r.score(rewardContext({ keys: ['1'], step: 1 }))).rewards).to.deep.equal([1]);
    });

    it('NaN, infinity, strings, a dict, a bare number, the wrong count and a huge list are refused, saying which value', async () => {
      const module = py(
        'bad_returns.py',
        `
def reward_func(prompts, completions, corl, **kwargs):
    n = len(completions)
    return [
        lambda: [float("nan")] * n,
        lambda: [1.0, float("inf")],
        lambda: ["1.0"] * n,
        lambda: {"rewards": [1.0] * n},
        lambda: 1.0,
        lambda: [1.0] * (n - 1),
        lambda: [0.0] * 10_000_000,
        lambda: [[1.0]] * n,
        lambda: [10 ** 400] * n,
    ][corl.step]()
`,
      );
      const r = await make({ module });
      const expected = [
        'reward 0 is nan: return a finite number, or None to abstain',
        'reward 1 is inf',
        "reward 0 is '1.0' (str)",
        'expected a list of 2 rewards (one per completion, None to abstain), got dict',
        'got float',
        'expected 2 rewards (one per completion, None to abstain), got 1',
        'got 10000000',
        'reward 0 is [1.0] (list)',
        'reward 0 is inf',
      ];
      for (const [step, text] of expected.entries()) {
        const err = await failure(r.score(rewardContext({ keys: ['1', '2'], step })));
        expect(err.code, text).to.equal('CORL_ERR_PYTHON_OUTPUT');
        expect(err.message).to.contain(text);
        expect(err.message.length).to.be.lessThan(1500);
      }
    });

    it('sleeping forever: killed at timeoutSeconds with a coded error; the next call starts a fresh process', async () => {
      const module = py(
        'sleeps.py',
        `
import time
def reward_func(prompts, completions, corl, **kwargs):
    print("about to sleep", flush=True)
    if corl.step == 0:
        time.sleep(3600)
    return [1.0] * len(completions)
`,
      );
      const r = await make({ module, timeoutSeconds: 1 });
      const err = await failure(r.score(rewardContext({ keys: ['1'] })));
      expect(err.code).to.equal('CORL_ERR_PYTHON_TIMEOUT');
      expect(err.where).to.equal('corl:python options.timeoutSeconds');
      expect(err.message).to.contain('within 1 s').and.contain('about to sleep');
      expect((await r.score(rewardContext({ keys: ['1'], step: 1 }))).rewards).to.deep.equal([1]);
    });

    it('a request queued behind one that hangs is answered by a fresh process (corl serve scores concurrently)', async () => {
      const module = py(
        'hangs_once.py',
        `
import time
def reward_func(prompts, completions, corl, **kwargs):
    if corl.step == 0:
        time.sleep(3600)
    return [float(corl.step)] * len(completions)
`,
      );
      const r = await make({ module, timeoutSeconds: 1 });
      const [hung, queued] = await Promise.allSettled([
        r.score(rewardContext({ keys: ['1'] })),
        r.score(rewardContext({ keys: ['1', '2'], step: 2 })),
      ]);
      expect(hung.status).to.equal('rejected');
      expect((hung as PromiseRejectedResult).reason.code).to.equal('CORL_ERR_PYTHON_TIMEOUT');
      expect(queued.status, String((queued as PromiseRejectedResult).reason)).to.equal('fulfilled');
      expect((queued as PromiseFulfilledResult<{ rewards: number[] }>).value.rewards).to.deep.equal([2, 2]);
    });

    it('a flood on stdout without a newline passes harmlessly', async () => {
      const module = py(
        'floods.py',
        'import sys\ndef reward_func(prompts, completions, **kwargs):\n    sys.stdout.write("x" * 3_000_000)\n    return [0.5] * len(completions)\n',
      );
      const r = await make({ module, stderr: 'forward' });
      const write = process.stderr.write;
      let forwarded = 0;
      process.stderr.write = ((chunk: string) => {
        forwarded += chunk.length;
        return true;
      }) as typeof process.stderr.write;
      try {
        expect((await r.score(rewardContext({ keys: ['1'] }))).rewards).to.deep.equal([0.5]);
        await r.close!();
      } finally {
        process.stderr.write = write;
      }
      expect(forwarded, 'the flood went to stderr, in pieces').to.be.greaterThan(2_000_000);
    });

    it('exiting (os._exit, a signal) is a coded error with the exit code or signal; sys.exit is an exception', async () => {
      const module = py(
        'exits.py',
        `
import os, signal, sys
def reward_func(prompts, completions, corl, **kwargs):
    sys.stderr.write("going away\\n")
    if corl.step == 0:
        os._exit(7)
    if corl.step == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(3)
`,
      );
      const r = await make({ module });
      let err = await failure(r.score(rewardContext({ keys: ['1'] })));
      expect(err.code).to.equal('CORL_ERR_PYTHON_EXITED');
      expect(err.message).to.contain('exit code 7').and.contain('going away');
      err = await failure(r.score(rewardContext({ keys: ['1'], step: 1 })));
      expect(err.code).to.equal('CORL_ERR_PYTHON_EXITED');
      expect(err.message).to.contain('killed by SIGKILL');
      err = await failure(r.score(rewardContext({ keys: ['1'], step: 2 })));
      expect(err.code).to.equal('CORL_ERR_PYTHON_RAISED');
      expect(err.message).to.contain('SystemExit: 3');
    });

    it('forking: the child never answers on the pipe, and closing the plugin ends it', async () => {
      const pidOf = (step: number) => path.join(tmp.dir, `forked-${step}.pid`);
      const module = py(
        'forks.py',
        `
import os, time
def reward_func(prompts, completions, corl, **kwargs):
    pid = os.fork()
    if pid == 0:
        with open(os.path.join(${JSON.stringify(tmp.dir)}, "forked-%d.pid" % corl.step), "w") as f:
            f.write(str(os.getpid()))
        if corl.step == 0:
            time.sleep(3600)
        return [9.0] * len(completions)  # back into the host's loop: it must leave without a word
    return [1.0] * len(completions)
`,
      );
      const r = await make({ module });
      for (const step of [0, 1, 2])
        expect((await r.score(rewardContext({ keys: ['1', '2'], step }))).rewards).to.deep.equal([1, 1]);
      await until(() => [0, 1, 2].every((s) => fs.existsSync(pidOf(s))));
      const sleeper = Number(fs.readFileSync(pidOf(0), 'utf8'));
      expect(alive(sleeper), 'the sleeping child before close').to.equal(true);
      await r.close!();
      open.splice(open.indexOf(r), 1);
      await until(() => !alive(sleeper)); // the kill is sent; the kernel ends the process a moment later
      expect(alive(sleeper), 'the sleeping child after close').to.equal(false);
    });

    it('an import that raises, a syntax error, a missing package: CORL_ERR_PYTHON_IMPORT with the last line and where', async () => {
      const cases: [string, string, string[]][] = [
        [
          'import_raises.py',
          'import json\nraise RuntimeError("no config found")\n',
          ['RuntimeError: no config found', 'import_raises.py:2 in <module>'],
        ],
        ['syntax.py', 'def reward_func(prompts, completions:\n    return []\n', ['SyntaxError', 'syntax.py:1']],
        [
          'missing_pkg.py',
          'import surely_not_installed_pkg\n',
          ["ModuleNotFoundError: No module named 'surely_not_installed_pkg'", 'missing_pkg.py:1'],
        ],
        ['exits_at_import.py', 'import sys\nsys.exit("bye")\n', ['SystemExit: bye']],
      ];
      for (const [file, source, texts] of cases) {
        const err = await failure(make({ module: py(file, source) }));
        expect(err.code, file).to.equal('CORL_ERR_PYTHON_IMPORT');
        expect(err.where).to.equal('corl:python options.module');
        for (const t of texts) expect(err.message, file).to.contain(t);
      }
      const gone = await failure(make({ module: 'nowhere.py' }));
      expect(gone.code).to.equal('CORL_ERR_PYTHON_IMPORT');
      expect(gone.message).to.contain(path.join(tmp.dir, 'nowhere.py')).and.contain('relative to the config');
    });

    it('a module file that is a FIFO, a device or a kernel file is refused at once, not read until the timeout', async () => {
      const fifo = path.join(tmp.dir, 'fifo_mod.py');
      execFileSync('mkfifo', [fifo]);
      const zero = path.join(tmp.dir, 'zero_mod.py');
      fs.symlinkSync('/dev/zero', zero);
      const pkg = path.join(tmp.dir, 'fifo_pkg');
      fs.mkdirSync(pkg);
      execFileSync('mkfifo', [path.join(pkg, '__init__.py')]);
      for (const [module, says] of [
        [fifo, 'a FIFO'],
        [zero, 'a character device'],
        ['fifo_mod', 'a FIFO'],
        ['fifo_pkg', 'a FIFO'],
        ['/proc/self/status.py', ''],
      ]) {
        const err = await failure(make({ module, timeoutSeconds: 600 }));
        expect(err.code, module).to.equal('CORL_ERR_PYTHON_IMPORT');
        expect(err.where).to.equal('corl:python options.module');
        expect(err.message, module).to.contain(says!);
      }
    });

    it('a process that dies while importing (os._exit at import) is an import error', async () => {
      const err = await failure(make({ module: py('dies.py', 'import os\nos._exit(4)\n') }));
      expect(err.code).to.equal('CORL_ERR_PYTHON_IMPORT');
      expect(err.message).to.contain('exit code 4');
    });

    it('a missing function lists the module’s functions', async () => {
      const module = py(
        'other_names.py',
        'def accuracy(c):\n    return c\n\ndef format_reward(c):\n    return c\n\nTHRESHOLD = 3\n',
      );
      const err = await failure(make({ module }));
      expect(err.code).to.equal('CORL_ERR_PYTHON_FUNCTION');
      expect(err.message).to.contain("no attribute 'reward_func'").and.contain('accuracy, format_reward');
      const notCallable = await failure(make({ module, function: 'THRESHOLD' }));
      expect(notCallable.message).to.contain("'THRESHOLD', which is not callable");
    });

    it('a missing or unusable interpreter: CORL_ERR_PYTHON_INTERPRETER naming options.python', async () => {
      const module = py(
        'fine.py',
        'def reward_func(prompts, completions, **kw):\n    return [0.0] * len(completions)\n',
      );
      let err = await failure(make({ module, python: 'surely-not-a-python-3' }));
      expect(err.code).to.equal('CORL_ERR_PYTHON_INTERPRETER');
      expect(err.where).to.equal('corl:python options.python');
      expect(err.message).to.contain('no such program');
      err = await failure(make({ module, python: './venv/bin/python' }));
      expect(err.code).to.equal('CORL_ERR_PYTHON_INTERPRETER');
      // a program that is not Python at all
      err = await failure(make({ module, python: '/bin/false' }));
      expect(err.code).to.equal('CORL_ERR_PYTHON_INTERPRETER');
      expect(err.message).to.contain('exit code 1');
    });

    it('an import that hangs is stopped at timeoutSeconds', async () => {
      const err = await failure(make({ module: py('hangs.py', 'import time\ntime.sleep(3600)\n'), timeoutSeconds: 1 }));
      expect(err.code).to.equal('CORL_ERR_PYTHON_TIMEOUT');
      expect(err.message).to.contain('imported within 1 s');
    });

    it('close ends the process; closing twice is harmless', async () => {
      const pidFile = path.join(tmp.dir, 'host.pid');
      const module = py(
        'pid.py',
        `import os\nopen(${JSON.stringify(pidFile)}, "w").write(str(os.getpid()))\ndef reward_func(prompts, completions, **kw):\n    return [0.0] * len(completions)\n`,
      );
      const r = await createPlugin(pythonReward, { module, stderr: 'discard' }, { baseDir: tmp.dir });
      const pid = Number(fs.readFileSync(pidFile, 'utf8'));
      expect(alive(pid)).to.equal(true);
      await r.close!();
      await r.close!();
      await until(() => !alive(pid));
      expect(alive(pid)).to.equal(false);
    });
  });
});

/** Whether a process runs (a zombie, killed but not yet reaped by an init that is slow to reap, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
}
