import { expect } from 'chai';
import type { AnswerExtractor } from '../../../core/contracts/answer-extractor';
import type { Equivalence } from '../../../core/contracts/equivalence';
import type { RewardContext, RewardSource } from '../../../core/contracts/reward-source';
import { isCorlError, type CorlError } from '../../../core/errors';
import { AnswerKeys } from '../../../core/reward/answer-keys';
import type { GroupToScore } from '../../../core/reward/context';
import { RewardPipeline } from '../../../core/reward/pipeline';
import { coRlConfig, fixture, tempDir } from '../../fixtures/configs';
import { mutations } from '../../fixtures/faulty-rewards';
import { boxed, get, post, ringServeConfig, startServer } from '../../fixtures/serve';
import { readRollouts, trainIn } from '../../support/scripted-run';
import { thrown } from '../../fixtures/errors';

const extractor: AnswerExtractor = { extract: (t) => /\\boxed\{([^}]*)\}/.exec(t)?.[1] ?? null };
/** Keys are the trimmed answer; keys equal by numeric value. */
const equivalence: Equivalence = {
  key: (a) => a.trim() || null,
  equal: async (a, b) => Number(a) === Number(b),
};

function pipeline(reward: RewardSource): RewardPipeline {
  return new RewardPipeline({
    reward,
    use: 'test:source',
    keys: new AnswerKeys(extractor, equivalence),
    equivalence,
  });
}

function group(over: Partial<GroupToScore> = {}): GroupToScore {
  return {
    problem: { id: 'p1', prompt: '2+2?' },
    prompt: '2+2?',
    agent: 0,
    agents: 2,
    step: 0,
    completions: ['\\boxed{4}', '\\boxed{4.0}', 'none'].map((text) => ({ text, length: 1, finishReason: 'stop' })),
    answers: ['4', '4.0', null],
    keys: ['4', '4.0', null],
    supervisors: [{ agent: 1, keys: ['4', '5', null] }],
    ...over,
  };
}

