import { expect } from 'chai';
import { createPlugin, interactionContract } from 'corl/testing';
import { exampleInteraction, register } from '../src';

// The contract every interaction keeps (manifest, options, rounds and share, finite rewards in the
// shape of the scores, coded refusals, purity, no ground truth), run against this plugin.
interactionContract(exampleInteraction, { register, optionSets: [{ rounds: 2, share: 'solution' }, { weight: 0 }] });

/** One debate of two agents reading each other: scores[t][a] → the contract's scores[t][a][k]. */
const debate = (scores: number[][]) => ({
  agents: 2,
  turns: scores.length,
  debates: 1,
  scores: scores.map((round) => round.map((v) => [v])),
  neighbours: [[1], [0]],
});

describe('example:interaction', () => {
  it("mixes each turn's score with its agent's final score (hand-computed, w = 0.5)", async () => {
    const t = await createPlugin(exampleInteraction, { rounds: 2 });
    // A: wrong, wrong, right. B: right throughout.
    const r = t.credit(debate([[0, 1], [0, 1], [1, 1]]));
    // A t0 = 0.5·0 + 0.5·1 = 0.5, A t1 = 0.5, A t2 = 0.5·1 + 0.5·1 = 1; B is 1 everywhere.
    expect(r.map((round) => round.map((g) => g[0]))).to.deep.equal([[0.5, 1], [0.5, 1], [1, 1]]);
  });

  it('weight 0 gives each turn its own score; weight 1 the final one', async () => {
    const scores = [[0.25, 1], [0.75, 0]];
    const own = await createPlugin(exampleInteraction, { weight: 0 });
    expect(own.credit(debate(scores)).map((round) => round.map((g) => g[0]))).to.deep.equal(scores);
    const last = await createPlugin(exampleInteraction, { weight: 1 });
    expect(last.credit(debate(scores)).map((round) => round.map((g) => g[0]))).to.deep.equal([[0.75, 0], [0.75, 0]]);
  });

  it('refuses a lone agent, or one that reads only itself, with CORL_ERR_INTERACTION_AGENTS', async () => {
    const t = await createPlugin(exampleInteraction, {});
    expect(() => t.validate(1, [[]])).to.throw(/CORL_ERR_INTERACTION_AGENTS.*at least 2/);
    expect(() => t.validate(2, [[0], [0]])).to.throw(/CORL_ERR_INTERACTION_AGENTS.*agent 0/);
    expect(() => t.validate(2, [[1], [0]])).to.not.throw();
  });
});
