import { expect } from 'chai';
import type { CompletionView, RewardContext, RewardSource } from '../../../core/contracts/reward-source';
import { isCorlError } from '../../../core/errors';
import { formatReward } from '../../../plugins/rewards/format';

const view = (text: string, answer: string | null = null): CompletionView => ({
  text,
  answer,
  key: answer,
  length: 1,
  finishReason: 'stop',
});
const ctx = (completions: CompletionView[]): RewardContext => ({
  problem: { id: 'p', prompt: '' },
  prompt: '',
  agent: 0,
  agents: 1,
  step: 0,
  completions,
  own: { agent: 0, keys: completions.map((c) => c.key) },
  supervisors: [],
  equivalence: { key: (a) => a, equal: async (a, b) => a === b },
});
const make = (o: object) =>
  formatReward.create(
    { check: 'boxed', pattern: '', flags: '', reward: 1, penalty: 0, ...o } as never,
    {} as never,
  ) as RewardSource;

describe('plugins/rewards/format (corl:format)', () => {
  it('boxed: a balanced \\boxed{} present', async () => {
    const r = await make({}).score(ctx([view('so \\boxed{3}'), view('so \\boxed{3'), view('no box')]));
    expect(r.rewards).to.deep.equal([1, 0, 0]);
    expect(r.metrics!['format/fraction']).to.be.closeTo(1 / 3, 1e-12);
  });
  it('answer-tag, answer (the extractor found one) and pattern, with custom reward and penalty', async () => {
    expect(
      (await make({ check: 'answer-tag' }).score(ctx([view('<answer>1</answer>'), view('<answer>1')]))).rewards,
    ).to.deep.equal([1, 0]);
    expect(
      (await make({ check: 'answer', reward: 0.5, penalty: -1 }).score(ctx([view('x', '3'), view('y')]))).rewards,
    ).to.deep.equal([0.5, -1]);
    expect(
      (
        await make({ check: 'pattern', pattern: '^<think>[\\s\\S]*</think>', flags: '' }).score(
          ctx([view('<think>a\nb</think> 3'), view('3')]),
        )
      ).rewards,
    ).to.deep.equal([1, 0]);
  });
  it('a bad or missing pattern is CORL_ERR_REWARD_OPTIONS', () => {
    expect(() => make({ check: 'pattern', pattern: '(' })).to.throw(
      /CORL_ERR_REWARD_OPTIONS.*valid regular expression/,
    );
    try {
      make({ check: 'pattern' });
      expect.fail();
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_REWARD_OPTIONS')).to.equal(true);
    }
  });
});
