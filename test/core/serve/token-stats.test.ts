// Served rewards against trained ones on the same inputs: a length-penalised reward reads lengths
// in tokens when the client sends them (and characters, flagged, when it does not), and RENT and
// Intuitor read the per-token statistics a client posts exactly as the trainer hands them over.
// "Trained" is the reward pipeline `corl train` scores with (core/reward), fed a sampled Completion
// as the trainer feeds it (length = its token count), with the plugins built from the same config.
import { expect } from 'chai';
import type { Completion } from '../../../core/contracts/completion';
import { createRunPlugins } from '../../../core/config/run-plugins';
import { AnswerKeys } from '../../../core/reward/answer-keys';
import type { CompletionInput } from '../../../core/reward/context';
import { RewardPipeline } from '../../../core/reward/pipeline';
import type { RewardServer } from '../../../core/serve/server';
import { loadServeConfigValue } from '../../../core/serve/setup';
import { Rng } from '../../../core/util/rng';
import { fixture, tempDir } from '../../fixtures/configs';
import { get, post, startServer } from '../../fixtures/serve';

const WORDS = ['The', ' sum', ' is', ' found', ' by', ' adding', ' both', ' parts', ',', ' then', ' we', ' check', '.'];

/** A sampled completion: `n` tokens of about four characters, boxed answer `a`, per-token statistics. */
function sampled(rng: Rng, n: number, a: string): Completion {
  const ids = Array.from({ length: n }, () => rng.int(WORDS.length));
  const text = ids.map((i) => WORDS[i]).join('') + ` so \\boxed{${a}}`;
  return {
    text,
    tokenIds: [...ids, 0, 0, 0],
    logprobs: [...ids, 0, 0, 0].map(() => -rng.next()),
    finishReason: 'stop',
    entropies: [...ids, 0, 0, 0].map(() => 3 * rng.next()),
    meanLogprobs: [...ids, 0, 0, 0].map(() => -11 - 2 * rng.next()),
  };
}

/** What the trainer hands the reward pipeline for a sampled completion (completionInput, core/trainer/trainer.ts). */
function trainerInput(c: Completion): CompletionInput {
  return {
    text: c.text,
    length: c.tokenIds.length,
    finishReason: c.finishReason,
    ...(c.entropies ? { entropies: c.entropies } : {}),
    ...(c.meanLogprobs ? { meanLogprobs: c.meanLogprobs } : {}),
  };
}

function config(reward: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'token-stats',
    agents: [{ name: 'agent-0' }],
    topology: 'corl:self',
    reward,
    serve: { port: 0 },
    ...extra,
  };
}

/** The rewards the trainer computes for one group of `completions` under `cfg`: its reward pipeline, as `corl train` builds it. */
async function trained(cfg: Record<string, unknown>, completions: readonly Completion[]): Promise<number[]> {
  const served = await loadServeConfigValue(cfg, { name: 'trained' });
  const plugins = await createRunPlugins(served.loaded, 'scoring');
  try {
    const pipeline = new RewardPipeline({
      reward: plugins.reward,
      use: served.config.reward.use,
      keys: new AnswerKeys(plugins.extractor, plugins.equivalence),
      equivalence: plugins.equivalence,
    });
    const problem = { id: 'p', prompt: 'problem p' };
    const { answers, keys } = await pipeline.answers(
      problem,
      completions.map((c) => c.text),
      'the trained group',
    );
    const scored = await pipeline.score(
      {
        problem,
        prompt: problem.prompt,
        agent: 0,
        agents: 1,
        step: 0,
        completions: completions.map(trainerInput),
        answers,
        keys,
        supervisors: [{ agent: 0, keys }],
      },
      'the trained group',
    );
    return [...scored.rewards];
  } finally {
    await plugins.close();
  }
}

