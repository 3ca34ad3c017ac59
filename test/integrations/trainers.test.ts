// The trainer adapters of docs/integrations loaded and driven the way the pinned trainer sources load
// and call them (verl v0.9.0, TRL v1.9.0, OpenRLHF v0.11.0, slime v0.3.1; see
// test/integrations/py/trainers.py), two agents in a ring, against the real `node bin/corl.js serve`.
// No test puts docs/integrations on a path: verl's and OpenRLHF's adapters are loaded by file path
// in `python3 -I` (verl's in spawned worker processes), TRL's from a user's script folder holding
// trl_reward.py alone, slime's by import_module from a PYTHONPATH folder holding slime_rm.py alone. The served reward is the ring vote minus 0.001
// per generated token (test/fixtures/length-vote), so every expected reward below, computed by hand
// from the completions fed in, also checks that the adapters send lengths in tokens.
import { expect } from 'chai';
import * as path from 'node:path';
import { Rng } from '../../core/util/rng';
import { fixture, tempDir, writeConfig } from '../fixtures/configs';
import {
  INTEGRATIONS,
  answers,
  checkPython,
  completion,
  keyOf,
  metric,
  python,
  ringConfig,
  servedLabel,
  startService,
  verlRewardConfig,
  vocabulary,
  type Service,
} from './serve-process';

const PENALTY = 0.001;
const LENGTH_VOTE = { use: 'test:length-vote', options: { penalty: PENALTY } };
const AGENTS = ['agent-0', 'agent-1'] as const;
/** The ring: agent-0 is supervised by agent-1 and agent-1 by agent-0. */
const peer = (a: number): number => 1 - a;
const words = (text: string): number => text.split(' ').length;
const reward = (key: string | null, label: string | null, tokens: number): number =>
  (key !== null && key === label ? 1 : 0) - PENALTY * tokens;

/** The label a peer's group serves: the plurality of its completions' answer keys. */
const labelOf = (theirs: readonly string[]): string | null => servedLabel(theirs, theirs.map(keyOf));

/**
 * The rewards of an agent's groups `mine`, group j against the label of its peer's group j in
 * `theirs`, a completion costing `tokens` (by default its words and the end-of-sequence token, as
 * verl, TRL and slime count them).
 */
function ringRewards(
  mine: readonly (readonly string[])[],
  theirs: readonly (readonly string[])[],
  tokens: (text: string) => number = (t) => words(t) + 1,
): number[][] {
  return mine.map((texts, j) => {
    const label = labelOf(theirs[j]!);
    return texts.map((t) => reward(keyOf(t), label, tokens(t)));
  });
}

