// A scripted two-agent debate through the real trainer: every turn is known in advance, so the
// rewards, advantages, samples and per-round metrics are checked against numbers worked by hand
// (the same debate as test/plugins/interactions/debate.test.ts, "2 agents, 2 rounds, 2 debates").
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chatDiscussionPrompt } from '../../../core/discussion/prompts';
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

const says = (prompt: string, agent: number, answer: string): string =>
  chatDiscussionPrompt(prompt, [{ agent, answer }]);

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
    const agents = [
      { name: 'a', script: scriptA, log: log(0) },
      { name: 'b', script: scriptB, log: log(1) },
    ];
    const config = scriptedConfig(agents, {
      name: 'scripted-debate',
      seed: 3,
      topology: 'corl:complete',
      reward: 'corl:gt-verifier',
      interaction: { use: 'corl:debate', options: { rounds: 2, share: 'answer', alpha: [0.5, 1, 0.25, 2] } },
      trainer: { steps: 1, batchSize: 1, groupSize: 2, evalEvery: 0, checkpointEvery: 0, saveRollouts: true },
    });
    const { run } = await trainIn(tmp.dir, config, true);

    const rollouts = readRollouts(tmp.dir);
    expect(rollouts.map((r) => [r.agent, r.round])).to.deep.equal([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    const at = (agent: number, round: number): TurnRollout =>
      rollouts.find((r) => r.agent === agent && r.round === round)!;
    // [debate 0, debate 1] of each (agent, round): the answers, the verifier's scores, the credited
    // rewards and GRPO's advantages over the two debates. By hand (γ = 0.3; the discounted-sum
    // denominators are 1.39 at round 0, 1.3 at round 1, 1 at round 2; α = [0.5, 1, 0.25, 2]):
    //  debate 0, scores A [1, 1, 1], B [0, 1, 1]; the mean of both agents is 0.5, 1, 1 per round.
    //   A t0: (1 + 0.3·1 + 0.09·1)/1.39 = 1; its reader B went wrong → right while A was right: −α3 → −1.
    //   B t0: (0 + 0.3 + 0.09)/1.39 = 0.39/1.39; A stayed right: no influence term.
    //   B t1: (1 + 0.3)/1.3 = 1; wrong → right, the neighbour it read (A, t0) right: +α0 → 1.5. A t1 = 1.
    //   t2: the scores, 1 and 1.
    //  debate 1, scores A [1, 0, 0], B [0, 0, 0]; means 0.5, 0, 0.
    //   A t0: (1 + 0 + 0)/1.39 = 1/1.39; B stayed wrong: no influence term.
    //   B t0: 0 + α3 = 2 (A went right → wrong while B was wrong: the released code's +α3).
    //   A t1: 0; right → wrong, the neighbour it read (B, t0) wrong: persuaded wrongly, −α0 → −0.5.
    //   B t1, t2 and A t2: 0.
    //  Advantages: each (agent, round) pair [x, y] → ±(|x − y|/2)/(|x − y|/√2 + 1e-6), the larger positive.
    expectTurns(rollouts, [
      [0, 0, ['2', '2'], [1, 1], [1 - 2, 1 / 1.39], [-pair(1 + 1 / 1.39), pair(1 + 1 / 1.39)]],
      [0, 1, ['2', '3'], [1, 0], [1, -0.5], [pair(1.5), -pair(1.5)]],
      [0, 2, ['2', '3'], [1, 0], [1, 0], [pair(1), -pair(1)]],
      [1, 0, ['3', '3'], [0, 0], [0.39 / 1.39, 2], [-pair(2 - 0.39 / 1.39), pair(2 - 0.39 / 1.39)]],
      [1, 1, ['2', '3'], [1, 0], [1.5, 0], [pair(1.5), -pair(1.5)]],
      [1, 2, ['2', '3'], [1, 0], [1, 0], [pair(1), -pair(1)]],
    ]);
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
    // Neighbour use: in round 1 A read B's wrong round-0 answer and followed it (right before, wrong
    // after); in round 2 it read B's right round-1 answer and was right again.
    expect(evalOf(0)).to.include({
      'eval/round1/peers_wrong/share': 1,
      'eval/round1/peers_wrong/pass@1': 0,
      'eval/round1/peers_wrong/before': 1,
      'eval/round1/peers_right/share': 0,
      'eval/round2/peers_right/share': 1,
      'eval/round2/peers_right/pass@1': 1,
      'eval/round2/peers_right/before': 0,
    });
    expect(evalOf(0)).not.to.have.property('eval/round1/peers_right/pass@1');
  });

  it('3 agents, complete topology, 2 rounds: every incentive fires once, rewards and advantages by hand', async () => {
    // Answers: 2 right, 3 wrong. answers[k][t][a]: debate k, round t, agent a (as the verifier scores
    // them: 1 right, 0 wrong). corl:complete: agent a reads (a − 1) and (a − 2) mod 3, in that order.
    //   debate 0: t0 [1, 0, 0]  t1 [1, 1, 1]  t2 [0, 1, 1]   (A0 alone right, all right, A0 slips)
    //   debate 1: t0 [0, 0, 0]  t1 [1, 1, 0]  t2 [1, 1, 1]   (all wrong, A0 and A1 correct, A2 follows)
    const answers = [
      [
        ['2', '3', '3'],
        ['2', '2', '2'],
        ['3', '2', '2'],
      ],
      [
        ['3', '3', '3'],
        ['2', '2', '3'],
        ['2', '2', '2'],
      ],
    ];
    const neighbours = [
      [2, 1],
      [0, 2],
      [1, 0],
    ];
    // Held out: A2 wrong alone at round 0, then all right (one evaluation debate).
    const heldOut = [
      ['4', '4', '5'],
      ['4', '4', '4'],
      ['4', '4', '4'],
    ];
    const quote = (prompt: string, table: string[][], t: number, a: number): string =>
      t === 0
        ? prompt
        : chatDiscussionPrompt(
            prompt,
            neighbours[a]!.map((m) => ({ agent: m, answer: table[t - 1]![m]! })),
          );
    // Each agent's script in the order the trainer asks: round by round, debate by debate.
    const scripts = [0, 1, 2].map((a) => {
      const script: Record<string, string[]> = {};
      const ask = (prompt: string, answer: string): void => void (script[prompt] ??= []).push(answer);
      for (let t = 0; t < 3; t++) for (const table of answers) ask(quote(P, table, t, a), table[t]![a]!);
      for (let t = 0; t < 3; t++) ask(quote(H, heldOut, t, a), heldOut[t]![a]!);
      return script;
    });
    const agents = scripts.map((script, i) => ({
      name: `a${i}`,
      script,
      log: path.join(tmp.dir, `updates-${i}.jsonl`),
    }));
    const config = scriptedConfig(agents, {
      name: 'scripted-debate-3',
      seed: 5,
      topology: 'corl:complete',
      reward: 'corl:gt-verifier',
      interaction: { use: 'corl:debate', options: { rounds: 2, share: 'answer', alpha: [0.5, 1, 0.25, 2] } },
      trainer: { steps: 1, batchSize: 1, groupSize: 2, evalEvery: 0, checkpointEvery: 0, saveRollouts: true },
    });
    const { run } = await trainIn(tmp.dir, config, true);

    // Rewards by hand. γ = 0.3, agentShare "all": a turn's score is (own + Σ 0.3^s · mean of all agents
    // s rounds later) / (1 + Σ 0.3^s); α = [0.5, 1, 0.25, 2]. "Seen" is the mean of the agent's two
    // neighbours, right above 0.5, wrong below, and neither at exactly 0.5 (one right, one wrong).
    //
    // Debate 0. Means of all agents: t0 1/3, t1 1, t2 2/3.
    //  Scores. t0: (v + 0.3·1 + 0.09·2/3)/1.39 = (v + 0.36)/1.39 → A0 1.36/1.39, A1 = A2 = 0.36/1.39.
    //          t1: (1 + 0.3·2/3)/1.3 = 1.2/1.3 for all three. t2: [0, 1, 1].
    //  Incentives.
    //   A0 t0: its readers A1, A2 were wrong at t0 (mean 0) and right at t1 (mean 1), A0 right: −α3 = −2.
    //   A1 t1 and A2 t1 went wrong → right, but what they read at t0 ({A0 1, A2 0}, {A0 1, A1 0}) is 0.5: none.
    //   A0 t2: right → wrong while what it read at t1 (A2, A1) was right: −α1 = −1.
    //   A1, A2 at t0: their readers' t0 mean is 0.5: none. At t1 every reader mean at t2 has A0 wrong, one
    //   right: 0.5, none; A0's readers stay right from t1 to t2: none.
    //  Rewards: t0 [1.36/1.39 − 2, 0.36/1.39, 0.36/1.39]; t1 [1.2/1.3, 1.2/1.3, 1.2/1.3]; t2 [−1, 1, 1].
    //
    // Debate 1. Means: t0 0, t1 2/3, t2 1.
    //  Scores. t0: (0 + 0.3·2/3 + 0.09·1)/1.39 = 0.29/1.39 for all. t1: (v + 0.3)/1.3 → A0 = A1 = 1, A2 0.3/1.3.
    //          t2: [1, 1, 1].
    //  Incentives.
    //   A2 t0: its readers A0, A1 wrong at t0 (mean 0), right at t1 (mean 1), A2 wrong: −α2 = −0.25.
    //   A0 t1 and A1 t1: wrong → right while what they read at t0 was wrong (mean 0): +α1 = +1 each.
    //   A2 t2: wrong → right after reading A1, A0 right at t1: +α0 = +0.5.
    //   A0, A1 at t0: readers' t1 means ({A1 1, A2 0}, {A0 1, A2 0}) are 0.5: none. At t1: A0's and A1's
    //   readers' t1 mean is 0.5 (A2 wrong): none; A2's readers are right at t1 and t2: none.
    //  Rewards: t0 [0.29/1.39, 0.29/1.39, 0.29/1.39 − 0.25]; t1 [2, 2, 0.3/1.3]; t2 [1, 1, 1.5].
    //
    // Advantages per (agent, round) over the pair [debate 0, debate 1], d = |x − y|:
    //   A0 t0: [1.36/1.39 − 2, 0.29/1.39], d = 2 − 1.07/1.39, debate 1 larger.
    //   A1 t0: [0.36/1.39, 0.29/1.39], d = 0.07/1.39. A2 t0: [0.36/1.39, 0.29/1.39 − 0.25], d = 0.07/1.39 + 0.25.
    //   A0 t1 = A1 t1: [1.2/1.3, 2], d = 2 − 1.2/1.3. A2 t1: [1.2/1.3, 0.3/1.3], d = 0.9/1.3.
    //   A0 t2: [−1, 1], d = 2. A1 t2: [1, 1], both 0 (0/(0 + ε)). A2 t2: [1, 1.5], d = 0.5.
    const rewards = [
      [
        [1.36 / 1.39 - 2, 0.29 / 1.39],
        [0.36 / 1.39, 0.29 / 1.39],
        [0.36 / 1.39, 0.29 / 1.39 - 0.25],
      ],
      [
        [1.2 / 1.3, 2],
        [1.2 / 1.3, 2],
        [1.2 / 1.3, 0.3 / 1.3],
      ],
      [
        [-1, 1],
        [1, 1],
        [1, 1.5],
      ],
    ];
    const lower = (d: number): number[] => [-pair(d), pair(d)];
    const higher = (d: number): number[] => [pair(d), -pair(d)];
    const advantages = [
      [lower(2 - 1.07 / 1.39), higher(0.07 / 1.39), higher(0.07 / 1.39 + 0.25)],
      [lower(2 - 1.2 / 1.3), lower(2 - 1.2 / 1.3), higher(0.9 / 1.3)],
      [lower(2), [0, 0], lower(0.5)],
    ];

    const rollouts = readRollouts(tmp.dir);
    expect(rollouts).to.have.length(9);
    for (let a = 0; a < 3; a++) {
      const updates = fs
        .readFileSync(path.join(tmp.dir, `updates-${a}.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(updates).to.have.length(6);
      for (let t = 0; t < 3; t++) {
        const r = rollouts.find((x) => x.agent === a && x.round === t)!;
        const what = `agent ${a} round ${t}`;
        expect(
          r.completions.map((c) => c.key),
          what,
        ).to.deep.equal(answers.map((table) => table[t]![a]!));
        expect(
          r.completions.map((c) => c.prompt),
          what,
        ).to.deep.equal(answers.map((table) => quote(P, table, t, a)));
        r.completions.forEach((c, k) => {
          expect(c.score, `${what} debate ${k} score`).to.equal(answers[k]![t]![a] === '2' ? 1 : 0);
          expect(c.reward, `${what} debate ${k} reward`).to.be.closeTo(rewards[t]![a]![k]!, 1e-12);
          expect(c.advantage, `${what} debate ${k} advantage`).to.be.closeTo(advantages[t]![a]![k]!, 1e-12);
          // The update trained on this turn with this advantage (samples in round, then debate order).
          const u = updates[t * 2 + k];
          expect([u.prompt, u.answer], `${what} debate ${k} sample`).to.deep.equal([c.prompt, c.key]);
          expect(u.advantage, `${what} debate ${k} sample`).to.be.closeTo(advantages[t]![a]![k]!, 1e-12);
        });
      }
    }

    const metrics = run.readMetrics();
    const trainOf = (agent: number) => metrics.find((m) => m.phase === 'train' && m.agent === agent)!.metrics;
    // Round accuracy over the 2 debates: A0 [1, 0] [1, 1] [0, 1]; A2 [0, 0] [1, 0] [1, 1].
    expect([0, 1, 2].map((r) => trainOf(0)[`train/round${r}/accuracy`])).to.deep.equal([0.5, 1, 0.5]);
    expect([0, 1, 2].map((r) => trainOf(2)[`train/round${r}/accuracy`])).to.deep.equal([0, 0.5, 1]);
    const evalOf = (agent: number) => metrics.find((m) => m.phase === 'eval' && m.agent === agent)!.metrics;
    expect([0, 1, 2].map((r) => evalOf(2)[`eval/round${r}/pass@1`])).to.deep.equal([0, 1, 1]);
    expect([0, 1, 2].map((r) => evalOf(0)[`eval/round${r}/pass@1`])).to.deep.equal([1, 1, 1]);
    // Neighbour use: A2 read two right round-0 answers and turned right; A0 read A2 wrong and A1 right
    // in round 1 (mixed: in neither case), two right answers in round 2.
    expect(evalOf(2)).to.include({
      'eval/round1/peers_right/share': 1,
      'eval/round1/peers_right/pass@1': 1,
      'eval/round1/peers_right/before': 0,
    });
    expect(evalOf(0)).to.include({
      'eval/round1/peers_right/share': 0,
      'eval/round1/peers_wrong/share': 0,
      'eval/round2/peers_right/share': 1,
      'eval/round2/peers_right/before': 1,
    });
  });
});
