// A scripted two-agent debate through the real trainer: every turn is known in advance, so the
// rewards, advantages, samples and per-round metrics are checked against numbers worked by hand
// (the same debate as test/plugins/interactions/debate.test.ts, "2 agents, 2 rounds, 2 debates").
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfigValue } from '../../../core/config/load';
import { RunDirectory } from '../../../core/trainer/run-dir';
import { train } from '../../../core/trainer/trainer';
import { chatDiscussionPrompt } from '../../../core/util/discussion-text';
import { fixture, tempDir } from '../../fixtures/configs';

const P = 'What is 1 + 1?';
const H = 'What is 1 + 3?';
const says = (prompt: string, agent: number, answer: string): string =>
  chatDiscussionPrompt(prompt, [{ agent, answer }]);
/** GRPO's advantage of two rewards x > y (unbiased std |x − y|/√2, ε = 1e-6). */
const pair = (d: number): number => d / 2 / (d / Math.SQRT2 + 1e-6);

interface Rollout {
  step: number;
  agent: number;
  round: number;
  id: string;
  completions: { prompt: string; key: string; score: number; reward: number; advantage: number }[];
}

describe('trainer: a scripted debate, worked by hand', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-debate-');
  });
  afterEach(() => tmp.cleanup());

  it('runs 2 rounds, credits every turn, updates on every turn and reports each round', async () => {
    // Debate 0: A right throughout; B wrong, then right after reading A. Debate 1: A right, then
    // persuaded by B's wrong answer; B wrong throughout. Answers 2 = right, 3 = wrong.
    const scriptA = { [P]: ['2', '2'], [says(P, 1, '3')]: ['2', '3', '3'], [says(P, 1, '2')]: ['2'] };
    const scriptB = { [P]: ['3', '3'], [says(P, 0, '2')]: ['2', '3', '2'], [says(P, 0, '3')]: ['3'] };
    // Held-out: A right, swayed by B, then back; B the mirror image.
    Object.assign(scriptA, { [H]: ['4'], [says(H, 1, '5')]: ['5'], [says(H, 1, '4')]: ['4'] });
    Object.assign(scriptB, { [H]: ['5'], [says(H, 0, '4')]: ['4'], [says(H, 0, '5')]: ['5'] });
    const log = (i: number): string => path.join(tmp.dir, `updates-${i}.jsonl`);
    const config = {
      name: 'scripted-debate',
      seed: 3,
      plugins: [fixture('scripted-debater.js')],
      task: {
        use: 'corl:inline',
        options: { train: [{ id: 't1', prompt: P, answer: '2' }], heldOut: [{ id: 'h1', prompt: H, answer: '4' }] },
      },
      agents: [
        { name: 'a', policy: { use: 'test:scripted', options: { script: scriptA, log: log(0) } } },
        { name: 'b', policy: { use: 'test:scripted', options: { script: scriptB, log: log(1) } } },
      ],
      topology: 'corl:complete',
      reward: 'corl:gt-verifier',
      interaction: { use: 'corl:debate', options: { rounds: 2, share: 'answer', alpha: [0.5, 1, 0.25, 2] } },
      trainer: { steps: 1, batchSize: 1, groupSize: 2, evalEvery: 0, checkpointEvery: 0, saveRollouts: true },
      eval: { atStart: false, samples: 1 },
    };
    const loaded = await loadConfigValue(config, { baseDir: tmp.dir });
    const run = await RunDirectory.create(path.join(tmp.dir, 'run'), loaded.config, loaded.source, {
      baseDir: tmp.dir,
      supervised: true,
    });
    await train(loaded, { run });

    const rollouts: Rollout[] = fs
      .readFileSync(path.join(tmp.dir, 'run', 'rollouts.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(rollouts.map((r) => [r.agent, r.round])).to.deep.equal([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    const at = (agent: number, round: number): Rollout => rollouts.find((r) => r.agent === agent && r.round === round)!;
    // [debate 0, debate 1] of each (agent, round): the answers, the verifier's scores, the credited
    // rewards (debate.test.ts works them out) and GRPO's advantages over the two debates.
    const expected: [number, number, string[], number[], number[], number[]][] = [
      [0, 0, ['2', '2'], [1, 1], [1 - 2, 1 / 1.39], [-pair(1 + 1 / 1.39), pair(1 + 1 / 1.39)]],
      [0, 1, ['2', '3'], [1, 0], [1, -0.5], [pair(1.5), -pair(1.5)]],
      [0, 2, ['2', '3'], [1, 0], [1, 0], [pair(1), -pair(1)]],
      [1, 0, ['3', '3'], [0, 0], [0.39 / 1.39, 2], [-pair(2 - 0.39 / 1.39), pair(2 - 0.39 / 1.39)]],
      [1, 1, ['2', '3'], [1, 0], [1.5, 0], [pair(1.5), -pair(1.5)]],
      [1, 2, ['2', '3'], [1, 0], [1, 0], [pair(1), -pair(1)]],
    ];
    for (const [agent, round, keys, scores, rewards, advantages] of expected) {
      const r = at(agent, round);
      const what = `agent ${agent} round ${round}`;
      expect(
        r.completions.map((c) => c.key),
        what,
      ).to.deep.equal(keys);
      expect(
        r.completions.map((c) => c.score),
        what,
      ).to.deep.equal(scores);
      r.completions.forEach((c, k) => {
        expect(c.reward, `${what} debate ${k} reward`).to.be.closeTo(rewards[k]!, 1e-12);
        expect(c.advantage, `${what} debate ${k} advantage`).to.be.closeTo(advantages[k]!, 1e-12);
      });
    }
    // The prompts of round 1: debate k quotes the neighbour's debate-k answer of round 0.
    expect(at(0, 1).completions.map((c) => c.prompt)).to.deep.equal([says(P, 1, '3'), says(P, 1, '3')]);
    expect(at(1, 2).completions.map((c) => c.prompt)).to.deep.equal([says(P, 0, '2'), says(P, 0, '3')]);

    // Every turn is a sample of its agent's update, with its own prompt and advantage.
    const updates = fs
      .readFileSync(log(0), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(updates.map((u) => [u.prompt, u.answer])).to.deep.equal([
      [P, '2'],
      [P, '2'],
      [says(P, 1, '3'), '2'],
      [says(P, 1, '3'), '3'],
      [says(P, 1, '2'), '2'],
      [says(P, 1, '3'), '3'],
    ]);
    expect(updates[0].advantage).to.be.closeTo(-pair(1 + 1 / 1.39), 1e-12);

    // Per-round metrics: training accuracy and verifier score per round; evaluation pass@1 per round,
    // the final round's as eval/accuracy.
    const metrics = run.readMetrics();
    const trainA = metrics.find((m) => m.phase === 'train' && m.agent === 0)!.metrics;
    expect([0, 1, 2].map((r) => trainA[`train/round${r}/accuracy`])).to.deep.equal([1, 0.5, 0.5]);
    expect(trainA['reward/mean']).to.be.closeTo((-1 + 1 / 1.39 + 1 - 0.5 + 1 + 0) / 6, 1e-12);
    const evalOf = (agent: number) => metrics.find((m) => m.phase === 'eval' && m.agent === agent)!.metrics;
    expect([0, 1, 2].map((r) => evalOf(0)[`eval/round${r}/pass@1`])).to.deep.equal([1, 0, 1]);
    expect([0, 1, 2].map((r) => evalOf(1)[`eval/round${r}/pass@1`])).to.deep.equal([0, 1, 0]);
    expect([evalOf(0)['eval/accuracy'], evalOf(1)['eval/accuracy']]).to.deep.equal([1, 0]);
  });
});
