// The Python trainer integrations (docs/integrations) against the real `corl serve` binary: the
// service runs as `node bin/corl.js serve` on a free loopback port, and python3 processes import
// the clients and post as trainers would. Expected rewards are computed here by hand from the
// completions fed in: reward = 1 when a completion's answer equals the supervisor's plurality.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Rng } from '../../core/util/rng';
import { ROOT } from '../../scripts/generate';
import { tempDir, writeConfig } from '../fixtures/configs';

const INTEGRATIONS = path.join(ROOT, 'docs', 'integrations');
const DRIVER = path.join(ROOT, 'test', 'integrations', 'py', 'driver.py');
const PYTHON = 'python3';

/** A running `corl serve` child process. */
interface Service {
  readonly url: string;
  readonly proc: ChildProcess;
  /** Send a signal and wait for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

function startService(config: string, journal: string): Promise<Service> {
  const proc = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'corl.js'), 'serve', '-c', config, '--port', '0', '--journal', journal],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      err += d;
    });
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m)
        resolve({
          url: m[1]!,
          proc,
          stop: (signal = 'SIGTERM') => {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            return exited;
          },
        });
    });
    proc.once('exit', (code) => reject(new Error(`corl serve exited (${code}) before listening:\n${out}\n${err}`)));
  });
}

/** Run the driver on a job; resolves with its JSON output. */
function python(job: Record<string, unknown>, dir: string, name: string): Promise<any> {
  const file = path.join(dir, `${name}.job.json`);
  fs.writeFileSync(file, JSON.stringify({ integrations: INTEGRATIONS, ...job }));
  return new Promise((resolve, reject) => {
    // No __pycache__ folders in docs/integrations or the test tree.
    const p = spawn(PYTHON, [DRIVER, file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      err += d;
    });
    p.once('error', (e) => reject(new Error(`expected to run ${PYTHON}, got ${e.message}`)));
    p.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${PYTHON} ${name} exited with ${code}:\n${err}`));
      try {
        resolve(JSON.parse(out));
      } catch (e) {
        reject(new Error(`${name}: expected JSON, got ${out.slice(0, 200)}\n${err}`));
      }
    });
  });
}

async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

function metric(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

// -- the data: completions of about 400 characters whose only number is the boxed answer ---------------

const FILLER = [
  'Let us read the problem again carefully. ',
  'We set up the equation and simplify both sides. ',
  'Collecting the like terms gives a cleaner form. ',
  'Now we check the result against the constraints. ',
  'Wait, let me recompute that more carefully. ',
  'Substituting back confirms the value. ',
];

function text(rng: Rng, answer: string | null): string {
  let t = '';
  while (t.length < 360) t += FILLER[rng.int(FILLER.length)];
  return answer === null ? `${t}I am not sure how to finish this.` : `${t}So the final answer is $\\boxed{${answer}}$.`;
}

/** K answers from a small alphabet (null: no answer), so that votes split and ties happen. */
function answers(rng: Rng, K: number): (string | null)[] {
  return Array.from({ length: K }, () => {
    const u = rng.int(10);
    return u === 0 ? null : String(1 + (u % 3));
  });
}

/** Plurality over non-null answers, ties to the answer seen first; null when none. */
function plurality(keys: readonly (string | null)[]): string | null {
  const counts = new Map<string, number>();
  for (const k of keys) if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
  let best: string | null = null;
  let n = 0;
  for (const [k, c] of counts)
    if (c > n) {
      best = k;
      n = c;
    }
  return best;
}

function agreement(own: readonly (string | null)[], label: string | null): number[] {
  return own.map((k) => (label !== null && k === label ? 1 : 0));
}

interface Problem {
  id: string;
  prompt: string;
}
const PROBLEMS: Problem[] = [0, 1, 2].map((j) => ({ id: `q${j}`, prompt: `Problem q${j}: find the value.` }));

/** Answers of agent `agent` at `step` for every problem. */
function plan(seed: number, steps: number, K: number): (string | null)[][][] {
  const rng = new Rng(seed);
  return Array.from({ length: steps }, () => PROBLEMS.map(() => answers(rng, K)));
}

/** A shuffled order of n positions (deterministic). */
function shuffled(n: number, seed: number): number[] {
  const rng = new Rng(seed);
  const xs = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

function rawGroups(step: (string | null)[][], seed: number): { id: string; prompt: string; completions: string[] }[] {
  const rng = new Rng(seed);
  return PROBLEMS.map((p, j) => ({ id: p.id, prompt: p.prompt, completions: step[j]!.map((a) => text(rng, a)) }));
}

function ring(serve: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'py-int',
    agents: [{ name: 'a' }, { name: 'b' }],
    topology: 'corl:ring',
    reward: 'corl:vote',
    serve: { port: 0, ...serve },
  };
}

const SOLO = (serve: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'py-solo',
  agents: [{ name: 'solo' }],
  topology: 'corl:self',
  reward: 'corl:vote',
  serve: { port: 0, ...serve },
});

describe('integrations: Python clients against the real corl serve (python3 on PATH)', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  const services: Service[] = [];

  before(() => {
    const r = spawnSync(PYTHON, ['-c', 'import sys; print(sys.version_info[0])'], { encoding: 'utf8' });
    if (r.error || r.status !== 0 || r.stdout.trim() !== '3') {
      throw new Error(
        `expected ${PYTHON} (Python 3) on PATH for the integration tests, got ${r.error ? r.error.message : `exit ${r.status}: ${r.stderr}`}; install Python 3 (standard library only) to run them`,
      );
    }
  });
  beforeEach(() => {
    tmp = tempDir('corl-py-');
  });
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop('SIGTERM');
    tmp.cleanup();
  });

  async function serve(
    config: Record<string, unknown>,
    journal = path.join(tmp.dir, 'journal.jsonl'),
  ): Promise<Service> {
    const s = await startService(writeConfig(tmp.dir, 'serve.json', config), journal);
    services.push(s);
    return s;
  }

  it("two agent processes in a ring (TRL function and verl manager), three steps: each is rewarded by the other's plurality", async () => {
    const K = 4;
    const s = await serve(ring({ groupSize: K, exchange: { wait: 60 } }));
    const A = plan(11, 3, K);
    const B = plan(22, 3, K);
    const rngA = new Rng(5);
    const rngB = new Rng(6);
    // Agent a: TRL hands over K consecutive completions per prompt, with the dataset's id column.
    const trlSteps = A.map((step) => {
      const prompts: string[] = [];
      const completions: string[] = [];
      const ids: string[] = [];
      PROBLEMS.forEach((p, j) =>
        step[j]!.forEach((a) => {
          prompts.push(p.prompt);
          completions.push(text(rngA, a));
          ids.push(p.id);
        }),
      );
      return { prompts, completions, columns: { problem_id: ids } };
    });
    // Agent b: a verl batch, shuffled, with its own uids; the problem id travels in extra_info.
    const orders = B.map((_, s) => shuffled(PROBLEMS.length * K, 100 + s));
    const verlSteps = B.map((step, s) => {
      const flat = PROBLEMS.flatMap((p, j) =>
        step[j]!.map((a) => ({
          uid: `uid-b-${s}-${j}`,
          prompt: `Rephrased: ${p.prompt}`,
          response: text(rngB, a),
          id: p.id,
        })),
      );
      const batch = orders[s]!.map((i) => flat[i]!);
      return {
        step: s,
        uids: batch.map((x) => x.uid),
        prompts: batch.map((x) => x.prompt),
        responses: batch.map((x) => x.response),
        ids: batch.map((x) => x.id),
      };
    });
    const [ra, rb] = await Promise.all([
      python(
        { url: s.url, agent: 'a', mode: 'trl', group_size: K, id_column: 'problem_id', steps: trlSteps },
        tmp.dir,
        'a',
      ),
      python({ url: s.url, agent: 'b', mode: 'verl', steps: verlSteps }, tmp.dir, 'b'),
    ]);
    for (let st = 0; st < 3; st++) {
      // b's completions of each problem, in the order its shuffled batch posted them.
      const bPosted = PROBLEMS.map((_, j) =>
        orders[st]!.filter((i) => Math.floor(i / K) === j).map((i) => B[st]![j]![i % K]!),
      );
      const expectA = PROBLEMS.flatMap((_, j) => agreement(A[st]![j]!, plurality(bPosted[j]!)));
      expect(ra[st].ok, `a step ${st}`).to.deep.equal(expectA);
      expect(ra[st].answer.step).to.equal(st);
      expect(ra[st].answer.groups.map((g: any) => g.label)).to.deep.equal(bPosted.map(plurality));
      expect(ra[st].answer.groups.map((g: any) => g.source)).to.deep.equal([
        'supervisors',
        'supervisors',
        'supervisors',
      ]);
      const expectB = orders[st]!.map((i) => {
        const j = Math.floor(i / K);
        const label = plurality(A[st]![j]!);
        return label !== null && B[st]![j]![i % K] === label ? 1 : 0;
      });
      expect(rb[st].ok, `b step ${st}`).to.deep.equal(expectB);
      expect(rb[st].answer.groups.map((g: any) => g.id)).to.have.members(['q0', 'q1', 'q2']);
      expect(rb[st].extra.corl_fallback).to.deep.equal(expectB.map(() => 0));
    }
    expect(ra[0].name).to.equal('corl_a');
    const m = await metrics(s.url);
    expect(metric(m, 'corl_serve_completions_scored_total{route="/v1/groups"}')).to.equal(2 * 3 * PROBLEMS.length * K);
  });

  it('a peer that stops: the other keeps posting, and after the wait limit its groups get the self fallback', async () => {
    const K = 3;
    const s = await serve(ring({ exchange: { wait: 60, fallback: 'self' } }));
    const A = plan(31, 4, K);
    const B = plan(32, 2, K);
    // a waits the configured limit while b runs; once b has quit, a asks for a short wait.
    const aSteps = A.map((step, st) => ({
      step: st,
      groups: rawGroups(step, 40 + st),
      ...(st >= 2 ? { wait: 0.3 } : {}),
    }));
    const bSteps = B.map((step, st) => ({ step: st, groups: rawGroups(step, 50 + st) }));
    const [ra, rb] = await Promise.all([
      python({ url: s.url, agent: 'a', mode: 'raw', steps: aSteps }, tmp.dir, 'a'),
      python({ url: s.url, agent: 'b', mode: 'raw', steps: bSteps }, tmp.dir, 'b'),
    ]);
    for (let st = 0; st < 2; st++) {
      expect(ra[st].ok.groups.map((g: any) => g.rewards)).to.deep.equal(
        PROBLEMS.map((_, j) => agreement(A[st]![j]!, plurality(B[st]![j]!))),
      );
      expect(rb[st].ok.groups.map((g: any) => g.rewards)).to.deep.equal(
        PROBLEMS.map((_, j) => agreement(B[st]![j]!, plurality(A[st]![j]!))),
      );
      expect(rb[st].ok.groups.map((g: any) => g.source)).to.deep.equal(['supervisors', 'supervisors', 'supervisors']);
    }
    for (let st = 2; st < 4; st++) {
      const answer = ra[st].ok;
      expect(
        answer.groups.map((g: any) => g.rewards),
        `step ${st}`,
      ).to.deep.equal(PROBLEMS.map((_, j) => agreement(A[st]![j]!, plurality(A[st]![j]!))));
      expect(answer.groups.map((g: any) => g.source)).to.deep.equal(['self', 'self', 'self']);
      expect(answer.metrics['exchange/fallback_fraction']).to.equal(1);
    }
    const m = await metrics(s.url);
    expect(metric(m, 'corl_serve_exchange_fallbacks_total{kind="self"}')).to.equal(2 * PROBLEMS.length);
    expect(metric(m, 'corl_serve_exchange_waits_total{outcome="timeout"}')).to.equal(2 * PROBLEMS.length);
  });

  it('a service killed between steps and restarted on the same journal: retries get identical answers and no label is lost', async () => {
    const K = 3;
    const config = ring({ exchange: { wait: 60, fallback: 'error' } });
    const journal = path.join(tmp.dir, 'labels.jsonl');
    const A = plan(61, 4, K);
    const B = plan(62, 4, K);
    const groupsA = A.map((step, st) => rawGroups(step, 70 + st));
    const groupsB = B.map((step, st) => rawGroups(step, 80 + st));
    const first = await serve(config, journal);
    // Steps 0 and 1 together; then a posts step 2, which b never reaches before the crash.
    const [a1, b1] = await Promise.all([
      python(
        {
          url: first.url,
          agent: 'a',
          mode: 'raw',
          steps: [0, 1]
            .map((st) => ({ step: st, groups: groupsA[st] }))
            .concat([{ step: 2, groups: groupsA[2]!, wait: 0.2, retries: 0 } as never]),
        },
        tmp.dir,
        'a1',
      ),
      python(
        { url: first.url, agent: 'b', mode: 'raw', steps: [0, 1].map((st) => ({ step: st, groups: groupsB[st] })) },
        tmp.dir,
        'b1',
      ),
    ]);
    expect(a1[2].error).to.deep.include({
      code: 'CORL_ERR_SERVE_CLIENT',
      status: 504,
      server_code: 'CORL_ERR_SERVE_PEER_TIMEOUT',
    });
    await first.stop('SIGKILL');

    const second = await serve(config, journal);
    const [a2, b2] = await Promise.all([
      python(
        {
          url: second.url,
          agent: 'a',
          mode: 'raw',
          steps: [0, 1, 2, 3].map((st) => ({ step: st, groups: groupsA[st] })),
        },
        tmp.dir,
        'a2',
      ),
      python(
        { url: second.url, agent: 'b', mode: 'raw', steps: [1, 2, 3].map((st) => ({ step: st, groups: groupsB[st] })) },
        tmp.dir,
        'b2',
      ),
    ]);
    // Retried steps: the very answers of the first service.
    expect(a2[0].ok).to.deep.equal(a1[0].ok);
    expect(a2[1].ok).to.deep.equal(a1[1].ok);
    expect(b2[0].ok).to.deep.equal(b1[1].ok);
    // a's step-2 answers, posted before the crash, supervise b after the restart (and b's a).
    for (const [st, ra, rb] of [
      [2, a2[2], b2[1]],
      [3, a2[3], b2[2]],
    ] as const) {
      expect(
        rb.ok.groups.map((g: any) => g.label),
        `b step ${st}`,
      ).to.deep.equal(A[st]!.map(plurality));
      expect(rb.ok.groups.map((g: any) => g.rewards)).to.deep.equal(
        PROBLEMS.map((_, j) => agreement(B[st]![j]!, plurality(A[st]![j]!))),
      );
      expect(
        ra.ok.groups.map((g: any) => g.rewards),
        `a step ${st}`,
      ).to.deep.equal(PROBLEMS.map((_, j) => agreement(A[st]![j]!, plurality(B[st]![j]!))));
      expect(ra.ok.groups.map((g: any) => g.source)).to.deep.equal(['supervisors', 'supervisors', 'supervisors']);
    }
    const m = await metrics(second.url);
    expect(metric(m, 'corl_serve_idempotent_replays_total')).to.equal(3 * PROBLEMS.length);
  });

  it('the verl manager groups a shuffled batch by uid; the TRL function scores several prompts and refuses split groups', async () => {
    const K = 4;
    const s = await serve(SOLO());
    const own = plan(91, 1, K)[0]!;
    const rng = new Rng(92);
    const flat = PROBLEMS.flatMap((p, j) =>
      own[j]!.map((a) => ({ uid: `u${j}`, prompt: p.prompt, response: text(rng, a), answer: a, j })),
    );
    const order = shuffled(flat.length, 93);
    const batch = order.map((i) => flat[i]!);
    const trlPrompts = PROBLEMS.flatMap((p) => Array.from({ length: K }, () => p.prompt));
    const trlCompletions = flat.map((x) => [{ role: 'assistant', content: x.response }]);
    const [verl, trl] = await Promise.all([
      python(
        {
          url: s.url,
          agent: 'solo',
          mode: 'verl',
          steps: [
            {
              step: 0,
              uids: batch.map((x) => x.uid),
              prompts: batch.map((x) => x.prompt),
              responses: batch.map((x) => x.response),
            },
          ],
        },
        tmp.dir,
        'verl',
      ),
      python(
        {
          url: s.url,
          agent: 'solo',
          mode: 'trl',
          group_size: K,
          start_step: 5,
          steps: [
            { prompts: trlPrompts, completions: trlCompletions },
            { prompts: trlPrompts.slice(0, 10), completions: trlCompletions.slice(0, 10) },
            {
              prompts: [...trlPrompts.slice(0, 3), trlPrompts[4], ...trlPrompts.slice(4)],
              completions: trlCompletions,
            },
            {
              prompts: [...trlPrompts.slice(0, K), ...trlPrompts.slice(0, K)],
              completions: trlCompletions.slice(0, 2 * K),
            },
          ],
        },
        tmp.dir,
        'trl',
      ),
    ]);
    // verl: each uid's responses in the order the shuffled batch holds them vote among themselves.
    const posted = PROBLEMS.map((_, j) => batch.filter((x) => x.j === j).map((x) => x.answer));
    expect(verl[0].ok).to.deep.equal(
      batch.map((x) => (x.answer !== null && x.answer === plurality(posted[x.j]!) ? 1 : 0)),
    );
    expect(verl[0].answer.groups.map((g: any) => g.label)).to.deep.equal(
      [...new Set(batch.map((x) => x.j))].map((j) => plurality(posted[j]!)),
    );
    // TRL: consecutive groups of K, in batch order.
    expect(trl[0].ok).to.deep.equal(PROBLEMS.flatMap((_, j) => agreement(own[j]!, plurality(own[j]!))));
    expect(trl[0].answer.step).to.equal(5);
    expect(trl[1].value_error).to.contain('expected a multiple of group_size=4 completions in one call, got 10');
    expect(trl[2].value_error).to.contain('to share one prompt');
    // A prompt drawn twice in one batch: two groups, the second id suffixed; the call after the
    // refused ones is step 6 (refused calls post nothing and count no step).
    const h = `p-${createHash('sha1').update(PROBLEMS[0]!.prompt).digest('hex').slice(0, 16)}`;
    expect(trl[3].answer.groups.map((g: any) => g.id)).to.deep.equal([h, `${h}#2`]);
    expect(trl[3].answer.step).to.equal(6);
    expect(trl[0].answer.groups[0].id).to.equal(h);
  });

  it("the verl manager's tensor glue: left-padded prompts decoded, each reward on its response's last valid token", async () => {
    const s = await serve(SOLO());
    const own = [
      ['4', '4', '6'],
      ['1', null, '2'],
    ];
    const rng = new Rng(17);
    // Responses of different lengths (so padding differs), prompts of different lengths, shuffled.
    const flat = own.flatMap((xs, j) =>
      xs.map((a, k) => ({
        uid: `uid-${j}`,
        index: j === 0 ? 40 : null,
        prompt: j === 0 ? 'Short prompt.' : 'A somewhat longer prompt for the second problem.',
        response: text(rng, a) + ' Done.'.repeat(k),
        answer: a,
        j,
      })),
    );
    const batch = shuffled(flat.length, 18).map((i) => flat[i]!);
    const [result] = await python(
      {
        url: s.url,
        agent: 'solo',
        mode: 'verl_glue',
        steps: [{ step: 3, rows: batch.map(({ uid, index, prompt, response }) => ({ uid, index, prompt, response })) }],
      },
      tmp.dir,
      'glue',
    );
    const posted = own.map((_, j) => batch.filter((x) => x.j === j).map((x) => x.answer));
    const rewards = batch.map((x) => (x.answer !== null && x.answer === plurality(posted[x.j]!) ? 1 : 0));
    const width = Math.max(...batch.map((x) => x.response.split(' ').length));
    expect(result.reward_tensor).to.deep.equal(
      batch.map((x, i) =>
        Array.from({ length: width }, (_, t) => (t === x.response.split(' ').length - 1 ? rewards[i] : 0)),
      ),
    );
    expect(result.answer.step).to.equal(3);
    // Problem 0 is exchanged under its extra_info index; problem 1 has none, so under a hash of its
    // prompt as decoded from the left-padded ids (which must therefore be exactly the prompt).
    const idOf = (j: number): string =>
      j === 0
        ? '40'
        : `p-${createHash('sha1')
            .update(flat.find((x) => x.j === 1)!.prompt)
            .digest('hex')
            .slice(0, 16)}`;
    expect(result.answer.groups.map((g: any) => g.id)).to.deep.equal([...new Set(batch.map((x) => x.j))].map(idOf));
    expect(result.extra).to.deep.equal({ corl_labeled: batch.map(() => 1), corl_fallback: batch.map(() => 0) });
  });

  it('OpenRLHF: K concurrent one-sample /get_reward requests per prompt (threads) meet at the barrier', async () => {
    const K = 4;
    const s = await serve(SOLO({ getReward: { groupSize: K, wait: 60 } }));
    const own = [
      ['7', '7', '3', '7'],
      ['2', null, '5', '5'],
    ];
    const rng = new Rng(7);
    const samples = own.flatMap((answersOfPrompt, j) => {
      const prompt = `<|im_start|>user\nProblem ${['x', 'y'][j]}: compute it.<|im_end|>\n<|im_start|>assistant\n`;
      return answersOfPrompt.map((a) => ({ query: `${prompt}${text(rng, a)}<|im_end|>`, prompt }));
    });
    const [results] = await python({ url: s.url, mode: 'openrlhf', steps: [{ samples }] }, tmp.dir, 'openrlhf');
    const expected = own.flatMap((xs) => agreement(xs, plurality(xs)));
    expect(results.map((r: any) => r.ok.rewards)).to.deep.equal(expected.map((r) => [r]));
    expect(results.map((r: any) => r.ok.scores)).to.deep.equal(expected.map((r) => [r]));
    expect(results.map((r: any) => r.ok.extra_logs['label/labeled'])).to.deep.equal(expected.map(() => [1]));
    const m = await metrics(s.url);
    expect(metric(m, 'corl_serve_completions_scored_total{route="/get_reward"}')).to.equal(2 * K);
    expect(metric(m, 'corl_serve_barrier_partial_groups_total')).to.equal(undefined);
  });

  it('a /get_reward sample re-sent by the client after its 1 s timeout is counted once (Idempotency-Key, issue 30)', async () => {
    // Before: the retry joined the barrier as a second sample and changed its neighbours' rewards.
    const K = 4;
    const s = await serve(SOLO({ getReward: { groupSize: K, wait: 60 } }));
    const prompt = 'Problem z: compute it.\n';
    const rng = new Rng(11);
    const all = ['5', '4', '4', '5'].map((a) => ({ query: `${prompt}${text(rng, a)}`, prompt, a }));
    const [first, ...rest] = all;
    const out = await python({ url: s.url, mode: 'slow_retry', first, rest, delay: 1.5 }, tmp.dir, 'slow');
    // Counted once, the group is these four samples, voted in text order (ties to the first seen).
    const label = plurality([...all].sort((x, y) => (x.query < y.query ? -1 : 1)).map((x) => x.a));
    expect(out.first.ok.rewards).to.deep.equal([first!.a === label ? 1 : 0]);
    expect(out.rest.map((r: any) => r.ok.rewards[0])).to.deep.equal(rest.map((x) => (x.a === label ? 1 : 0)));
    const m = await metrics(s.url);
    expect(metric(m, 'corl_serve_completions_scored_total{route="/get_reward"}')).to.equal(K);
    expect(metric(m, 'corl_serve_requests_total{route="/get_reward",status="499"}')).to.be.at.least(1); // timed-out tries
  });
});
