// Two agents that see different data, end to end: each trains on a different order AND a different
// subset of the prompts (as OpenRLHF's dynamic filtering and slime's over-sampling make them), driven
// through the shipped adapters loaded as their trainers load them (test/integrations/py/trainers.py:
// verl's reward workers by file path in spawned processes, OpenRLHF's agent executor by file path,
// slime's reward by import_module from a folder holding it alone), against the real `corl serve`.
// A problem both agents sample is rewarded against the peer's whole group, whenever each reached it;
// a problem only one samples falls back to its own vote (TTRL), and the adapter's logs, the answer
// and GET /metrics all count it. Every reward below is worked out by hand from the completions.
//
// The agents' jobs are released together (a gate file, after every process and reward worker is
// up), so only `exchange.wait` separates a shared problem's two posts from a fallback: agent-1 is
// never behind agent-0 in the data (a trainer's step waits for its rewards, so two agents whose
// orders cross in both directions wait on each other until `exchange.wait` runs out; see the serve
// guide, "Rounds without a step"), and the problems one agent alone samples come in its last step.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Rng } from '../../core/util/rng';
import { tempDir, writeConfig } from '../fixtures/configs';
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

const AGENTS = ['agent-0', 'agent-1'] as const;
const K = 4;
/** Seconds a group waits for its peer: ample for two released jobs, paid once by each fallback. */
const WAIT = 10;
const REFERENCE = '2';

/**
 * Which problems each agent samples at each of its steps. agent-1 is never behind agent-0: p2 comes
 * at its step 0 and at agent-0's step 1. a0 and a1 are agent-0's alone, b0 agent-1's alone.
 */
const STEPS: Record<(typeof AGENTS)[number], string[][]> = {
  'agent-0': [
    ['p0', 'p3'],
    ['p4', 'p1', 'a0', 'p2', 'a1'],
  ],
  'agent-1': [
    ['p3', 'p2', 'p0'],
    ['b0', 'p1', 'p4'],
  ],
};

/** K completions per problem and agent, drawn once. */
function drawTexts(seed: number): Map<string, string[]> {
  const rng = new Rng(seed);
  const texts = new Map<string, string[]>();
  for (const agent of AGENTS)
    for (const p of STEPS[agent].flat())
      texts.set(
        `${agent}|${p}`,
        answers(rng, K).map((a) => completion(rng, a)),
      );
  return texts;
}

interface Expected {
  readonly rewards: number[];
  readonly label: string | null;
  readonly fallback: boolean;
}

/** What the ring serves agent `a` for problem `p`: the peer's vote where the peer sampled p, else its own. */
function expectedOf(texts: Map<string, string[]>, a: number, p: string): Expected {
  const own = texts.get(`${AGENTS[a]}|${p}`)!;
  const theirs = texts.get(`${AGENTS[1 - a]}|${p}`);
  const voters = theirs ?? own;
  const label = servedLabel(voters, voters.map(keyOf));
  return {
    rewards: own.map((t) => (keyOf(t) !== null && keyOf(t) === label ? 1 : 0)),
    label,
    fallback: theirs === undefined,
  };
}