/** The error a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('core/reward/pipeline', () => {
  it("answers: the run's answers and keys; keys that are no answer are null", async () => {
    const p = pipeline({ score: async () => ({ rewards: [] }) });
    expect(await p.answers({ id: 'p', prompt: '' }, ['\\boxed{ 7 }', '\\boxed{ }', 'x'], 'group "p"')).to.deep.equal({
      answers: [' 7 ', ' ', null],
      keys: ['7', null, null],
    });
  });

  it('rawAnswers: the answers answers() gives, from the key cache (no extraction again); a throw is coded', async () => {
    let extracted = 0;
    const counting: AnswerExtractor = {
      extract: (t) => {
        extracted++;
        if (t === 'boom') throw new Error('extractor broke');
        return /\\boxed\{([^}]*)\}/.exec(t)?.[1] ?? null;
      },
    };
    const p = new RewardPipeline({
      reward: { score: async () => ({ rewards: [] }) },
      use: 'test:source',
      keys: new AnswerKeys(counting, equivalence),
      equivalence,
    });
    const texts = ['\\boxed{ 7 }', '\\boxed{3}', 'x'];
    const { answers } = await p.answers({ id: 'p', prompt: '' }, texts, 'group "p"');
    expect(extracted).to.equal(3);
    expect(p.rawAnswers(texts, 'group "p"')).to.deep.equal(answers).and.deep.equal([' 7 ', '3', null]);
    expect(extracted, 'every text came from the cache').to.equal(3);
    const e = thrown(() => p.rawAnswers(['boom'], 'group "q"'));
    expect(e.code).to.equal('CORL_ERR_REWARD_FAILED');
    expect(e.message).to.contain('the answer keys of group "q"').and.contain('extractor broke');
  });

  it("answers: a source's own answerKeys vote, checked, handed a frozen copy of the problem; answers stay the run's", async () => {
    let seen: { problem: unknown; texts: readonly string[] } | undefined;
    const problem = { id: 'p', prompt: 'q', testInputs: [['1']] };
    const p = pipeline({
      async answerKeys(input) {
        seen = input;
        return ['out:1', ''];
      },
      score: async () => ({ rewards: [] }),
    });
    expect(await p.answers(problem, ['\\boxed{3}', 'y'], 'group "p"')).to.deep.equal({
      answers: ['3', null],
      keys: ['out:1', null],
    });
    expect(seen!.problem).to.deep.equal(problem);
    expect(seen!.problem).to.not.equal(problem);
    expect(Object.isFrozen(seen!.problem) && Object.isFrozen(seen!.texts)).to.equal(true);
    expect(Object.isFrozen(problem)).to.equal(false);

    const short = pipeline({ answerKeys: async () => ['a'], score: async () => ({ rewards: [] }) });
    const e = await rejection(short.answers(problem, ['x', 'y'], 'group "p"'));
    expect(isCorlError(e, 'CORL_ERR_REWARD_OUTPUT')).to.equal(true);
  });

  it('score: the source reads a frozen context of copies; the result is checked and the labels compared', async () => {
    let ctx: RewardContext | undefined;
    const p = pipeline({
      async score(c) {
        ctx = c;
        return { rewards: [1, 1, 0], label: '4', ownLabel: '4.00', metrics: { 'm/x': 2, 'm/bad': NaN } };
      },
    });
    const g = group({ round: 1 });
    const scored = await p.score(g, 'problem "p1"');
    expect(scored).to.deep.equal({ rewards: [1, 1, 0], label: '4', ownLabel: '4.00', metrics: { 'm/x': 2 }, agree: 1 });
    expect(Object.isFrozen(ctx) && Object.isFrozen(ctx!.supervisors[0]!.keys)).to.equal(true);
    expect(ctx!.supervisors[0]!.keys).to.not.equal(g.supervisors[0]!.keys);
    expect(ctx!.round).to.equal(1);
    expect(ctx!.completions.map((c) => [c.answer, c.key])).to.deep.equal([
      ['4', '4'],
      ['4.0', '4.0'],
      [null, null],
    ]);
  });

  it('score: agreement is absent unless both labels exist, and 0 when they differ', async () => {
    const with_ = (label: string | null, ownLabel?: string | null) =>
      pipeline({ score: async () => ({ rewards: [0, 0, 0], label, ...(ownLabel !== undefined ? { ownLabel } : {}) }) });
    expect((await with_('4', '5').score(group(), 'g')).agree).to.equal(0);
    expect((await with_('4', null).score(group(), 'g')).agree).to.equal(undefined);
    expect((await with_(null, '4').score(group(), 'g')).agree).to.equal(undefined);
    expect((await with_('4').score(group(), 'g')).agree).to.equal(undefined);
  });

  it('score: a throwing source is CORL_ERR_REWARD_FAILED naming the group, bad output CORL_ERR_REWARD_OUTPUT', async () => {
    const throws = pipeline({
      score: async () => {
        throw new Error('sandbox gone');
      },
    });
    const e = await rejection(throws.score(group(), 'problem "p1" of agent 0 (a) at step 1'));
    expect(isCorlError(e, 'CORL_ERR_REWARD_FAILED')).to.equal(true);
    expect((e as CorlError).detail).to.equal(
      'expected the reward of problem "p1" of agent 0 (a) at step 1 to succeed, got sandbox gone',
    );
    const bad = pipeline({ score: async () => ({ rewards: [1, 0] }) });
    expect(isCorlError(await rejection(bad.score(group(), 'g')), 'CORL_ERR_REWARD_OUTPUT')).to.equal(true);
    const keys = pipeline({
      answerKeys: async () => {
        throw new Error('no interpreter');
      },
      score: async () => ({ rewards: [] }),
    });
    const k = await rejection(keys.answers({ id: 'p', prompt: '' }, ['x'], 'group "p"'));
    expect(isCorlError(k, 'CORL_ERR_REWARD_FAILED')).to.equal(true);
    expect((k as Error).message).to.contain('the answer keys of group "p"');
  });
});

describe('core/reward/pipeline: scoreMany (a whole step at once)', () => {
  it('hands a source with scoreMany every group in one call, as frozen contexts with token ids and the step count, and checks each result', async () => {
    const calls: RewardContext[][] = [];
    let scoreCalls = 0;
    const p = pipeline({
      async score() {
        scoreCalls++;
        return { rewards: [0, 0, 0] };
      },
      async scoreMany(contexts) {
        calls.push([...contexts]);
        return contexts.map((c) => ({ rewards: [c.agent, c.step, 1], label: '4', ownLabel: '5' }));
      },
    });
    const withIds = (agent: number) =>
      group({
        agent,
        totalSteps: 10,
        completions: ['\\boxed{4}', 'x', 'y'].map((text) => ({ text, length: 1, tokenIds: [7], finishReason: 'stop' })),
      });
    const scored = await p.scoreMany([withIds(0), withIds(1)], ['a', 'b'], 'the step');
    expect(scoreCalls).to.equal(0);
    expect(calls).to.have.length(1);
    expect(calls[0]!.map((c) => c.agent)).to.deep.equal([0, 1]);
    expect(Object.isFrozen(calls[0]![0]!.completions[0]!.tokenIds)).to.equal(true);
    expect(calls[0]![0]!.completions[0]!.tokenIds).to.deep.equal([7]);
    expect(calls[0]![0]!.totalSteps).to.equal(10);
    expect(scored.map((s) => [s.rewards, s.agree])).to.deep.equal([
      [[0, 0, 1], 0],
      [[1, 0, 1], 0],
    ]);
  });

  it("hands the caller's work to scoreMany, and to score when it falls back", async () => {
    const work = { lane: 'agent-1' };
    const got: unknown[] = [];
    const many = pipeline({
      score: async () => ({ rewards: [0, 0, 0] }),
      scoreMany: async (contexts, w) => {
        got.push(w);
        return contexts.map(() => ({ rewards: [0, 0, 0] }));
      },
    });
    await many.scoreMany([group()], ['a'], 'x', work);
    const one = pipeline({
      score: async (_c, w) => {
        got.push(w);
        return { rewards: [0, 0, 0] };
      },
    });
    await one.scoreMany([group()], ['a'], 'x', work);
    expect(got).to.deep.equal([work, work]);
  });

  it('falls back to score group by group; a wrong count or a bad result is CORL_ERR_REWARD_OUTPUT, a throw CORL_ERR_REWARD_FAILED', async () => {
    const one = pipeline({ score: async (c) => ({ rewards: [c.agent, 0, 0] }) });
    expect((await one.scoreMany([group({ agent: 1 }), group()], ['a', 'b'], 'x')).map((s) => s.rewards)).to.deep.equal([
      [1, 0, 0],
      [0, 0, 0],
    ]);
    const short = pipeline({ score: async () => ({ rewards: [] }), scoreMany: async () => [{ rewards: [0, 0, 0] }] });
    const e = await rejection(short.scoreMany([group(), group()], ['a', 'b'], 'the step'));
    expect(isCorlError(e, 'CORL_ERR_REWARD_OUTPUT')).to.equal(true);
    expect((e as Error).message).to.contain('expected 2 results from scoreMany');
    const bad = pipeline({
      score: async () => ({ rewards: [] }),
      scoreMany: async () => [{ rewards: [0, 0, 0] }, { rewards: [NaN, 0, 0] }],
    });
    const b = await rejection(bad.scoreMany([group(), group()], ['a', 'problem "p1" of agent 1'], 'the step'));
    expect(isCorlError(b, 'CORL_ERR_REWARD_OUTPUT')).to.equal(true);
    expect((b as Error).message).to.contain('problem "p1" of agent 1');
    const throws = pipeline({
      score: async () => ({ rewards: [] }),
      scoreMany: async () => {
        throw new Error('pipe closed');
      },
    });
    expect(
      isCorlError(await rejection(throws.scoreMany([group()], ['a'], 'the step')), 'CORL_ERR_REWARD_FAILED'),
    ).to.equal(true);
  });
});

describe('core/reward/pipeline in corl train and corl serve: the same failure, the same code', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-pipeline-');
    mutations.length = 0;
  });
  afterEach(() => tmp.cleanup());

  const cases: [string, string, RegExp][] = [
    ['test:bare-array', 'CORL_ERR_REWARD_OUTPUT', /got a bare array/],
    ['test:short-rewards', 'CORL_ERR_REWARD_OUTPUT', /expected 3 finite rewards from "test:short-rewards" for .*got 2/],
    [
      'test:throwing-reward',
      'CORL_ERR_REWARD_FAILED',
      /expected the reward of .* to succeed, got deliberate reward failure/,
    ],
    [
      'test:bad-keys',
      'CORL_ERR_REWARD_OUTPUT',
      /expected 3 answer keys \(a string or null each\) from "test:bad-keys"/,
    ],
  ];

  /** A two-agent run of one step on one problem, K = 3, with the given reward. */
  const trainConfig = (reward: string) =>
    coRlConfig({
      labelFree: false,
      plugins: [fixture('categorical-policy.js'), fixture('faulty-rewards.js')],
      topology: 'corl:self',
      reward,
      trainer: { steps: 1, batchSize: 1, groupSize: 3, evalEvery: 0, checkpointEvery: 0, sampling: { maxTokens: 4 } },
      eval: { atStart: false, samples: 1 },
    });
  const serveConfig = (reward: string) => ({
    ...ringServeConfig(),
    topology: 'corl:self',
    reward,
    plugins: [fixture('faulty-rewards.js')],
  });

  for (const [reward, code, message] of cases) {
    it(`${reward}: ${code} from the trainer, and HTTP 500 with ${code} from the service, which keeps running`, async () => {
      const e = await rejection(trainIn(tmp.dir, trainConfig(reward), false));
      expect(isCorlError(e, code as never), String(e)).to.equal(true);
      expect((e as CorlError).detail).to.match(message);
      const server = await startServer(serveConfig(reward), tmp.dir);
      try {
        const r = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g', ['1', '2', '2'])] });
        expect(r.status).to.equal(500);
        expect(r.body.error.code).to.equal(code);
        expect(r.body.error.message).to.match(message);
        expect((await get(server.url, '/health')).status).to.equal(200);
      } finally {
        await server.close();
      }
    });
  }

  it("a source that tries to change its context changes nothing: not the service's request, nor the trainer's step", async () => {
    const server = await startServer(serveConfig('test:mutating-reward'), tmp.dir);
    try {
      // The service scores a group in text order ("Ties" in docs/guide/serve.md): this group's first
      // completion is first in both orders, so "its own first key" is the same one.
      const group = boxed('g', ['1', '2', '1']);
      const r = await post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [group] });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.groups[0]).to.deep.include({ rewards: [1, 0, 1], keys: ['1', '2', '1'], label: '1' });
    } finally {
      await server.close();
    }
    await trainIn(
      tmp.dir,
      {
        ...trainConfig('test:mutating-reward'),
        trainer: {
          steps: 1,
          batchSize: 1,
          groupSize: 3,
          evalEvery: 0,
          checkpointEvery: 0,
          saveRollouts: true,
          sampling: { maxTokens: 4 },
        },
      },
      false,
    );
    const rollouts = readRollouts(tmp.dir);
    for (const row of rollouts) {
      const keys = row.completions.map((c) => c.key);
      expect(row.completions.map((c) => c.reward)).to.deep.equal(keys.map((k) => (k === keys[0] ? 1 : 0)));
    }
    expect(mutations.length).to.be.greaterThan(0);
    expect(mutations.filter((m) => m !== 'blocked')).to.deep.equal([]);
  });
});
