import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Problem } from '../../../core/contracts/problem';
import type { RewardContext, RewardSource } from '../../../core/contracts/reward-source';
import { isCorlError } from '../../../core/errors';
import { execTestsReward, execVoteReward, outcomeKey } from '../../../plugins/rewards/exec';
import { describeWithBwrap } from '../../support/bwrap';

const sandbox = {
  isolation: 'auto',
  bwrap: '',
  timeoutMs: 500,
  memoryMb: 256,
  concurrency: 2,
  maxOutput: 1000,
  python: '',
  entryPoint: '',
  cacheSize: 100,
};
const voteOptions = { ...sandbox, threshold: 0, rule: 'pool', errorKeys: false };
const code = (body: string) => `Here is my solution.\n\`\`\`python\n${body}\n\`\`\`\n`;

const problem: Problem = {
  id: 'add',
  prompt: 'Write add(a, b).',
  testInputs: [
    ['1', '2'],
    ['[1]', '[2]'],
    ['"a"', '"b"'],
  ],
  metadata: { entryPoint: 'add' },
};
// the project folder: not in the sandbox at all
const escape = path.join(process.cwd(), `corl-exec-escape-${process.pid}`);

const texts = [
  code('def add(a, b):\n    return a + b'),
  code('def add(x, y):\n    total = x\n    total += y\n    return total'),
  code('def add(a, b):\n    return a - b'),
  'I do not know.',
  code('def add(a, b):\n    while True: pass'),
  code('def add(a, b):\n    return len(bytearray(10 ** 10))'),
  code('import os\ndef add(a, b):\n    return os.environ.get("CORL_EXEC_SECRET", "clean")'),
  code('import socket\ndef add(a, b):\n    socket.create_connection(("127.0.0.1", 9), timeout=0.2)\n    return a + b'),
  code(`def add(a, b):\n    open(${JSON.stringify(escape)}, "w").write("x")\n    return a + b`),
  code('def add(a, b):\n    return a + b'),
];

function ctx(
  keys: (string | null)[],
  t: string[],
  supervisorKeys: (string | null)[],
  p: Problem = problem,
  expectedOutputs?: string[],
): RewardContext {
  return {
    problem: p,
    prompt: p.prompt,
    agent: 0,
    agents: 2,
    step: 0,
    completions: t.map((text, k) => ({
      text,
      answer: null,
      key: keys[k] ?? null,
      length: 1,
      finishReason: 'stop' as const,
    })),
    own: { agent: 0, keys },
    supervisors: [{ agent: 1, keys: supervisorKeys }],
    equivalence: {
      key: (a) => a,
      equal: async () => {
        throw new Error('exec rewards compare keys exactly');
      },
    },
    ...(expectedOutputs ? { reference: { answer: '', expectedOutputs } } : {}),
  };
}

