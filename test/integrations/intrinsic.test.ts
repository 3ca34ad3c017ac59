// Intrinsic rewards (RENT, Intuitor: `corl:intrinsic`) served to the trainer adapters from the token
// statistics each trainer really has, against the real `node bin/corl.js serve`:
// - OpenRLHF's agent executor calls the engine itself, so it asks for log-probabilities. The engine
//   here is a real (small) language model: a seeded bigram model whose whole next-token distribution
//   over the tokenizer's vocabulary is known, answering as vLLM does (top-k dicts plus the sampled
//   token). With k covering the vocabulary the served rewards equal RENT and Intuitor computed from
//   the exact distributions; with k < V they follow the stated top-k estimate, hand-computed here,
//   and stay on the stated side of the exact values; "sampled" sends -log p(sampled token).
// - slime keeps the sampled tokens' log-probabilities (sample.rollout_log_probs): RENT from them.
// - verl's batch after generation carries rollout_log_probs: RENT from them; its streaming one-sample
//   batch carries none, and the manager says so instead of posting.
// - TRL hands a reward function no log-probabilities: the adapter refuses the service.
import { expect } from 'chai';
import * as path from 'node:path';
import { tempDir, writeConfig } from '../fixtures/configs';
import {
  INTEGRATIONS,
  checkPython,
  python,
  startService,
  verlRewardConfig,
  vocabulary,
  type Service,
} from './serve-process';

const K = 4;
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The top-k estimate of one position (corl_client.top_logprob_stats), computed here by hand. */
function topK(reported: readonly number[], V: number): { h: number; m: number } {
  let h = 0;
  let total = 0;
  let mass = 0;
  for (const lp of reported) {
    h -= Math.exp(lp) * lp;
    total += lp;
    mass += Math.exp(lp);
  }
  const rest = V - reported.length;
  if (rest > 0) {
    const tail = Math.max(1 - mass, 1e-12);
    const each = Math.log(tail / rest);
    h -= tail * each;
    total += rest * each;
  }
  return { h, m: total / V };
}

interface Exact {
  entropies: number[];
  mean_logprobs: number[];
  sampled: number[];
  reported: number[][];
}

