// corl:debate's credit against rewards and advantages worked by hand (docs/algorithms/maporl.md).
// Scores are a ground-truth verifier's (1 right, 0 wrong); γ = 0.3, so the discounted-sum
// denominators are 1 + 0.3 + 0.09 = 1.39 (round 0 of 3 turns), 1 + 0.3 = 1.3 (round 1) and 1 (round 2).
import { expect } from 'chai';
import type { DebateScores } from '../../../core/contracts/interaction';
import { grpoAdvantages } from '../../../core/grpo/advantages';
import { createPlugin } from '../../../core/testing';
import { debateCredit, debateInteraction, type DebateOptions } from '../../../plugins/interactions';

const DEFAULTS: DebateOptions = {
  rounds: 2,
  share: 'solution',
  horizon: 'discounted_sum',
  agentShare: 'all',
  discount: 0.3,
  alpha: [0, 0, 0, 0],
  threshold: 0.5,
};
const ALPHA: DebateOptions = { ...DEFAULTS, alpha: [0.5, 1, 0.25, 2] };
const complete3 = [
  [1, 2],
  [0, 2],
  [0, 1],
];
const ring3 = [[2], [0], [1]];

/** scores[t][a][k] from per-debate tables table[k][t][a]. */
function scores(agents: number, neighbours: number[][], ...debates: number[][][]): DebateScores {
  const turns = debates[0]!.length;
  return {
    agents,
    turns,
    debates: debates.length,
    neighbours,
    scores: Array.from({ length: turns }, (_, t) =>
      Array.from({ length: agents }, (_, a) => debates.map((d) => d[t]![a]!)),
    ),
  };
}

/** rewards[t][a][k] → per debate k, table[t][a]. */
const byDebate = (r: number[][][], k: number): number[][] => r.map((row) => row.map((g) => g[k]!));
const close = (actual: number[][], expected: number[][]): void => {
  expect(actual.length).to.equal(expected.length);
  actual.forEach((row, t) =>
    row.forEach((v, a) => expect(v, `round ${t} agent ${a}`).to.be.closeTo(expected[t]![a]!, 1e-12)),
  );
};
/** GRPO's advantage of two rewards x > y (unbiased std |x − y|/√2, ε = 1e-6): ±(d/2)/(d/√2 + ε). */
const pair = (d: number): number => d / 2 / (d / Math.SQRT2 + 1e-6);

