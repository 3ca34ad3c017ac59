import { expect } from 'chai';
import { NO_INTERACTION } from '../../../core/trainer/no-interaction';

describe('core/trainer/no-interaction (the null interaction of a run without one)', () => {
  it('has no discussion rounds, accepts any cohort, and credits each answer with its score (copies)', () => {
    expect(NO_INTERACTION.rounds).to.equal(0);
    expect(() => NO_INTERACTION.validate(3, [[2], [0], [1]])).to.not.throw();
    const scores = [
      [
        [1, 0, 0.5],
        [0, 0, 1],
      ],
    ];
    const rewards = NO_INTERACTION.credit({ agents: 2, turns: 1, debates: 3, scores, neighbours: [[1], [0]] });
    expect(rewards).to.deep.equal(scores);
    expect(rewards[0]).to.not.equal(scores[0]);
    expect(rewards[0]![1]).to.not.equal(scores[0]![1]);
    expect(NO_INTERACTION.judge).to.equal(undefined);
    expect(Object.isFrozen(NO_INTERACTION)).to.equal(true);
  });
});
