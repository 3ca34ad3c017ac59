import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../../core/config/load';
import type { RewardSource } from '../../../core/contracts/reward-source';
import { isCorlError, type CorlError } from '../../../core/errors';
import { createPlugin, rewardContext } from '../../../core/testing';
import {
  learnedVerifierReward,
  likelihoodFeatures,
  likelihoodScore,
  VERDICT_CUE,
  verdictProbability,
  verifierText,
} from '../../../plugins/rewards/learned-verifier';
import { coRlConfig, tempDir, writeConfig } from '../../fixtures/configs';
import {
  tinyVerifierLogprobs,
  tinyVerifierProbability,
  TINY_VERIFIER_EPS,
  writeTinyVerifier,
} from '../../fixtures/tiny-verifier';

async function failure(p: Promise<unknown>): Promise<CorlError> {
  try {
    await p;
  } catch (e) {
    return e as CorlError;
  }
  throw new Error('expected a rejection');
}

describe('plugins/rewards/learned-verifier (corl:learned-verifier)', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  let dir: string;
  before(async () => {
    tmp = tempDir('corl-verifier-');
    dir = path.join(tmp.dir, 'verifier');
    await writeTinyVerifier(dir);
  });
  after(() => tmp.cleanup());

  it('the verdict probability is σ(ℓ_Y − ℓ_N), stable at both ends', () => {
    expect(verdictProbability(2, -1)).to.be.closeTo(1 / (1 + Math.exp(-3)), 1e-15); // 0.9525741268…
    expect(verdictProbability(2, -1)).to.be.closeTo(0.9525741268224334, 1e-15);
    expect(verdictProbability(0.5, 0.5)).to.equal(0.5);
    expect(verdictProbability(-700, 0)).to.be.greaterThan(0).and.lessThan(1e-300);
    expect(verdictProbability(800, 0)).to.equal(1);
  });

  it('reads the problem, the solution and the cue, in that order', () => {
    expect(verifierText('12+35=', '12+35=47;\\boxed{47}')).to.equal('12+35=12+35=47;\\boxed{47} Verdict:');
    expect(VERDICT_CUE).to.equal(' Verdict:');
  });

  it("scores each completion by the checkpoint's P(Y), equal to the hand-computed value", async () => {
    // Hand: "1+1=" + "1+1=2;\boxed{2}" + " Verdict:" has 28 characters (T = 29) and n = 4 ones:
    // x0 = (4/29)/√(0.25 + 1e-5) = 0.275857, h0 = x0/√((x0² + 1)/4 + 1e-5) = 0.275857/0.518685 = 0.531839,
    // P = σ(h0) = 0.62991.
    const eps = TINY_VERIFIER_EPS;
    const x0 = 4 / 29 / Math.sqrt(0.25 + eps);
    const hand = 1 / (1 + Math.exp(-x0 / Math.sqrt((x0 * x0 + 1) / 4 + eps)));
    expect(hand).to.be.closeTo(0.62991, 1e-5);
    const texts = ['1+1=2;\\boxed{2}', '1+1=3;\\boxed{3}', '', '0=0'];
    const problem = { id: 'p', prompt: '1+1=' };
    expect(tinyVerifierProbability(verifierText(problem.prompt, texts[0]!))).to.be.closeTo(hand, 1e-15);
    const reward = (await createPlugin(learnedVerifierReward, { checkpoint: dir })) as RewardSource;
    try {
      const r = await reward.score(rewardContext({ keys: ['2', '3', null, '0'], texts, problem }));
      expect(r.rewards).to.have.length(4);
      r.rewards.forEach((v, k) =>
        expect(v, texts[k]).to.be.closeTo(tinyVerifierProbability(verifierText(problem.prompt, texts[k]!)), 1e-6),
      );
      expect(r.rewards[0]).to.be.closeTo(hand, 1e-6);
      // The same scores one completion at a time: padding a batch changes nothing.
      const alone = await reward.score(rewardContext({ keys: ['3'], texts: [texts[1]!], problem }));
      expect(alone.rewards[0]).to.be.closeTo(r.rewards[1]!, 1e-6);
      const mean = r.rewards.reduce((a, b) => a + b, 0) / 4;
      expect(r.metrics!['verifier/score_mean']).to.be.closeTo(mean, 1e-12);
      // Never the reference: the context carries none, and the score does not depend on it.
      const withRef = await reward.score(rewardContext({ keys: ['2'], texts: [texts[0]!], problem, reference: '3' }));
      expect(withRef.rewards[0]).to.be.closeTo(r.rewards[0]!, 1e-12);
    } finally {
      await reward.close?.();
    }
  });

  it("cuts a solution longer than the verifier's context from the front, keeping the problem and the cue", async () => {
    const reward = (await createPlugin(learnedVerifierReward, { checkpoint: dir })) as RewardSource;
    try {
      const problem = { id: 'p', prompt: '1+1=' };
      const long = '1'.repeat(100) + '0=0'; // 103 characters: with the problem and the cue, past 64 tokens
      const r = await reward.score(rewardContext({ keys: ['0'], texts: [long], problem }));
      // Room for the solution: 64 − (1 + 4) − 9 = 50 tokens, its last 50: 47 ones and "0=0".
      const kept = '1+1=' + '1'.repeat(47) + '0=0' + VERDICT_CUE;
      expect([...kept].length + 1).to.equal(64);
      expect(r.rewards[0]).to.be.closeTo(tinyVerifierProbability(kept), 1e-6);
    } finally {
      await reward.close?.();
    }
  });

  it('a likelihood head: σ(w·[min, mean] + b) of the token log-probabilities, equal to hand-computed values', async () => {
    const head = path.join(tmp.dir, 'likelihood');
    fs.mkdirSync(head);
    const spec = { format: 'corl-learned-verifier', version: 1, head: 'likelihood', model: '../verifier' };
    fs.writeFileSync(path.join(head, 'verifier.json'), JSON.stringify({ ...spec, weights: [0.5, 2], bias: 0.25 }));
    // Hand: problem "1", empty solution: the one target is the closing end token, read at "1" (t = 1):
    // x0 = 1 + a/2 = 1.99998, x1 = 0, h0 = x0/√(x0²/4 + 1e-5) = 1.99999; V = 33 (31 characters, end, unknown);
    // log p(end) = −log(e^1.99999 + 32) = −log(39.38898) = −3.67349.
    expect(tinyVerifierLogprobs('1', '')).to.have.length(1);
    expect(tinyVerifierLogprobs('1', '')[0]).to.be.closeTo(-3.67349, 1e-5);
    expect(likelihoodFeatures([-3, -1, -2])).to.deep.equal([-3, -2]);
    expect(likelihoodScore({ weights: [0.5, 2], bias: 0.25 }, [-3, -2])).to.be.closeTo(1 / (1 + Math.exp(5.25)), 1e-15);
    const reward = (await createPlugin(learnedVerifierReward, { checkpoint: head })) as RewardSource;
    try {
      const problem = { id: 'p', prompt: '1+1=' };
      const texts = ['1+1=2;\\boxed{2}', '11', '', 'Y'];
      const r = await reward.score(rewardContext({ keys: ['2', '11', null, null], texts, problem }));
      r.rewards.forEach((v, k) => {
        const lp = tinyVerifierLogprobs(problem.prompt, texts[k]!);
        const f = [Math.min(...lp), lp.reduce((x, y) => x + y, 0) / lp.length] as const;
        expect(v, texts[k]).to.be.closeTo(1 / (1 + Math.exp(-(0.5 * f[0] + 2 * f[1] + 0.25))), 1e-6);
      });
      const one = await reward.score(rewardContext({ keys: [null], texts: [''], problem: { id: 'q', prompt: '1' } }));
      expect(one.rewards[0]).to.be.closeTo(1 / (1 + Math.exp(-(2.5 * -3.67349 + 0.25))), 1e-6);
    } finally {
      await reward.close?.();
    }
    // A malformed head file is refused.
    fs.writeFileSync(path.join(head, 'verifier.json'), JSON.stringify({ ...spec, weights: [1], bias: 0 }));
    const e = await failure(createPlugin(learnedVerifierReward, { checkpoint: head }));
    expect(e.code).to.equal('CORL_ERR_REWARD_VERIFIER');
    expect(e.message).to.contain('"weights": [2 numbers]');
    fs.writeFileSync(
      path.join(head, 'verifier.json'),
      JSON.stringify({ ...spec, model: '../nope', weights: [1, 1], bias: 0 }),
    );
    const missing = await failure(createPlugin(learnedVerifierReward, { checkpoint: head }));
    expect(missing.code).to.equal('CORL_ERR_REWARD_VERIFIER');
    expect(missing.message).to.contain(path.join(tmp.dir, 'nope'));
  });

  it('under corl serve: forward passes queue lane by lane, and work nobody waits for leaves the queue (issue 30)', async () => {
    const reward = (await createPlugin(learnedVerifierReward, { checkpoint: dir })) as RewardSource;
    try {
      const problem = { id: 'p', prompt: '1+1=' };
      const ctx = (t: string) => rewardContext({ keys: [null], texts: [t], problem });
      const want = (t: string) => tinyVerifierProbability(verifierText(problem.prompt, t));
      // a holds the one place; its next two wait; b (nothing running) takes the extra place.
      const a = ['1+1=2', '1+1=3', '0=0'].map((t) => reward.score(ctx(t), { lane: 'a' }));
      const gone = new AbortController();
      const cancelled = reward.score(ctx('11'), { lane: 'a', signal: gone.signal });
      const b = reward.score(ctx('2'), { lane: 'b' });
      gone.abort(new Error('client went away'));
      const e = await failure(cancelled);
      expect(e.message).to.equal('client went away');
      const done = await Promise.all([...a, b]);
      done.forEach((r, k) => expect(r.rewards[0]).to.be.closeTo(want(['1+1=2', '1+1=3', '0=0', '2'][k]!), 1e-6));
      // A signal already aborted runs nothing.
      const late = await failure(reward.score(ctx('1'), { lane: 'c', signal: gone.signal }));
      expect(late.message).to.equal('client went away');
    } finally {
      await reward.close?.();
    }
  });

  it('options: checkpoint is required, unknown options are refused', async () => {
    for (const options of [
      {},
      { checkpoint: '' },
      { checkpoint: dir, temperature: 1 },
      { checkpoint: dir, threads: 0 },
    ]) {
      const e = await failure(createPlugin(learnedVerifierReward, options));
      expect(isCorlError(e, 'CORL_ERR_PLUGIN_OPTIONS'), JSON.stringify(options)).to.equal(true);
    }
  });

  it('a missing checkpoint is refused with its options, a corrupt one is CORL_ERR_REWARD_VERIFIER naming reward.options.checkpoint', async () => {
    const missing = await failure(createPlugin(learnedVerifierReward, { checkpoint: path.join(tmp.dir, 'nope') }));
    expect(missing.code).to.equal('CORL_ERR_PLUGIN_OPTIONS');
    expect(missing.message).to.contain(`expected a folder at ${path.join(tmp.dir, 'nope')}, got nothing`);
    const empty = path.join(tmp.dir, 'empty');
    fs.mkdirSync(empty, { recursive: true });
    const none = await failure(createPlugin(learnedVerifierReward, { checkpoint: empty }));
    expect(none.code).to.equal('CORL_ERR_REWARD_VERIFIER');
    expect(none.where).to.equal('reward.options.checkpoint');
    expect(none.message).to.contain(empty).and.contain('corl.json');
    const bad = path.join(tmp.dir, 'corrupt');
    await writeTinyVerifier(bad);
    const model = path.join(bad, 'model.onnx');
    const bytes = fs.readFileSync(model);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    fs.writeFileSync(model, bytes);
    const corrupt = await failure(createPlugin(learnedVerifierReward, { checkpoint: bad }));
    expect(corrupt.code).to.equal('CORL_ERR_REWARD_VERIFIER');
    expect(corrupt.message).to.contain('SHA-256');
  });

  it('a tokenizer without the verdict letters is CORL_ERR_REWARD_VERIFIER', async () => {
    const noVerdicts = path.join(tmp.dir, 'no-verdicts');
    await writeTinyVerifier(noVerdicts, '0123456789+-=;:');
    const e = await failure(createPlugin(learnedVerifierReward, { checkpoint: noVerdicts }));
    expect(e.code).to.equal('CORL_ERR_REWARD_VERIFIER');
    expect(e.message).to.contain('"Y"').and.contain('"N"');
  });

  it('reads no labels, but was trained on them: a labelFree config refuses it; otherwise the run is supervised', async () => {
    expect(learnedVerifierReward.manifest).to.include({ readsGroundTruth: false, trainedOnLabels: true });
    const reward = { use: 'corl:learned-verifier', options: { checkpoint: dir } };
    const refused = await failure(loadConfig(writeConfig(tmp.dir, 'lf.json', coRlConfig({ reward }))));
    expect(refused.code).to.equal('CORL_ERR_CONFIG_LABEL_FREE');
    expect(refused.message).to.contain('"corl:learned-verifier"').and.contain('trained on labelled data');
    const weighted = {
      use: 'corl:weighted',
      options: {
        sources: [
          { source: 'corl:vote', weight: 1 },
          { source: reward, weight: 0.5 },
        ],
      },
    };
    const nested = await failure(loadConfig(writeConfig(tmp.dir, 'lf2.json', coRlConfig({ reward: weighted }))));
    expect(nested.code).to.equal('CORL_ERR_CONFIG_LABEL_FREE');
    const ok = await loadConfig(writeConfig(tmp.dir, 'ok.json', coRlConfig({ reward, labelFree: false })));
    expect([ok.readsGroundTruth, ok.trainedOnLabels]).to.deep.equal([false, true]);
    const vote = await loadConfig(writeConfig(tmp.dir, 'vote.json', coRlConfig()));
    expect([vote.readsGroundTruth, vote.trainedOnLabels]).to.deep.equal([false, false]);
  });
});