describe('serve: served rewards equal trained rewards on token counts and per-token statistics', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-stats-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  const rng = new Rng(2026);
  const group = [sampled(rng, 41, '12'), sampled(rng, 9, '12'), sampled(rng, 77, '7'), sampled(rng, 23, '12')];
  const posted = (c: Completion, stats: boolean): Record<string, unknown> => ({
    text: c.text,
    length: c.tokenIds.length,
    ...(stats ? { entropies: c.entropies, meanLogprobs: c.meanLogprobs } : {}),
  });

  async function served(
    cfg: Record<string, unknown>,
    stats: boolean,
  ): Promise<{ samples: number[]; groups: number[] }> {
    server = await startServer(cfg, tmp.dir);
    const one = await Promise.all(
      group.map((c, k) =>
        post(server!.url, '/v1/samples', {
          agent: 'agent-0',
          group: 'p',
          size: group.length,
          requestId: `s${k}`,
          prompt: 'problem p',
          completion: posted(c, stats),
        }),
      ),
    );
    const whole = await post(server.url, '/v1/groups', {
      agent: 'agent-0',
      step: 0,
      groups: [{ id: 'p', prompt: 'problem p', completions: group.map((c) => posted(c, stats)) }],
    });
    for (const r of [...one, whole]) expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const result = {
      samples: one.map((r) => r.body.reward as number),
      groups: whole.body.groups[0].rewards as number[],
    };
    await server.close();
    server = undefined;
    return result;
  }

  it('RENT: served -mean token entropy equals the trained reward and the hand-computed one', async () => {
    const cfg = config({ use: 'corl:intrinsic', options: { method: 'rent' } });
    const lab = await trained(cfg, group);
    const hand = group.map((c) => -c.entropies!.reduce((a, b) => a + b, 0) / c.entropies!.length);
    lab.forEach((r, k) => expect(r).to.be.closeTo(hand[k]!, 1e-12));
    const { samples, groups } = await served(cfg, true);
    expect(samples).to.deep.equal(lab);
    expect(groups).to.deep.equal(lab);
  });

  it('Intuitor: served self-certainty (with log V) equals the trained reward and the hand-computed one', async () => {
    const V = 151936;
    const cfg = config({ use: 'corl:intrinsic', options: { method: 'intuitor', vocabSize: V } });
    const lab = await trained(cfg, group);
    const hand = group.map((c) => -Math.log(V) - c.meanLogprobs!.reduce((a, b) => a + b, 0) / c.meanLogprobs!.length);
    lab.forEach((r, k) => expect(r).to.be.closeTo(hand[k]!, 1e-12));
    const { samples, groups } = await served(cfg, true);
    expect(samples).to.deep.equal(lab);
    expect(groups).to.deep.equal(lab);
  });

  it('a length-penalised reward: served with token counts equals trained; a bare string is charged per character and flagged', async () => {
    const cfg = config(
      { use: 'test:length-vote', options: { penalty: 0.001 } },
      { plugins: [fixture('length-vote.js')] },
    );
    const lab = await trained(cfg, group);
    const hand = group.map((c, k) => (k === 2 ? 0 : 1) - 0.001 * c.tokenIds.length);
    lab.forEach((r, k) => expect(r).to.be.closeTo(hand[k]!, 1e-12));
    const { samples, groups } = await served(cfg, false);
    expect(samples).to.deep.equal(lab);
    expect(groups).to.deep.equal(lab);
    // The same completions as bare strings: length = characters, about four per token here.
    server = await startServer(cfg, tmp.dir);
    const bare = await post(server.url, '/v1/groups', {
      agent: 'agent-0',
      step: 1,
      groups: [{ id: 'p', prompt: 'problem p', completions: group.map((c) => c.text) }],
    });
    expect(bare.body.groups[0].rewards).to.deep.equal(group.map((c, k) => (k === 2 ? 0 : 1) - 0.001 * c.text.length));
    const ratio = group.reduce((s, c) => s + c.text.length, 0) / group.reduce((s, c) => s + c.tokenIds.length, 0);
    expect(ratio).to.be.greaterThan(3);
    expect(server.metrics.untokenized.get({ route: '/v1/groups' })).to.equal(group.length);
  });

  it('a reward that reads per-token statistics refuses completions without them, and POST /get_reward', async () => {
    server = await startServer(config({ use: 'corl:intrinsic', options: { method: 'rent' } }), tmp.dir);
    const r = await post(server.url, '/v1/samples', {
      agent: 'agent-0',
      group: 'p',
      size: 2,
      completion: { text: 'x', length: 3 },
    });
    expect([r.status, r.body.error.code, r.body.error.where]).to.deep.equal([
      400,
      'CORL_ERR_SERVE_BAD_REQUEST',
      'completion',
    ]);
    const g = await post(server.url, '/v1/groups', {
      agent: 'agent-0',
      step: 0,
      groups: [{ id: 'p', completions: ['x'] }],
    });
    expect([g.status, g.body.error.where]).to.deep.equal([400, 'groups[0].completions[0]']);
    const o = await post(server.url, '/get_reward', { query: ['x'] });
    expect([o.status, o.body.error.code]).to.deep.equal([400, 'CORL_ERR_SERVE_BAD_REQUEST']);
  });

  it('Intuitor sent entropies only, RENT sent meanLogprobs only: a coded 400 naming the missing field, never a 500', async () => {
    const only = (c: Completion, field: 'entropies' | 'meanLogprobs') => ({
      text: c.text,
      length: c.tokenIds.length,
      [field]: c[field],
    });
    for (const [method, sent, missing] of [
      ['intuitor', 'entropies', 'meanLogprobs'],
      ['rent', 'meanLogprobs', 'entropies'],
    ] as const) {
      server = await startServer(config({ use: 'corl:intrinsic', options: { method } }), tmp.dir);
      const g = await post(server.url, '/v1/groups', {
        agent: 'agent-0',
        step: 0,
        groups: [{ id: 'p', prompt: 'problem p', completions: group.map((c) => only(c, sent)) }],
      });
      expect([g.status, g.body.error.code, g.body.error.where], method).to.deep.equal([
        400,
        'CORL_ERR_SERVE_BAD_REQUEST',
        `completions[].${missing}`,
      ]);
      expect(g.body.error.message).to.include(`carry ${missing}`).and.include('4 of 4 without');
      expect(g.body.error).to.not.have.property('stack');
      // Per sample: every member of the group gets the same answer.
      const s = await Promise.all(
        group.map((c, k) =>
          post(server!.url, '/v1/samples', {
            agent: 'agent-0',
            group: 'q',
            size: group.length,
            requestId: `q${k}`,
            prompt: 'problem q',
            completion: only(c, sent),
          }),
        ),
      );
      expect(s.map((r) => [r.status, r.body.error?.where])).to.deep.equal(
        group.map(() => [400, `completions[].${missing}`]),
      );
      expect((await get(server.url, '/health')).status).to.equal(200);
      await server.close();
      server = undefined;
      tmp.cleanup();
      tmp = tempDir('corl-stats-');
    }
  });
});