describeWithBwrap('plugins/rewards/exec (corl:exec-vote, corl:exec-tests)', function () {
  this.timeout(60000);
  let vote: RewardSource;
  before(() => {
    vote = execVoteReward.create(voteOptions as never, {} as never) as RewardSource;
  });
  after(() => vote.close?.());

  it('keys are the tuple of outputs; hostile programs are contained and the scoring goes on', async () => {
    process.env.CORL_EXEC_SECRET = 'hunter2';
    let keys: (string | null)[];
    try {
      keys = await vote.answerKeys!({ problem, texts });
    } finally {
      delete process.env.CORL_EXEC_SECRET;
    }
    const good = JSON.stringify(['3', '[1, 2]', "'ab'"]);
    expect(keys[0]).to.equal(good);
    expect(keys[1]).to.equal(good); // a different program with the same behaviour votes with it
    expect(keys[2]).to.equal(JSON.stringify(['-1', '!error:TypeError', '!error:TypeError']));
    expect(keys[3]).to.equal(null); // no code block
    expect(keys[4]).to.equal(null); // every input timed out: no answer
    expect(keys[5]).to.equal(null); // memory bomb
    expect(keys[6]).to.equal(JSON.stringify(["'clean'", "'clean'", "'clean'"])); // the parent's secret is not there
    expect(keys[7]).to.equal(null); // no network
    expect(keys[8]).to.equal(null); // no writes outside the working folder
    expect(fs.existsSync(escape)).to.equal(false);
    expect(keys[9]).to.equal(good);

    const r = await vote.score(ctx(keys, texts, [good, keys[2]!, null]));
    expect(r.label).to.equal(good);
    expect(r.rewards).to.deep.equal([1, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
  });

  it('errorKeys: true keys a program that always fails by its error markers, as the released code does', async () => {
    const withErrors = execVoteReward.create({ ...voteOptions, errorKeys: true } as never, {} as never) as RewardSource;
    try {
      const [k] = await withErrors.answerKeys!({ problem, texts: [code('def add(a, b):\n    raise ValueError()')] });
      expect(k).to.equal(JSON.stringify(['!error:ValueError', '!error:ValueError', '!error:ValueError']));
    } finally {
      await withErrors.close?.();
    }
    expect(outcomeKey([{ err: 'timeout' }], false)).to.equal(null);
    expect(outcomeKey([{ err: 'timeout' }, { out: '1' }], false)).to.equal('["!error:timeout","1"]');
  });

  it('stdin mode when the problem has no entry point', async () => {
    const p: Problem = {
      id: 's',
      prompt: '',
      testInputs: [
        ['2', '3'],
        ['10', '5'],
      ],
    };
    const keys = await vote.answerKeys!({
      problem: p,
      texts: [code('a = int(input())\nb = int(input())\nprint(a * b)')],
    });
    expect(keys[0]).to.equal(JSON.stringify(['6\n', '50\n']));
  });

  it('corl:exec-tests rewards passing the hidden expected outputs (all, or the fraction)', async () => {
    const expected = ['3', '[1, 2]', "'ab'"];
    const t = [texts[0]!, texts[2]!, texts[3]!, texts[4]!];
    const binary = execTestsReward.create({ ...sandbox, partial: false } as never, {} as never) as RewardSource;
    const partial = execTestsReward.create({ ...sandbox, partial: true } as never, {} as never) as RewardSource;
    try {
      expect((await binary.score(ctx([], t, [], problem, expected))).rewards).to.deep.equal([1, 0, 0, 0]);
      const r = await partial.score(ctx([], t, [], problem, expected));
      expect(r.rewards.map((x) => Math.round(x * 3))).to.deep.equal([3, 0, 0, 0]);
      expect(r.metrics!['exec/tests_passed']).to.be.closeTo(3 / 12, 1e-12);
      let err: unknown;
      try {
        await binary.score(ctx([], t, [], problem));
      } catch (e) {
        err = e;
      }
      expect(isCorlError(err, 'CORL_ERR_TASK_DATA')).to.equal(true);
    } finally {
      await binary.close?.();
      await partial.close?.();
    }
    expect(execTestsReward.manifest.readsGroundTruth).to.equal(true);
    expect(execVoteReward.manifest.readsGroundTruth).to.equal(false);
  });

  it('orphans and loops inside C cannot hold the answer keys past the per-input limits', async () => {
    const hold = [
      code(
        'import __main__\n__main__.hook.__code__ = (lambda e, a: None).__code__\nimport subprocess, sys\ndef add(a, b):\n    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1e9)"], start_new_session=True)\n    return sum(range(10 ** 12))',
      ),
      code(
        'import __main__\n__main__.hook.__code__ = (lambda e, a: None).__code__\nimport os, time\ndef add(a, b):\n    if os.fork() == 0:\n        os.setsid()\n        time.sleep(1e9)\n    return a + b',
      ),
    ];
    // The orphans sleep for 1e9 s and the loop would run for hours: the call returning at all (inside
    // the suite's hang guard) shows that neither held it. No wall-clock bound: the machine may be loaded.
    const keys = await vote.answerKeys!({ problem, texts: hold });
    expect(keys[0]).to.equal(null); // every input timed out
    expect(keys[1]).to.equal(JSON.stringify(['3', '[1, 2]', "'ab'"])); // the orphan is gone with its sandbox
  });

  it('without bubblewrap both code rewards refuse with CORL_ERR_SANDBOX_BWRAP_MISSING', () => {
    for (const plugin of [execVoteReward, execTestsReward]) {
      let err: unknown;
      try {
        plugin.create({ ...voteOptions, partial: false, bwrap: '/nonexistent/bwrap' } as never, {} as never);
      } catch (e) {
        err = e;
      }
      expect(isCorlError(err, 'CORL_ERR_SANDBOX_BWRAP_MISSING'), String(err)).to.equal(true);
    }
  });

  it('isolation "unsafe-process" is an explicit choice that warns on every instantiation', async () => {
    const lines: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    let a: RewardSource, b: RewardSource;
    try {
      a = execVoteReward.create(
        { ...voteOptions, isolation: 'unsafe-process', bwrap: '/nonexistent/bwrap' } as never,
        {} as never,
      ) as RewardSource;
      b = execTestsReward.create(
        { ...sandbox, partial: false, isolation: 'unsafe-process' } as never,
        {} as never,
      ) as RewardSource;
    } finally {
      process.stderr.write = write;
    }
    try {
      expect(lines).to.have.length(2);
      expect(lines[0]).to.match(/^corl: warning: corl:exec-vote runs generated code UNISOLATED/);
      expect(lines[1]).to.match(/^corl: warning: corl:exec-tests runs generated code UNISOLATED/);
      const [k] = await a.answerKeys!({ problem, texts: [texts[0]!] });
      expect(k).to.equal(JSON.stringify(['3', '[1, 2]', "'ab'"]));
    } finally {
      await a.close?.();
      await b.close?.();
    }
  });

  it('a code problem without test inputs is CORL_ERR_TASK_DATA', async () => {
    let err: unknown;
    try {
      await vote.answerKeys!({ problem: { id: 'x', prompt: '' }, texts: [texts[0]!] });
    } catch (e) {
      err = e;
    }
    expect(isCorlError(err, 'CORL_ERR_TASK_DATA')).to.equal(true);
  });
});