describe('integrations: intrinsic rewards (RENT, Intuitor) from the token statistics each trainer has', function () {
  this.timeout(180000);
  let tmp: ReturnType<typeof tempDir>;
  const services: Service[] = [];
  const vocab = vocabulary();
  const V = vocab.length + 2; // the stand-in tokenizer's pad and end tokens

  before(checkPython);
  beforeEach(() => {
    tmp = tempDir('corl-intrinsic-');
  });
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop('SIGTERM');
    tmp.cleanup();
  });

  async function serve(options: Record<string, unknown>): Promise<Service> {
    const config = {
      name: 'intrinsic',
      agents: [{ name: 'agent-0' }],
      topology: 'corl:self',
      reward: { use: 'corl:intrinsic', options },
      serve: { port: 0 },
    };
    const s = await startService(writeConfig(tmp.dir, 'serve.json', config), path.join(tmp.dir, 'journal.jsonl'));
    services.push(s);
    return s;
  }

  async function openrlhf(
    url: string,
    env: Record<string, string>,
    name: string,
  ): Promise<{ reward: number; tokens: number; rollout_log_probs: null; exact: Exact }[]> {
    const out = await python(
      'trainers.py',
      {
        mode: 'openrlhf_agent_lm',
        module: path.join(INTEGRATIONS, 'openrlhf_agent.py'),
        vocab,
        seed: 11,
        lm_seed: 5,
        max_length: 64,
        max_tokens: 12,
        n: K,
        prompts: [0, 1].map((j) => ({ prompt: `Problem q${j}: find it.`, label: `q${j}` })),
        env: { CORL_AGENT: 'agent-0', CORL_GROUP_SIZE: String(K), CORL_SERVE_URL: url, ...env },
      },
      tmp.dir,
      name,
    );
    return (out as any[]).flat();
  }

  it('OpenRLHF agent executor, top-k over the whole vocabulary: RENT and Intuitor equal the exact values of the sampled positions', async () => {
    const rent = await serve({ method: 'rent' });
    const r = await openrlhf(rent.url, { CORL_TOP_LOGPROBS: String(V) }, 'rent');
    expect(r.length).to.equal(2 * K);
    for (const x of r) {
      expect(x.exact.entropies.length).to.equal(x.tokens);
      expect(x.tokens).to.be.greaterThan(0);
      expect(x.reward).to.be.closeTo(-mean(x.exact.entropies), 1e-9);
      expect(x.rollout_log_probs, 'OpenRLHF asked for none').to.equal(null);
    }
    // Real distributions: the entropies differ from sample to sample (not a constant stand-in).
    expect(new Set(r.map((x) => x.reward.toFixed(6))).size).to.be.greaterThan(4);
    await rent.stop();
    const intuitor = await serve({ method: 'intuitor', vocabSize: V });
    const q = await openrlhf(intuitor.url, { CORL_TOP_LOGPROBS: String(V) }, 'intuitor');
    for (const x of q) expect(x.reward).to.be.closeTo(-Math.log(V) - mean(x.exact.mean_logprobs), 1e-9);
    // Self-certainty is a KL divergence: never negative.
    for (const x of q) expect(x.reward).to.be.greaterThan(0);
  });

  it('OpenRLHF agent executor, top-5 of the vocabulary: the stated estimate, an upper bound of the entropy and a lower bound of the self-certainty', async () => {
    const rent = await serve({ method: 'rent' });
    const r = await openrlhf(rent.url, { CORL_TOP_LOGPROBS: '5' }, 'rent-5');
    for (const x of r) {
      expect(x.exact.reported.every((c) => c.length === 5 || c.length === 6)).to.equal(true);
      expect(x.reward).to.be.closeTo(-mean(x.exact.reported.map((c) => topK(c, V).h)), 1e-9);
      expect(x.reward).to.be.at.most(-mean(x.exact.entropies) + 1e-12);
    }
    await rent.stop();
    const intuitor = await serve({ method: 'intuitor', vocabSize: V });
    const q = await openrlhf(intuitor.url, { CORL_TOP_LOGPROBS: '5' }, 'intuitor-5');
    for (const x of q) {
      expect(x.reward).to.be.closeTo(-Math.log(V) - mean(x.exact.reported.map((c) => topK(c, V).m)), 1e-9);
      expect(x.reward).to.be.at.most(-Math.log(V) - mean(x.exact.mean_logprobs) + 1e-12);
    }
  });

  it('OpenRLHF agent executor, CORL_TOKEN_STATS=sampled: RENT from -log p of each sampled token', async () => {
    const rent = await serve({ method: 'rent' });
    const r = await openrlhf(rent.url, { CORL_TOKEN_STATS: 'sampled' }, 'sampled');
    for (const x of r) {
      expect(x.exact.reported.every((c) => c.length === 1)).to.equal(true); // logprobs=0: the sampled token alone
      expect(x.reward).to.be.closeTo(mean(x.exact.sampled), 1e-9);
    }
  });

  it('slime --group-rm: RENT from sample.rollout_log_probs; verl: from the batch rollout_log_probs, refused where the streaming batch has none; TRL refuses', async () => {
    const s = await serve({ method: 'rent' });
    const logprobs = (k: number, n: number): number[] =>
      Array.from({ length: n }, (_, t) => -0.05 - 0.37 * ((k * 7 + t * 3) % 5));
    const slime = await python(
      'trainers.py',
      {
        mode: 'slime_group_rm',
        groups: [
          {
            delay: 0,
            samples: [0, 1, 2, 3].map((k) => ({
              prompt: 'Problem q0: find it.',
              response: 'so answer is $\\boxed{2}$.',
              response_length: 3 + k,
              label: '2',
              metadata: { id: 'q0' },
              status: 'COMPLETED',
              rollout_log_probs: logprobs(k, 3 + k),
            })),
          },
        ],
        env: { CORL_AGENT: 'agent-0', CORL_SERVE_URL: s.url },
      },
      tmp.dir,
      'slime',
      {},
      { pythonPath: ['slime_rm.py'] },
    );
    expect(slime[0].length).to.equal(4);
    slime[0].forEach((reward: number, k: number) => expect(reward).to.be.closeTo(mean(logprobs(k, 3 + k)), 1e-12));

    const row = (j: number, k: number) => ({
      uid: `u${j}`,
      data_source: 'openai/gsm8k',
      reward_model: { style: 'rule', ground_truth: '2' },
      extra_info: { split: 'train', index: `v${j}` },
      raw_prompt: [{ role: 'user', content: `Problem q${j}: find it.` }],
      k,
    });
    const response = 'so answer is $\\boxed{2}$.'; // 4 words + the end token
    const verl = (withLogprobs: boolean, j: number) =>
      python(
        'trainers.py',
        {
          mode: 'verl_loop',
          config: verlRewardConfig({ agent: 'agent-0', url: s.url }, K, null),
          vocab: vocabulary(),
          workers: 1,
          steps: [
            [0, 1, 2, 3].map((k) => ({
              worker: 0,
              delay: 0,
              row: row(j, k),
              prompt: `Problem q${j}: find it.`,
              response,
              ...(withLogprobs ? { rollout_log_probs: logprobs(k, 5) } : {}),
            })),
          ],
        },
        tmp.dir,
        `verl-${withLogprobs}`,
      );
    const got = await verl(true, 1);
    expect(got.errors).to.deep.equal([]);
    got.results[0].forEach((x: any, k: number) =>
      expect(x.reward_score).to.be.closeTo(mean(logprobs(k, 5).map((v) => Math.fround(v))), 1e-9),
    );
    const streaming = await verl(false, 2);
    expect(streaming.errors.length).to.equal(1);
    expect(streaming.errors[0])
      .to.contain('expected rollout_log_probs in the sample')
      .and.contain('streaming reward loop');

    const trl = await python(
      'trainers.py',
      {
        mode: 'trl_async',
        reward: { agent: 'agent-0', url: s.url, id_column: 'id' },
        groups: [{ prompts: ['p', 'p'], completions: ['a', 'b'], completion_ids: [[1], [1]], columns: { id: 'q9' } }],
      },
      tmp.dir,
      'trl',
      {},
      { userScript: ['trl_reward.py'] },
    );
    expect(trl[0].value_error).to.contain('RENT and Intuitor cannot be served to TRL');
  });
});