/** Create the gate once every `who` has said it is ready (the jobs poll for it). */
async function release(gate: string, who: readonly string[], running: Promise<unknown>): Promise<void> {
  let failed = false;
  running.catch(() => (failed = true));
  while (!who.every((w) => fs.existsSync(`${gate}.${w}.ready`))) {
    if (failed) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  fs.writeFileSync(gate, '');
}

/** GET /metrics's diagnostics per agent, and the fallbacks. */
async function served(url: string): Promise<Record<string, number | undefined>> {
  const out: Record<string, number | undefined> = {};
  for (const agent of AGENTS)
    for (const s of ['labels_graded', 'labels_right', 'rewards_graded', 'rewards_right'])
      out[`${s}|${agent}`] = await metric(url, `corl_serve_${s}_total{agent="${agent}"}`);
  out.self = await metric(url, 'corl_serve_exchange_fallbacks_total{kind="self"}');
  out.unseen = await metric(url, 'corl_serve_exchange_peer_unseen_total');
  return out;
}

/** What GET /metrics must say: every group was sent with reference 2 (label-free: graded only). */
function expectedServed(texts: Map<string, string[]>): Record<string, number | undefined> {
  const out: Record<string, number | undefined> = {};
  let fallbacks = 0;
  AGENTS.forEach((agent, a) => {
    const problems = STEPS[agent].flat();
    const all = problems.map((p) => ({ p, e: expectedOf(texts, a, p) }));
    fallbacks += all.filter(({ e }) => e.fallback).length;
    out[`labels_graded|${agent}`] = problems.length;
    out[`labels_right|${agent}`] = all.filter(({ e }) => e.label === REFERENCE).length;
    out[`rewards_graded|${agent}`] = problems.length * K;
    out[`rewards_right|${agent}`] = all
      .flatMap(({ p, e }) =>
        texts.get(`${agent}|${p}`)!.map((t, k) => e.rewards[k] === (keyOf(t) === REFERENCE ? 1 : 0)),
      )
      .filter(Boolean).length;
  });
  out.self = fallbacks;
  out.unseen = fallbacks;
  return out;
}

describe('integrations: two agents on different orders and subsets of the data, through the adapters', function () {
  this.timeout(240000);
  let tmp: ReturnType<typeof tempDir>;
  const services: Service[] = [];

  before(checkPython);
  beforeEach(() => {
    tmp = tempDir('corl-diffdata-');
  });
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop('SIGTERM');
    tmp.cleanup();
  });

  async function serve(): Promise<Service> {
    const config = ringConfig('corl:vote', { exchange: { wait: WAIT, fallback: 'self' } });
    const s = await startService(writeConfig(tmp.dir, 'serve.json', config), path.join(tmp.dir, 'journal.jsonl'));
    services.push(s);
    return s;
  }

  it('verl v0.9.0 reward loop: each step a different order, subsets apart; peers met by problem whenever each reached it', async () => {
    const s = await serve();
    const texts = drawTexts(201);
    const rng = new Rng(202);
    const gate = path.join(tmp.dir, 'gate');
    const jobs = AGENTS.map((agent) => ({
      url: s.url,
      agent,
      mode: 'verl_loop',
      gate,
      config: verlRewardConfig({ agent, url: s.url }, K),
      vocab: vocabulary(['a0:', 'a1:', 'b0:', 'p0:', 'p1:', 'p2:', 'p3:', 'p4:']),
      workers: 2,
      steps: STEPS[agent].map((problems, st) =>
        problems.flatMap((p) => {
          // verl mints a uid per rollout and process: the K samples share it, no two agents do
          const uid = `${agent}-${st}-${p}-${rng.int(1e9)}`;
          return texts.get(`${agent}|${p}`)!.map((response) => ({
            worker: rng.int(2),
            delay: rng.int(30) / 1000,
            row: {
              uid,
              data_source: 'openai/gsm8k',
              reward_model: { style: 'rule', ground_truth: REFERENCE },
              extra_info: { split: 'train', index: p },
              raw_prompt: [{ role: 'user', content: `Problem ${p}: find it.` }],
            },
            prompt: `Problem ${p}: find it.`,
            response,
          }));
        }),
      ),
    }));
    const running = Promise.all(jobs.map((job) => python('trainers.py', job, tmp.dir, job.agent)));
    await release(
      gate,
      AGENTS.flatMap((a) => [`${a}-0`, `${a}-1`]),
      running,
    );
    const results = await running;
    results.forEach((r, a) => {
      expect(r.errors, AGENTS[a]).to.deep.equal([]);
      STEPS[AGENTS[a]!].forEach((problems, st) => {
        const got = r.results[st] as { reward_score: number; reward_extra_info: Record<string, number> }[];
        const want = problems.flatMap((p) => {
          const e = expectedOf(texts, a, p);
          return e.rewards.map((reward) => ({
            reward_score: reward,
            reward_extra_info: { corl_labeled: e.label === null ? 0 : 1, corl_fallback: e.fallback ? 1 : 0 },
          }));
        });
        expect(got, `${AGENTS[a]} step ${st}`).to.deep.equal(want);
      });
    });
    expect(await served(s.url)).to.deep.equal(expectedServed(texts));
  });

  it('OpenRLHF v0.11.0 agent executor: prompts in another order and another subset per agent, all of a batch concurrent', async () => {
    const s = await serve();
    const texts = drawTexts(301);
    const rng = new Rng(302);
    const gate = path.join(tmp.dir, 'gate');
    const prompt = (p: string): string => `<|im_start|>user Problem ${p} find it. <|im_start|>assistant`;
    // OpenRLHF dispatches a rollout batch's prompts at once: each agent's order is that of its
    // engine's answers (the delays), its subset the prompts it holds after filtering.
    const jobs = AGENTS.map((agent) => ({
      agent,
      mode: 'openrlhf_agent',
      gate,
      module: path.join(INTEGRATIONS, 'openrlhf_agent.py'),
      vocab: vocabulary(['<|im_start|>user', '<|im_start|>assistant', 'a0', 'a1', 'b0', 'p0', 'p1', 'p2', 'p3', 'p4']),
      max_length: 200,
      max_tokens: 40,
      n: K,
      prompts: STEPS[agent].flat().map((p, order) => ({
        prompt: prompt(p),
        label: REFERENCE, // --data.label_key: the reference, graded under the label-free vote
        completions: texts.get(`${agent}|${p}`)!.map((t) => [t, 'stop']),
        delays: texts.get(`${agent}|${p}`)!.map(() => order * 0.02 + rng.int(20) / 1000),
      })),
      env: { CORL_AGENT: agent, CORL_GROUP_SIZE: String(K), CORL_SERVE_URL: s.url },
    }));
    const running = Promise.all(jobs.map((job) => python('trainers.py', job, tmp.dir, `orl-${job.agent}`)));
    await release(gate, AGENTS, running);
    const out = await running;
    out.forEach((r, a) => {
      STEPS[AGENTS[a]!].flat().forEach((p, j) => {
        const e = expectedOf(texts, a, p);
        // The engine hands out a prompt's scripted completions in call order, its executes concurrent.
        expect(
          r[j].map((x: { reward: number }) => x.reward),
          `${AGENTS[a]} ${p}`,
        ).to.deep.equal(e.rewards);
        const own = texts.get(`${AGENTS[a]}|${p}`)!;
        expect(
          r[j].map((x: { extra_logs: Record<string, number> }) => x.extra_logs),
          `${AGENTS[a]} ${p}`,
        ).to.deep.equal(
          own.map((t, k) => ({
            'corl/labeled': e.label === null ? 0 : 1,
            'corl/fallback': e.fallback ? 1 : 0,
            'corl/label_accuracy': e.label === REFERENCE ? 1 : 0,
            'corl/reward_accuracy': e.rewards[k] === (keyOf(t) === REFERENCE ? 1 : 0) ? 1 : 0,
          })),
        );
      });
    });
    expect(await served(s.url)).to.deep.equal(expectedServed(texts));
  });

  it('slime v0.3.1 --group-rm: each agent its own subset, groups in its own order, concurrent', async () => {
    const s = await serve();
    const texts = drawTexts(401);
    const gate = path.join(tmp.dir, 'gate');
    const jobs = AGENTS.map((agent) => ({
      agent,
      mode: 'slime_group_rm',
      gate,
      groups: STEPS[agent].flat().map((p, order) => ({
        delay: order * 0.03,
        samples: texts.get(`${agent}|${p}`)!.map((t) => ({
          prompt: [{ role: 'user', content: `Problem ${p}: find it.` }],
          response: t,
          response_length: t.split(' ').length + 1,
          label: REFERENCE,
          metadata: { id: p },
          status: 'COMPLETED',
        })),
      })),
      env: { CORL_AGENT: agent, CORL_SERVE_URL: s.url },
    }));
    const running = Promise.all(
      jobs.map((job) => python('trainers.py', job, tmp.dir, `slime-${job.agent}`, {}, { pythonPath: ['slime_rm.py'] })),
    );
    await release(gate, AGENTS, running);
    const out = await running;
    out.forEach((r, a) => {
      expect(r, AGENTS[a]).to.deep.equal(STEPS[AGENTS[a]!].flat().map((p) => expectedOf(texts, a, p).rewards));
    });
    // slime's reward sends no reference under a label-free reward: nothing is graded
    const got = await served(s.url);
    expect([got.self, got.unseen]).to.deep.equal([3, 3]);
    expect(got['labels_graded|agent-0']).to.equal(undefined);
  });
});
