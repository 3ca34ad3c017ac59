// The Python client (docs/integrations/corl_client.py) against the real `corl serve` binary: the
// service runs as `node bin/corl.js serve` on a free loopback port, and python3 processes post as
// trainers would. Expected rewards are computed here by hand from the completions fed in:
// reward = 1 when a completion's answer equals the supervisor's plurality. The trainer adapters
// built on the client are driven as their trainers call them in trainers.test.ts.
import { expect } from 'chai';
import * as path from 'node:path';
import { Rng } from '../../core/util/rng';
import { tempDir, writeConfig } from '../fixtures/configs';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import {
  INTEGRATIONS,
  PYTHON,
  checkPython,
  metric,
  python,
  servedLabel,
  startService,
  type Service,
} from './serve-process';

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

const PROBLEMS = [0, 1, 2].map((j) => ({ id: `q${j}`, prompt: `Problem q${j}: find the value.` }));

/** Answers of one agent per step and problem. */
function plan(seed: number, steps: number, K: number): (string | null)[][][] {
  const rng = new Rng(seed);
  return Array.from({ length: steps }, () => PROBLEMS.map(() => answers(rng, K)));
}

/** The groups of one step, with the texts of each problem's answers. */
function rawGroups(step: (string | null)[][], seed: number): { id: string; prompt: string; completions: string[] }[] {
  const rng = new Rng(seed);
  return PROBLEMS.map((p, j) => ({ id: p.id, prompt: p.prompt, completions: step[j]!.map((a) => text(rng, a)) }));
}

/** The label served for a group of texts, and each completion's agreement with a label. */
function labelOf(g: { completions: string[] }): string | null {
  return servedLabel(
    g.completions,
    g.completions.map((t) => /\\boxed\{(\d+)\}/.exec(t)?.[1] ?? null),
  );
}
function agreement(own: readonly (string | null)[], label: string | null): number[] {
  return own.map((k) => (label !== null && k === label ? 1 : 0));
}

function ring(serve: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'py-int',
    agents: [{ name: 'agent-0' }, { name: 'agent-1' }],
    topology: 'corl:ring',
    reward: 'corl:vote',
    serve: { port: 0, ...serve },
  };
}