describe('integrations: trainer adapters as their pinned sources call them, two agents in a ring', function () {
  this.timeout(180000);
  let tmp: ReturnType<typeof tempDir>;
  const services: Service[] = [];

  before(checkPython);
  beforeEach(() => {
    tmp = tempDir('corl-trainers-');
  });
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop('SIGTERM');
    tmp.cleanup();
  });

  async function serve(config: Record<string, unknown>): Promise<Service> {
    const s = await startService(writeConfig(tmp.dir, 'serve.json', config), path.join(tmp.dir, 'journal.jsonl'));
    services.push(s);
    return s;
  }

  const lengthRing = (serve: Record<string, unknown> = {}): Record<string, unknown> =>
    ringConfig(LENGTH_VOTE, serve, { plugins: [fixture('length-vote.js')] });

  it('verl v0.9.0 reward loop: one sample per run_single, concurrent, spread over two reward workers; validation samples never reach the exchange', async () => {
    const K = 4;
    const P = 3;
    const S = 2;
    const s = await serve(lengthRing({ exchange: { wait: 60 } }));
    const rng = new Rng(41);
    // plan[agent][step][problem] = K completion texts
    const plan = AGENTS.map(() =>
      Array.from({ length: S }, () => Array.from({ length: P }, () => answers(rng, K).map((a) => completion(rng, a)))),
    );
    const config = (agent: string): Record<string, unknown> => verlRewardConfig({ agent, url: s.url, wait: 60 }, K);
    const jobs = AGENTS.map((agent, a) => {
      const steps = plan[a]!.map((step, st) => {
        const samples = step.flatMap((texts, j) =>
          texts.map((response) => ({
            worker: rng.int(2),
            delay: rng.int(30) / 1000,
            row: {
              uid: `${agent}-uid-${st}-${j}`,
              data_source: 'openai/gsm8k',
              reward_model: { style: 'rule', ground_truth: '2' },
              extra_info: { split: 'train', index: j },
              raw_prompt: [{ role: 'user', content: `Problem q${j}: find it.` }],
            },
            prompt: `Problem q${j}: find it.`,
            response,
          })),
        );
        return samples;
      });
      // Validation (split "test"): one sample per prompt, padded with copies of the first rows as
      // verl pads a validation batch to the workers; scored by verl's compute_score, never exchanged.
      const val = [0, 1, 2, 0].map((j, i) => ({
        worker: i % 2,
        delay: 0,
        row: {
          uid: `${agent}-val-${j}`,
          data_source: 'openai/gsm8k',
          reward_model: { style: 'rule', ground_truth: '2' },
          extra_info: { split: 'test', index: j },
        },
        prompt: `Problem q${j}: find it.`,
        response: completion(new Rng(7 + j), j === 1 ? '3' : '2'),
      }));
      return {
        url: s.url,
        agent,
        mode: 'verl_loop',
        config: config(agent),
        vocab: vocabulary(),
        workers: 2,
        steps: [...steps, val],
      };
    });
    const results = await Promise.all(jobs.map((job, a) => python('trainers.py', job, tmp.dir, AGENTS[a]!)));
    results.forEach((r, a) => {
      expect(r.errors, AGENTS[a]).to.deep.equal([]);
      for (let st = 0; st < S; st++) {
        const got = r.results[st] as { reward_score: number; reward_extra_info: Record<string, number> }[];
        // verl counts the valid response tokens, the end-of-sequence token included.
        const expected = ringRewards(plan[a]![st]!, plan[peer(a)]![st]!).flat();
        expect(
          got.map((x) => x.reward_score),
          `${AGENTS[a]} step ${st}`,
        ).to.deep.equal(expected);
        expect(got.map((x) => x.reward_extra_info)).to.deep.equal(
          expected.map(() => ({ corl_labeled: 1, corl_fallback: 0 })),
        );
      }
      expect(r.results[S].map((x: any) => x.reward_score)).to.deep.equal([1, 0, 1, 1]);
      expect(r.results[S].map((x: any) => Object.keys(x.reward_extra_info))).to.deep.equal([
        ['acc'],
        ['acc'],
        ['acc'],
        ['acc'],
      ]);
    });
    // reward_model.ground_truth (2) is sent under the label-free vote and graded: once per group.
    for (const [a, agent] of AGENTS.entries()) {
      const right = plan[peer(a)]!.flat().filter((theirs) => labelOf(theirs) === '2').length;
      expect(await metric(s.url, `corl_serve_labels_graded_total{agent="${agent}"}`), agent).to.equal(S * P);
      expect(await metric(s.url, `corl_serve_labels_right_total{agent="${agent}"}`), agent).to.equal(right);
    }
    expect(await metric(s.url, 'corl_serve_completions_scored_total{route="/v1/samples"}')).to.equal(2 * S * P * K);
    expect(await metric(s.url, 'corl_serve_untokenized_completions_total{route="/v1/samples"}')).to.equal(undefined);
    expect(await metric(s.url, 'corl_serve_sample_groups_total{outcome="complete"}')).to.equal(2 * S * P);
  });

  it('verl custom compute_score: concurrent calls with reward_kwargs; the text alone, so lengths are characters (flagged)', async () => {
    const K = 3;
    const s = await serve(lengthRing({ exchange: { wait: 60 } }));
    const rng = new Rng(52);
    const plan = AGENTS.map(() => [0, 1].map(() => answers(rng, K).map((a) => completion(rng, a))));
    const results = await Promise.all(
      AGENTS.map((agent, a) =>
        python(
          'trainers.py',
          {
            mode: 'verl_compute_score',
            module: path.join(INTEGRATIONS, 'verl_reward_loop.py'),
            reward_kwargs: { agent, url: s.url, group_size: K },
            samples: plan[a]!.flatMap((texts, j) =>
              texts.map((t) => ({
                delay: rng.int(20) / 1000,
                data_source: 'openai/gsm8k',
                solution_str: t,
                ground_truth: '2',
                extra_info: { split: 'train', index: j },
              })),
            ),
          },
          tmp.dir,
          `cs-${agent}`,
        ),
      ),
    );
    results.forEach((r, a) => {
      const expected = ringRewards(plan[a]!, plan[peer(a)]!, (t) => t.length)
        .flat()
        .map((score) => ({ score, corl_labeled: 1 }));
      expect(r, AGENTS[a]).to.deep.equal(expected);
    });
    expect(await metric(s.url, 'corl_serve_untokenized_completions_total{route="/v1/samples"}')).to.equal(2 * 2 * K);
  });

  it('TRL v1.9.0 GRPOTrainer: per-process slices of six with groups of four, so a group is split across two processes; evaluation groups apart', async () => {
    const K = 4;
    const s = await serve(lengthRing({ exchange: { wait: 60 } }));
    const rng = new Rng(63);
    const P = 3; // 12 completions per generation batch: process 0 holds 0..5, process 1 holds 6..11
    const steps = [0, 2];
    // plan[agent][generation][problem] = K texts; evaluation: 2 problems, num_generations_eval 2.
    const plan = AGENTS.map(() =>
      steps.map(() => Array.from({ length: P }, () => answers(rng, K).map((a) => completion(rng, a)))),
    );
    const evalPlan = AGENTS.map(() => [0, 1].map(() => answers(rng, 2).map((a) => completion(rng, a))));
    const tokenize = (t: string): number[] => [...t.split(' ').map((_, i) => 2 + i), 1];
    const slice = (flat: any[], proc: number, n: number): any[] => flat.slice(proc * n, (proc + 1) * n);
    const jobs = AGENTS.flatMap((agent, a) =>
      [0, 1].map((proc) => {
        const gens = plan[a]!.map((gen, g) => {
          const flat = gen.flatMap((texts, j) =>
            texts.map((t) => ({
              prompt: [{ role: 'user', content: `Problem q${j}: find it.` }],
              completion: [{ role: 'assistant', content: t }],
              completion_ids: tokenize(t),
              id: `q${j}`,
              answer: '2',
            })),
          );
          return { global_step: steps[g], training: true, inputs: slice(flat, proc, (P * K) / 2) };
        });
        const evalFlat = evalPlan[a]!.flatMap((texts, j) =>
          texts.map((t) => ({
            prompt: `Eval e${j}`,
            completion: t,
            completion_ids: tokenize(t),
            id: `e${j}`,
            answer: '2',
          })),
        );
        return {
          url: s.url,
          agent,
          mode: 'trl_grpo',
          process_index: proc,
          num_generations: K,
          num_generations_eval: 2,
          reward: { agent, url: s.url, id_column: 'id', reference_column: 'answer' },
          steps: [...gens, { global_step: 2, training: false, inputs: slice(evalFlat, proc, 2) }],
        };
      }),
    );
    const out = await Promise.all(
      jobs.map((job, i) => python('trainers.py', job, tmp.dir, `trl-${i}`, {}, { userScript: ['trl_reward.py'] })),
    );
    AGENTS.forEach((agent, a) => {
      const [p0, p1] = [out[2 * a]!, out[2 * a + 1]!];
      expect(p0.name).to.equal(`corl_${agent}`);
      steps.forEach((st, g) => {
        const got = [...p0.steps[g].rewards, ...p1.steps[g].rewards];
        const expected = ringRewards(plan[a]![g]!, plan[peer(a)]![g]!).flat();
        expect(got, `${agent} step ${st}`).to.deep.equal(expected);
        expect(p0.steps[g].answer.samples.map((x: any) => x.step)).to.deep.equal(Array(6).fill(st));
      });
      // The group of q1 spans the processes: positions 4, 5 on process 0 and 6, 7 on process 1.
      expect(p0.steps[0].answer.samples.slice(4).map((x: any) => [x.group, x.sample, x.groupSize])).to.deep.equal([
        ['q1', 0, 4],
        ['q1', 1, 4],
      ]);
      expect(p1.steps[0].answer.samples.slice(0, 2).map((x: any) => [x.group, x.sample])).to.deep.equal([
        ['q1', 2],
        ['q1', 3],
      ]);
      const evalGot = [...p0.steps[2].rewards, ...p1.steps[2].rewards];
      const evalExpected = ringRewards(evalPlan[a]!, evalPlan[peer(a)]!).flat();
      expect(evalGot, `${agent} eval`).to.deep.equal(evalExpected);
      expect(p0.steps[2].answer.samples.map((x: any) => x.group)).to.deep.equal(['eval/e0', 'eval/e0']);
      expect(p0.metrics['corl/fallback_fraction']).to.deep.equal([0, 0, 0]);
      // The label-free vote's labels graded against the answer column (2): process 0 holds q0's four
      // samples and two of q1's at each step, and e0's two at evaluation. The length penalty makes
      // rewards other than 0/1, so no reward accuracy.
      const right = (theirs: readonly string[]): number => (labelOf(theirs) === '2' ? 1 : 0);
      const labelAccuracy = [
        ...steps.map((_, g) => (4 * right(plan[peer(a)]![g]![0]!) + 2 * right(plan[peer(a)]![g]![1]!)) / 6),
        right(evalPlan[peer(a)]![0]!),
      ];
      expect(p0.metrics['corl/label_accuracy'], agent).to.deep.equal(labelAccuracy);
      expect(p0.metrics).to.not.have.property('corl/reward_accuracy');
    });
    expect(await metric(s.url, 'corl_serve_sample_groups_total{outcome="complete"}')).to.equal(2 * (2 * P + 2));
  });

  it('TRL v1.9.0 AsyncGRPOTrainer: a pickled partial awaited on whole groups one at a time; peers only when allowed', async () => {
    const K = 3;
    const s = await serve(lengthRing({ exchange: { wait: 60 } }));
    const rng = new Rng(74);
    const plan = AGENTS.map(() => [0, 1, 2].map(() => answers(rng, K).map((a) => completion(rng, a))));
    const groups = (a: number): unknown[] =>
      plan[a]!.map((texts, j) => ({
        prompts: texts.map(() => [{ role: 'user', content: `Problem q${j}: find it.` }]),
        completions: texts.map((t) => [{ role: 'assistant', content: t }]),
        completion_ids: texts.map((t) => [...t.split(' ').map(() => 5), 1]),
        columns: { id: `q${j}`, answer: '2' },
      }));
    const refused = await python(
      'trainers.py',
      { mode: 'trl_async', reward: { agent: 'agent-0', url: s.url, id_column: 'id' }, groups: groups(0).slice(0, 1) },
      tmp.dir,
      'async-refused',
      {},
      { userScript: ['trl_reward.py'] },
    );
    expect(refused[0].value_error).to.contain("supervised by ['agent-1']").and.contain('one at a time');
    const out = await Promise.all(
      AGENTS.map((agent, a) =>
        python(
          'trainers.py',
          {
            mode: 'trl_async',
            reward: { agent, url: s.url, id_column: 'id', allow_peers: true, wait: 60 },
            groups: groups(a),
          },
          tmp.dir,
          `async-${agent}`,
          {},
          { userScript: ['trl_reward.py'] },
        ),
      ),
    );
    out.forEach((r, a) => {
      const expected = ringRewards(plan[a]!, plan[peer(a)]!).map((rewards) => ({ rewards }));
      expect(r, AGENTS[a]).to.deep.equal(expected);
    });
  });

  it('OpenRLHF v0.11.0 agent executor (--train.agent_func_path): concurrent executes per prompt post each sample with its token count', async () => {
    const K = 4;
    const s = await serve(lengthRing({ exchange: { wait: 60 } }));
    const rng = new Rng(85);
    const maxTokens = 20;
    const plan = AGENTS.map(() =>
      [0, 1, 2].map(() =>
        answers(rng, K).map(
          (a, k) =>
            [completion(rng, a, k === 3 ? 30 : 6 + rng.int(8)), k === 3 ? 'length' : 'stop'] as [string, string],
        ),
      ),
    );
    // What the engine hands back: at most maxTokens words; a stop adds the end-of-sequence token.
    const generated = ([t, finish]: [string, string]): { text: string; tokens: number } => {
      const w = t.split(' ').slice(0, maxTokens);
      return { text: w.join(' '), tokens: w.length + (finish === 'stop' ? 1 : 0) };
    };
    const out = await Promise.all(
      AGENTS.map((agent, a) =>
        python(
          'trainers.py',
          {
            mode: 'openrlhf_agent',
            module: path.join(INTEGRATIONS, 'openrlhf_agent.py'),
            vocab: vocabulary(['<|im_start|>user', '<|im_start|>assistant', 'q0', 'q1', 'q2']),
            max_length: 200,
            max_tokens: maxTokens,
            n: K,
            prompts: plan[a]!.map((texts, j) => ({
              prompt: `<|im_start|>user Problem q${j} find it. <|im_start|>assistant`,
              label: '2', // the reference answer (OpenRLHF's --data.label_key): graded, never voted with
              completions: texts,
              delays: texts.map(() => rng.int(40) / 1000),
            })),
            env: { CORL_AGENT: agent, CORL_GROUP_SIZE: String(K), CORL_SERVE_URL: s.url },
          },
          tmp.dir,
          `orl-${agent}`,
        ),
      ),
    );
    out.forEach((r, a) => {
      plan[a]!.forEach((texts, j) => {
        const theirs = plan[peer(a)]![j]!.map(generated);
        const label = servedLabel(
          theirs.map((x) => x.text),
          theirs.map((x) => keyOf(x.text)),
        );
        // The executes of a prompt run concurrently: the engine hands out its scripted completions in call order.
        const expected = texts.map(generated).map((g) => reward(keyOf(g.text), label, g.tokens));
        expect(
          r[j].map((x: any) => x.reward),
          `${AGENTS[a]} q${j}`,
        ).to.deep.equal(expected);
        expect(r[j].map((x: any) => x.scores)).to.deep.equal(expected.map((x) => Math.min(1, Math.max(0, x))));
        expect(r[j].map((x: any) => x.truncated)).to.deep.equal(texts.map(([, f]) => f === 'length'));
        // The length penalty makes rewards other than 0/1: the label is graded, the rewards are not.
        expect(r[j][0].extra_logs).to.deep.equal({
          'corl/labeled': 1,
          'corl/fallback': 0,
          'corl/label_accuracy': label === '2' ? 1 : 0,
        });
      });
    });
    expect(await metric(s.url, 'corl_serve_untokenized_completions_total{route="/v1/samples"}')).to.equal(undefined);
  });

  it('OpenRLHF agent executor with CORL_VOTE_SAMPLES: votes over M = 6, returns the N = 2 trained', async () => {
    const s = await serve(lengthRing({ exchange: { wait: 60 } }));
    // Each of a prompt's two executes generates its own sample, then two vote-only ones: the engine
    // hands out [own, vote, vote] per execute. agent-1's six vote "7" (its two own alone: "3"),
    // agent-0's six vote "5"; agent-0 is rewarded against "7", agent-1 against "5".
    const box = (x: string): [string, string] => [`so answer is $\\boxed{${x}}$.`, 'stop'];
    const scripts = [
      ['7', '5', '5', '2', '5', '5'],
      ['3', '7', '7', '3', '7', '7'],
    ].map((xs) => xs.map(box));
    const out = await Promise.all(
      AGENTS.map((agent, a) =>
        python(
          'trainers.py',
          {
            mode: 'openrlhf_agent',
            module: path.join(INTEGRATIONS, 'openrlhf_agent.py'),
            vocab: vocabulary(['<|im_start|>user', '<|im_start|>assistant', 'q0']),
            max_length: 200,
            max_tokens: 20,
            n: 2,
            prompts: [
              {
                prompt: '<|im_start|>user Problem q0 find it. <|im_start|>assistant',
                label: '7',
                completions: scripts[a],
                delays: scripts[a]!.map(() => 0),
              },
            ],
            env: { CORL_AGENT: agent, CORL_GROUP_SIZE: '2', CORL_VOTE_SAMPLES: '6', CORL_SERVE_URL: s.url },
          },
          tmp.dir,
          `orl-vote-${agent}`,
        ),
      ),
    );
    const labels = ['7', '5'];
    out.forEach((r, a) => {
      const own = [scripts[a]![0]![0], scripts[a]![3]![0]].map((t) => reward(keyOf(t), labels[a]!, words(t) + 1));
      expect(r[0].map((x: any) => x.reward).sort(), AGENTS[a]).to.deep.equal(own.sort());
      expect(r[0].map((x: any) => x.extra_logs['corl/label_accuracy'])).to.deep.equal(a === 0 ? [1, 1] : [0, 0]);
    });
  });

  it("OpenRLHF v0.11.0 remote reward URL: one aiohttp POST /get_reward per sample, a prompt's samples concurrent, per agent", async () => {
    const K = 4;
    const s = await serve(ringConfig('corl:vote', { getReward: { groupSize: K, wait: 60 }, exchange: { wait: 60 } }));
    const rng = new Rng(96);
    const plan = AGENTS.map(() => [0, 1].map(() => answers(rng, K).map((a) => completion(rng, a))));
    const out = await Promise.all(
      AGENTS.map((agent, a) =>
        python(
          'trainers.py',
          {
            mode: 'openrlhf_remote',
            remote_url: `${s.url}/get_reward?agent=${agent}`,
            samples: plan[a]!.flatMap((texts, j) => {
              const prompt = `<|im_start|>user\nProblem q${j}: find it.<|im_end|>\n<|im_start|>assistant\n`;
              return texts.map((t) => ({
                query: `${prompt}${t}<|im_end|>`,
                prompt,
                label: `q${j}`,
                delay: rng.int(30) / 1000,
              }));
            }),
          },
          tmp.dir,
          `remote-${agent}`,
        ),
      ),
    );
    out.forEach((r, a) => {
      const expected = plan[a]!.flatMap((texts, j) => {
        const label = labelOf(plan[peer(a)]![j]!);
        return texts.map((t) => (keyOf(t) !== null && keyOf(t) === label ? 1 : 0));
      });
      expect(
        r.map((x: any) => x.rewards),
        AGENTS[a],
      ).to.deep.equal(expected.map((x) => [x]));
      expect(r.map((x: any) => x.extra_logs['label/labeled'])).to.deep.equal(expected.map(() => [1]));
    });
    expect(await metric(s.url, 'corl_serve_untokenized_completions_total{route="/get_reward"}')).to.equal(2 * 2 * K);
  });

  it('slime v0.3.1 --group-rm: the custom reward awaited on each whole group, the groups concurrently, lengths in tokens', async () => {
    const K = 4;
    const s = await serve(lengthRing({ exchange: { wait: 60 } }));
    const rng = new Rng(107);
    const plan = AGENTS.map(() => [0, 1, 2].map(() => answers(rng, K).map((a) => completion(rng, a))));
    const out = await Promise.all(
      AGENTS.map((agent, a) =>
        python(
          'trainers.py',
          {
            mode: 'slime_group_rm',
            groups: plan[a]!.map((texts, j) => ({
              delay: rng.int(30) / 1000,
              samples: texts.map((t, k) => ({
                prompt: [{ role: 'user', content: `Problem q${j}: find it.` }],
                response: t,
                response_length: words(t) + 1,
                label: '2',
                metadata: { id: `q${j}` },
                status: k === 0 ? 'TRUNCATED' : 'COMPLETED',
              })),
            })),
            env: { CORL_AGENT: agent, CORL_SERVE_URL: s.url },
          },
          tmp.dir,
          `slime-${agent}`,
          {},
          { pythonPath: ['slime_rm.py'] },
        ),
      ),
    );
    out.forEach((r, a) => {
      const expected = ringRewards(plan[a]!, plan[peer(a)]!);
      expect(r, AGENTS[a]).to.deep.equal(expected);
    });
  });
});
