import { expect } from 'chai';
import type { Completion } from '../../../core/contracts/completion';
import { StepTable } from '../../../core/trainer/step-table';

/** A completion whose text names its cell. */
const completion = (text: string): Completion => ({ text, tokenIds: [1], logprobs: [0], finishReason: 'stop' });
const problems = [
  { id: 'p0', prompt: 'zero' },
  { id: 'p1', prompt: 'one' },
];

/** 2 agents × 2 problems × 3 samples, with `rounds` rounds whose cells are named `r<round>a<agent>p<problem>k<sample>`. */
function table(rounds: number): StepTable {
  const t = new StepTable(problems, 2, 3);
  for (let r = 0; r < rounds; r++)
    t.addRound(
      (a, i) => `prompt r${r}a${a}p${i}`,
      (a, i, k) => completion(`r${r}a${a}p${i}k${k}`),
    );
  return t;
}

describe('core/trainer/step-table', () => {
  it('a row per (agent, round, problem, sample), its columns empty until a phase fills them', () => {
    const t = table(1);
    expect(t.rounds).to.equal(1);
    const row = t.group(1, 0, 1).rows[2]!;
    expect(row).to.deep.equal({
      agent: 1,
      round: 0,
      problem: 1,
      sample: 2,
      prompt: 'prompt r0a1p1',
      completion: completion('r0a1p1k2'),
      answer: null,
      key: null,
      score: NaN,
      reward: NaN,
      advantage: NaN,
    });
    expect(t.group(1, 0, 1).scored).to.equal(undefined);
  });

  it('group views: a round agent by agent, an agent round by round, a problem round by round', () => {
    const t = table(2);
    const name = (g: { agent: number; round: number; problem: number }) => `r${g.round}a${g.agent}p${g.problem}`;
    expect(t.roundGroups(1).map(name)).to.deep.equal(['r1a0p0', 'r1a0p1', 'r1a1p0', 'r1a1p1']);
    expect(t.agentGroups(1).map(name)).to.deep.equal(['r0a1p0', 'r0a1p1', 'r1a1p0', 'r1a1p1']);
    expect(t.problemGroups(0).map(name)).to.deep.equal(['r0a0p0', 'r0a1p0', 'r1a0p0', 'r1a1p0']);
    for (const g of t.agentGroups(0))
      expect(g.rows.map((row) => row.completion.text)).to.deep.equal([0, 1, 2].map((k) => `${name(g)}k${k}`));
    expect(t.problemOf(t.group(0, 1, 1))).to.equal(problems[1]);
  });

  it('a group is one object in every view: a column filled through one view is seen through the others', () => {
    const t = table(2);
    t.roundGroups(1)[3]!.rows[0]!.reward = 0.5;
    expect(t.group(1, 1, 1).rows[0]!.reward).to.equal(0.5);
    expect(t.agentGroups(1)[3]!.rows[0]!.reward).to.equal(0.5);
  });

  it('asking for a group or problem the step does not have is a RangeError', () => {
    const t = table(1);
    expect(() => t.group(0, 1, 0)).to.throw(RangeError);
    expect(() => t.group(2, 0, 0)).to.throw(RangeError);
    expect(() => t.group(0, 0, 2)).to.throw(RangeError);
    expect(() => t.problemOf({ problem: 5 })).to.throw(RangeError);
  });
});