describe('integrations: the Python client against the real corl serve', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  const services: Service[] = [];

  before(checkPython);
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

  it('a peer that stops: the other keeps posting, and after the wait limit its groups get the self fallback', async () => {
    const K = 3;
    const s = await serve(ring({ exchange: { wait: 60, fallback: 'self' } }));
    const A = plan(31, 4, K);
    const B = plan(32, 2, K);
    // a waits the configured limit while b runs; once b has quit, a asks for a short wait.
    const groupsA = A.map((step, st) => rawGroups(step, 40 + st));
    const groupsB = B.map((step, st) => rawGroups(step, 50 + st));
    const aSteps = A.map((_, st) => ({
      step: st,
      groups: groupsA[st],
      ...(st >= 2 ? { wait: 0.3 } : {}),
    }));
    const bSteps = B.map((_, st) => ({ step: st, groups: groupsB[st] }));
    const [ra, rb] = await Promise.all([
      python('driver.py', { url: s.url, agent: 'agent-0', mode: 'raw', steps: aSteps }, tmp.dir, 'a'),
      python('driver.py', { url: s.url, agent: 'agent-1', mode: 'raw', steps: bSteps }, tmp.dir, 'b'),
    ]);
    for (let st = 0; st < 2; st++) {
      expect(ra[st].ok.groups.map((g: any) => g.rewards)).to.deep.equal(
        PROBLEMS.map((_, j) => agreement(A[st]![j]!, labelOf(groupsB[st]![j]!))),
      );
      expect(rb[st].ok.groups.map((g: any) => g.rewards)).to.deep.equal(
        PROBLEMS.map((_, j) => agreement(B[st]![j]!, labelOf(groupsA[st]![j]!))),
      );
      expect(rb[st].ok.groups.map((g: any) => g.source)).to.deep.equal(['supervisors', 'supervisors', 'supervisors']);
    }
    for (let st = 2; st < 4; st++) {
      const answer = ra[st].ok;
      expect(
        answer.groups.map((g: any) => g.rewards),
        `step ${st}`,
      ).to.deep.equal(PROBLEMS.map((_, j) => agreement(A[st]![j]!, labelOf(groupsA[st]![j]!))));
      expect(answer.groups.map((g: any) => g.source)).to.deep.equal(['self', 'self', 'self']);
      expect(answer.metrics['exchange/fallback_fraction']).to.equal(1);
    }
    expect(await metric(s.url, 'corl_serve_exchange_fallbacks_total{kind="self"}')).to.equal(2 * PROBLEMS.length);
    expect(await metric(s.url, 'corl_serve_exchange_waits_total{outcome="timeout"}')).to.equal(2 * PROBLEMS.length);
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
        'driver.py',
        {
          url: first.url,
          agent: 'agent-0',
          mode: 'raw',
          steps: [0, 1]
            .map((st) => ({ step: st, groups: groupsA[st] }))
            .concat([{ step: 2, groups: groupsA[2]!, wait: 0.2, retries: 0 } as never]),
        },
        tmp.dir,
        'a1',
      ),
      python(
        'driver.py',
        {
          url: first.url,
          agent: 'agent-1',
          mode: 'raw',
          steps: [0, 1].map((st) => ({ step: st, groups: groupsB[st] })),
        },
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
        'driver.py',
        {
          url: second.url,
          agent: 'agent-0',
          mode: 'raw',
          steps: [0, 1, 2, 3].map((st) => ({ step: st, groups: groupsA[st] })),
        },
        tmp.dir,
        'a2',
      ),
      python(
        'driver.py',
        {
          url: second.url,
          agent: 'agent-1',
          mode: 'raw',
          steps: [1, 2, 3].map((st) => ({ step: st, groups: groupsB[st] })),
        },
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
      ).to.deep.equal(groupsA[st]!.map(labelOf));
      expect(rb.ok.groups.map((g: any) => g.rewards)).to.deep.equal(
        PROBLEMS.map((_, j) => agreement(B[st]![j]!, labelOf(groupsA[st]![j]!))),
      );
      expect(
        ra.ok.groups.map((g: any) => g.rewards),
        `a step ${st}`,
      ).to.deep.equal(PROBLEMS.map((_, j) => agreement(A[st]![j]!, labelOf(groupsB[st]![j]!))));
      expect(ra.ok.groups.map((g: any) => g.source)).to.deep.equal(['supervisors', 'supervisors', 'supervisors']);
    }
    expect(await metric(second.url, 'corl_serve_idempotent_replays_total')).to.equal(3 * PROBLEMS.length);
  });

  it('a /get_reward sample re-sent by the client after its 1 s timeout is counted once (Idempotency-Key, issue 30)', async () => {
    // Before: the retry joined the barrier as a second sample and changed its neighbours' rewards.
    const K = 4;
    const s = await serve({
      name: 'py-solo',
      agents: [{ name: 'agent-0' }],
      topology: 'corl:self',
      reward: 'corl:vote',
      serve: { port: 0, getReward: { groupSize: K, wait: 60 } },
    });
    const prompt = 'Problem z: compute it.\n';
    const rng = new Rng(11);
    const all = ['5', '4', '4', '5'].map((a) => ({ query: `${prompt}${text(rng, a)}`, prompt, a }));
    const [first, ...rest] = all;
    const out = await python('driver.py', { url: s.url, mode: 'slow_retry', first, rest, delay: 1.5 }, tmp.dir, 'slow');
    // Counted once, the group is these four samples, voted in text order (ties to the first seen).
    const label = servedLabel(
      all.map((x) => x.query),
      all.map((x) => x.a),
    );
    expect(out.first.ok.rewards).to.deep.equal([first!.a === label ? 1 : 0]);
    expect(out.rest.map((r: any) => r.ok.rewards[0])).to.deep.equal(rest.map((x) => (x.a === label ? 1 : 0)));
    expect(await metric(s.url, 'corl_serve_completions_scored_total{route="/get_reward"}')).to.equal(K);
    expect(await metric(s.url, 'corl_serve_requests_total{route="/get_reward",status="499"}')).to.be.at.least(1); // timed-out tries
  });

  it('reads_ground_truth: GET /health readsGroundTruth, else (an older service) its supervised', async () => {
    const s = await serve({ ...ring({}), reward: 'corl:ground-truth' });
    const code = [
      'import importlib.util, json',
      `spec = importlib.util.spec_from_file_location("corl_client", ${JSON.stringify(path.join(INTEGRATIONS, 'corl_client.py'))})`,
      'm = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); r = m.reads_ground_truth',
      `live = m.CorlClient(${JSON.stringify(s.url)}).reads_ground_truth()`,
      // a learned verifier: supervised (trained on labels), but it reads no reference; an older service
      'print(json.dumps([live, r({"readsGroundTruth": False, "supervised": True}), r({"supervised": True}), r({})]))',
    ].join('\n');
    const out = spawnSync(PYTHON, ['-I', '-S', '-B', '-c', code], { encoding: 'utf8' });
    expect(out.stderr).to.equal('');
    expect(JSON.parse(out.stdout)).to.deep.equal([true, false, true, false]);
  });

  it('token statistics: the top-k estimate and the one-sample estimate on known numbers; bad input refused by name', () => {
    const code = [
      'import importlib.util, json, math',
      `spec = importlib.util.spec_from_file_location("corl_client", ${JSON.stringify(path.join(INTEGRATIONS, 'corl_client.py'))})`,
      'm = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
      'def err(f, *a):',
      '    try:',
      '        f(*a)',
      '    except ValueError as e:',
      '        return str(e)',
      // p = 0.5, 0.25 reported of V = 4: the 0.25 left spread over the 2 others (0.125 each).
      'out = {"topk": m.top_logprob_stats([math.log(0.5), math.log(0.25)], 4),',
      '       "full": m.top_logprob_stats([math.log(0.5), math.log(0.5)], 2),',
      '       "masked": m.top_logprob_stats([0.0, float("-inf")], 2),',
      '       "sampled": m.sampled_entropies([-0.5, 0.0, -2]),',
      '       "errors": [err(m.top_logprob_stats, [-1.0, -1.0, -1.0], 2), err(m.top_logprob_stats, [0.5], 4),',
      '                  err(m.top_logprob_stats, [float("nan")], 4), err(m.top_logprob_stats, [-1.0], 0),',
      '                  err(m.sampled_entropies, [0.3]), err(m.sampled_entropies, [float("-inf")])]}',
      'print(json.dumps(out))',
    ].join('\n');
    const r = spawnSync(PYTHON, ['-I', '-S', '-B', '-c', code], { encoding: 'utf8' });
    expect(r.stderr).to.equal('');
    const out = JSON.parse(r.stdout) as Record<string, any>;
    const h = -(0.5 * Math.log(0.5) + 0.25 * Math.log(0.25) + 2 * 0.125 * Math.log(0.125));
    expect(out.topk[0]).to.be.closeTo(h, 1e-12);
    expect(out.topk[1]).to.be.closeTo((Math.log(0.5) + Math.log(0.25) + 2 * Math.log(0.125)) / 4, 1e-12);
    expect(out.full[0]).to.be.closeTo(Math.log(2), 1e-12);
    expect(out.full[1]).to.be.closeTo(Math.log(0.5), 1e-12);
    expect(out.masked).to.deep.equal([0, 0]); // a masked token: p = 0, left out of both sums
    expect(out.sampled).to.deep.equal([0.5, 0, 2]);
    expect(out.errors).to.deep.equal([
      'expected at most 2 log-probabilities (the vocabulary), got 3',
      'expected log-probabilities (<= 0), got [0.5]',
      'expected log-probabilities (<= 0), got [nan]',
      'expected the vocabulary size (>= 1), got 0',
      "expected the sampled tokens' log-probabilities (finite, <= 0), got 0.3",
      "expected the sampled tokens' log-probabilities (finite, <= 0), got -inf",
    ]);
  });

  it('every Python file of docs/integrations loads alone by its path, with the standard library alone', () => {
    const files = fs.readdirSync(INTEGRATIONS).filter((f) => f.endsWith('.py'));
    expect(files).to.include.members([
      'corl_client.py',
      'verl_reward_loop.py',
      'trl_reward.py',
      'openrlhf_agent.py',
      'slime_rm.py',
    ]);
    for (const f of files) {
      // -I -S: no site-packages, no PYTHONPATH, no sitecustomize, not even the current folder on
      // sys.path: what is loaded besides the file must be the standard library (no corl_client).
      const code = `import importlib.util, sys; s = importlib.util.spec_from_file_location("custom_module_1", ${JSON.stringify(path.join(INTEGRATIONS, f))}); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); print(sorted({n.split('.')[0] for n in sys.modules} - set(sys.stdlib_module_names) - {'__main__'}))`;
      const r = spawnSync(PYTHON, ['-I', '-S', '-B', '-c', code], {
        encoding: 'utf8',
        cwd: path.dirname(INTEGRATIONS),
      });
      expect(r.stderr, f).to.equal('');
      expect(r.stdout.trim(), f).to.equal('[]');
    }
  });
});