describe('corl:debate credit (MAPoRL score_rule + bonus_rule), worked by hand', () => {
  it("defaults: γ = 0.3, every agent's later scores, no incentives", async () => {
    const d = await createPlugin(debateInteraction, {});
    expect([d.rounds, d.share]).to.deep.equal([2, 'solution']);
    // 2 agents, 1 debate. Round 0: A right, B wrong; B reads A and is right from round 1 on.
    const r = d.credit(
      scores(
        2,
        [[1], [0]],
        [
          [1, 0],
          [1, 1],
          [1, 1],
        ],
      ),
    );
    close(byDebate(r, 0), [
      // A: (1 + 0.3·mean(1,1) + 0.09·mean(1,1)) / 1.39 = 1;  B: (0 + 0.3 + 0.09) / 1.39 = 0.39 / 1.39
      [1, 0.39 / 1.39],
      // (1 + 0.3·1) / 1.3 = 1 for both
      [1, 1],
      [1, 1],
    ]);
  });

  it('2 agents, 2 rounds, 2 debates, incentives α = [0.5, 1, 0.25, 2]: rewards and GRPO advantages', () => {
    // Debate 0: A right throughout; B wrong, then corrected by A.   Debate 1: A right, then persuaded by B's wrong answer.
    //            t0 [A, B]  t1      t2                                         t0      t1      t2
    const s = scores(
      2,
      [[1], [0]],
      [
        [1, 0],
        [1, 1],
        [1, 1],
      ],
      [
        [1, 0],
        [0, 0],
        [0, 0],
      ],
    );
    const r = debateCredit(ALPHA, s);
    // Debate 0.
    //  t0 A: score 1; B (A's reader) was wrong at t0 and right at t1 while A was right: released code −α3 = −2 → −1.
    //  t0 B: score 0.39/1.39; A was right at t0 and t1: no influence term.
    //  t1 B: wrong at t0, right at t1, the neighbour it read (A, t0) right: +α0 = 0.5 → 1.5.
    close(byDebate(r, 0), [
      [1 - 2, 0.39 / 1.39],
      [1, 1 + 0.5],
      [1, 1],
    ]);
    // Debate 1.
    //  t0 A: (1 + 0.3·0 + 0.09·0) / 1.39 = 1/1.39; B wrong at t0 and t1: no influence.
    //  t0 B: A was right at t0 and wrong at t1 while B was wrong: released code +α3 = +2 → 2.
    //  t1 A: right at t0, wrong at t1, its neighbour B (t0) wrong: persuaded wrongly, −α0 = −0.5.
    close(byDebate(r, 1), [
      [1 / 1.39, 2],
      [-0.5, 0],
      [0, 0],
    ]);
    // Advantages: one group per (agent, round) over the 2 debates, as the trainer forms them.
    const groups = [0, 1, 2].flatMap((t) => [0, 1].map((a) => r[t]![a]!));
    const adv = grpoAdvantages(groups, { scale: 'group', epsilon: 1e-6, unbiased: true });
    const expected = [
      [-pair(1 / 1.39 + 1), pair(1 / 1.39 + 1)], // A t0: [−1, 0.7194]
      [-pair(2 - 0.39 / 1.39), pair(2 - 0.39 / 1.39)], // B t0: [0.2806, 2]
      [pair(1.5), -pair(1.5)], // A t1: [1, −0.5]
      [pair(1.5), -pair(1.5)], // B t1: [1.5, 0]
      [pair(1), -pair(1)], // A t2: [1, 0]
      [pair(1), -pair(1)], // B t2: [1, 0]
    ];
    adv.forEach((g, j) =>
      g.forEach((v, k) => expect(v, `group ${j} debate ${k}`).to.be.closeTo(expected[j]![k]!, 1e-12)),
    );
  });

  it('3 agents, 2 rounds, complete topology: a neighbour mean of 0.5 is neither right nor wrong', () => {
    // Round 0: only A0 right; round 1: A1 joins; round 2: everyone right. Debate 1: all wrong throughout.
    const s = scores(
      3,
      complete3,
      [
        [1, 0, 0],
        [1, 1, 0],
        [1, 1, 1],
      ],
      [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ],
    );
    const r = debateCredit(ALPHA, s);
    // Scores ("all": the mean of every agent's later scores, 2/3 at t1, 1 at t2):
    //  t0: A0 (1 + 0.3·2/3 + 0.09) / 1.39 = 1.29/1.39; A1, A2 (0 + 0.2 + 0.09) / 1.39 = 0.29/1.39
    //  t1: A0, A1 (1 + 0.3) / 1.3 = 1; A2 (0 + 0.3) / 1.3 = 0.3/1.3
    // Incentives: A1 at t1 changed to right but its neighbours' t0 mean is (1 + 0)/2 = 0.5: no α0, no α1.
    // Every influence term at t0/t1 sees a 0.5 mean somewhere, except A2's at t1 (its readers right
    // at t1 and t2: nothing changes). A2 at t2: wrong → right, neighbours right at t1: +α0 = 0.5.
    const d0 = [
      [1.29 / 1.39, 0.29 / 1.39, 0.29 / 1.39],
      [1, 1, 0.3 / 1.3],
      [1, 1, 1.5],
    ];
    close(byDebate(r, 0), d0);
    close(byDebate(r, 1), [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    const groups = [0, 1, 2].flatMap((t) => [0, 1, 2].map((a) => r[t]![a]!));
    const adv = grpoAdvantages(groups, { scale: 'group', epsilon: 1e-6, unbiased: true });
    // Each group is [x, 0] with x > 0: advantages ±pair(x).
    adv.forEach((g, j) => {
      const x = d0[Math.floor(j / 3)]![j % 3]!;
      expect(g[0]).to.be.closeTo(pair(x), 1e-12);
      expect(g[1]).to.be.closeTo(-pair(x), 1e-12);
    });
  });

  it('3 agents on the ring: incentives follow who reads whom', () => {
    // Same scores as above, but agent n reads only n − 1 (A0 reads A2, A1 reads A0, A2 reads A1).
    const r = debateCredit(
      ALPHA,
      scores(3, ring3, [
        [1, 0, 0],
        [1, 1, 0],
        [1, 1, 1],
      ]),
    );
    // t0 A0: its reader A1 was wrong at t0 and right at t1 while A0 was right: −α3 = −2.
    // t1 A1: wrong → right having read A0 (right): +α0 = 0.5; its reader A2 wrong at t1, right at t2, A1 right: −α3 = −2.
    // t2 A2: wrong → right having read A1 (right): +α0 = 0.5.
    close(byDebate(r, 0), [
      [1.29 / 1.39 - 2, 0.29 / 1.39, 0.29 / 1.39],
      [1, 1 + 0.5 - 2, 0.3 / 1.3],
      [1, 1, 1.5],
    ]);
  });

  it("the released horizons: 'individual', 'last' and 'current'", () => {
    const s = scores(
      2,
      [[1], [0]],
      [
        [1, 0],
        [1, 1],
        [1, 1],
      ],
    );
    // individual: B's own later scores, (0 + 0.3·1 + 0.09·1) / 1.39; A's (1 + 0.3 + 0.09) / 1.39 = 1.
    close(byDebate(debateCredit({ ...DEFAULTS, agentShare: 'individual' }, s), 0), [
      [1, 0.39 / 1.39],
      [1, 1],
      [1, 1],
    ]);
    // last/all: every turn gets the last round's mean, 1.
    close(byDebate(debateCredit({ ...DEFAULTS, horizon: 'last' }, s), 0), [
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
    // current/individual: the turn's own score.
    close(byDebate(debateCredit({ ...DEFAULTS, horizon: 'current', agentShare: 'individual' }, s), 0), [
      [1, 0],
      [1, 1],
      [1, 1],
    ]);
  });

  it('refuses cohorts it cannot debate in with CORL_ERR_INTERACTION_AGENTS', async () => {
    const d = await createPlugin(debateInteraction, {});
    expect(() => d.validate(1, [[0]]))
      .to.throw()
      .with.property('code', 'CORL_ERR_INTERACTION_AGENTS');
    expect(() => d.validate(2, [[0], [1]])).to.throw(/agent 0 to have a neighbour other than itself/);
    expect(() => d.validate(2, [[1], [0]])).not.to.throw();
  });
});
