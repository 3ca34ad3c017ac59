// A scripted CoMAS step through the real trainer, label-free: every proposal, evaluation and judge
// sample is known in advance, so the judged rewards, advantages, judge budget and per-round metrics
// are checked against numbers worked by hand (docs/algorithms/comas.md).
import { expect } from 'chai';
import { chatEvaluationPrompt } from '../../../core/discussion/prompts';
import { tempDir } from '../../fixtures/configs';
import {
  expectTurns,
  H,
  P,
  pair,
  readRollouts,
  scriptedConfig,
  trainIn,
  type TurnRollout,
} from '../../support/scripted-run';

const checks = (prompt: string, agent: number, answer: string): string =>
  chatEvaluationPrompt(prompt, { agent, answer });

describe('trainer: a scripted CoMAS step, worked by hand', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-comas-');
  });
  afterEach(() => tmp.cleanup());

  it('proposes, evaluates, judges with the cohort, credits s and 1 − s, and reports the judge budget', async () => {
    // Proposals (debates 0, 1): A 2, 3; B 3, 2 (2 is right). A evaluates B's, B evaluates A's.
    // Then each agent samples P twice for the judge: A 2, 2; B 2, 3 → pooled plurality 2.
    const scriptA = { [P]: ['2', '3', '2', '2'], [checks(P, 1, '3')]: ['2'], [checks(P, 1, '2')]: ['2'] };
    const scriptB = { [P]: ['3', '2', '2', '3'], [checks(P, 0, '2')]: ['3'], [checks(P, 0, '3')]: ['3'] };
    // Held-out: A right, B wrong alone; each then checks the other's answer and answers 4.
    Object.assign(scriptA, { [H]: ['4'], [checks(H, 1, '5')]: ['4'] });
    Object.assign(scriptB, { [H]: ['5'], [checks(H, 0, '4')]: ['4'] });
    const agents = [
      { name: 'a', script: scriptA },
      { name: 'b', script: scriptB },
    ];
    const config = scriptedConfig(agents, {
      name: 'scripted-comas',
      seed: 3,
      labelFree: true,
      topology: 'corl:ring',
      reward: 'corl:vote',
      interaction: {
        use: 'corl:comas',
        options: { cycles: 1, share: 'answer', judge: { use: 'corl:policy-judge', options: { samples: 2 } } },
      },
      trainer: { steps: 1, batchSize: 1, groupSize: 2, evalEvery: 0, checkpointEvery: 0, saveRollouts: true },
    });
    const { loaded, run, result } = await trainIn(tmp.dir, config, false);
    expect(loaded.readsGroundTruth).to.equal(false);
    expect(result.readsGroundTruth).to.equal(false);

    const rollouts = readRollouts(tmp.dir);
    const at = (agent: number, round: number): TurnRollout =>
      rollouts.find((r) => r.agent === agent && r.round === round)!;
    // Verdicts (judge answer 2): B's 3, contested by A's 2 → 1 (s 0); B's 2 → 3 (s 1); A's 2 → 3
    // (s 1, B's contest of it earns nothing); A's 3, let stand by B → 2 (s 0.5).
    expectTurns(rollouts, [
      [0, 0, ['2', '3'], [1, 0.5], [pair(0.5), -pair(0.5)]],
      [0, 1, ['2', '2'], [1 - 0, 1 - 1], [pair(1), -pair(1)]],
      [1, 0, ['3', '2'], [0, 1], [-pair(1), pair(1)]],
      [1, 1, ['3', '3'], [1 - 1, 1 - 0.5], [-pair(0.5), pair(0.5)]],
    ]);
    // The evaluation turns' prompts: the task's evaluation format (here the chat default) with the one proposal.
    expect(at(0, 1).completions.map((c) => c.prompt)).to.deep.equal([checks(P, 1, '3'), checks(P, 1, '2')]);
    expect(at(1, 1).completions.map((c) => c.prompt)).to.deep.equal([checks(P, 0, '2'), checks(P, 0, '3')]);

    const metrics = run.readMetrics();
    const trainOf = (agent: number) => metrics.find((m) => m.phase === 'train' && m.agent === agent)!.metrics;
    // One sampling call per agent (2 samples each), 4 verdicts of mean quality (0 + 1 + 1 + 0.5)/4.
    for (const a of [0, 1])
      expect(
        ['judge/calls', 'judge/samples', 'judge/verdicts', 'judge/quality_mean'].map((k) => trainOf(a)[k]),
      ).to.deep.equal([2, 4, 4, 0.625]);
    // A: proposals 1, 0.5 and evaluations 1, 0; B: 0, 1 and 0, 0.5.
    expect(trainOf(0)['reward/mean']).to.equal(0.625);
    expect(trainOf(1)['reward/mean']).to.equal(0.375);
    // Evaluation: the proposals' round is the final one scored; the evaluation round is reported per round.
    const evalOf = (agent: number) => metrics.find((m) => m.phase === 'eval' && m.agent === agent)!.metrics;
    expect([evalOf(0)['eval/accuracy'], evalOf(1)['eval/accuracy']]).to.deep.equal([1, 0]);
    expect([0, 1].map((r) => evalOf(1)[`eval/round${r}/pass@1`])).to.deep.equal([0, 1]);
  });
});
