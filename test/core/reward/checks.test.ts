import { expect } from 'chai';
import { CorlError } from '../../../core/errors';
import { checkKeys, checkResult, rewardFailure } from '../../../core/reward/checks';
import { thrown } from '../../fixtures/errors';

const subject = { use: 'test:source', what: 'problem "p1" of agent 0 (a) at step 1', where: 'reward' };

describe('core/reward/checks', () => {
  it('accepts a result that keeps the contract and copies it, keeping only finite metrics', () => {
    const rewards = [1, 0, 0.5];
    const result = {
      rewards,
      label: '4',
      ownLabel: null,
      metrics: { 'vote/x': 0.5, 'vote/nan': NaN, 'vote/inf': Infinity },
    };
    const r = checkResult(result, 3, subject);
    expect(r).to.deep.equal({ rewards: [1, 0, 0.5], label: '4', ownLabel: null, metrics: { 'vote/x': 0.5 } });
    expect(r.rewards).to.not.equal(rewards);
    expect(checkResult({ rewards: [2] }, 1, subject)).to.deep.equal({ rewards: [2], metrics: {} });
  });

  it('refuses every way a result breaks the contract with CORL_ERR_REWARD_OUTPUT, saying what came back', () => {
    const cases: [unknown, RegExp][] = [
      [[1, 0, 1], /got a bare array/],
      [undefined, /got undefined/],
      [null, /got null/],
      [7, /got 7/],
      [{ reward: [1, 0, 1] }, /got rewards: undefined/],
      [
        { rewards: [1, 0] },
        /expected 3 finite rewards from "test:source" for problem "p1" of agent 0 \(a\) at step 1, got 2/,
      ],
      [{ rewards: [1, NaN, 0] }, /got NaN for completion 1/],
      [{ rewards: [1, 0, Infinity] }, /got Infinity for completion 2/],
      [{ rewards: [1, '0', 0] }, /got 0 for completion 1/],
      [{ rewards: [1, 0, 0], label: 4 }, /expected label .* a string, null or absent, got number/],
      [{ rewards: [1, 0, 0], ownLabel: {} }, /expected ownLabel .* got object/],
      [{ rewards: [1, 0, 0], metrics: [1] }, /expected metrics .* an object of numbers, got an array/],
      [{ rewards: [1, 0, 0], metrics: null }, /expected metrics .* got null/],
    ];
    for (const [result, message] of cases) {
      const e = thrown(() => checkResult(result, 3, subject));
      expect(e.code, JSON.stringify(result)).to.equal('CORL_ERR_REWARD_OUTPUT');
      expect(e.message).to.match(message);
      expect(e.where).to.equal('reward');
    }
    expect(thrown(() => checkResult([1, 0, 1], 3, subject)).hint).to.contain('returns { rewards: [...] }');
  });

  it('answer keys: one string or null each, the empty key read as no answer; anything else is CORL_ERR_REWARD_OUTPUT', () => {
    expect(checkKeys(['a', null, ''], 3, subject)).to.deep.equal(['a', null, null]);
    for (const keys of [['a', null], ['a', 1, null], 'abc', undefined, ['a', undefined, 'b']]) {
      const e = thrown(() => checkKeys(keys, 3, subject));
      expect(e.code).to.equal('CORL_ERR_REWARD_OUTPUT');
      expect(e.message).to.contain('expected 3 answer keys (a string or null each) from "test:source"');
    }
  });

  it('a failure keeps its code when it has one; anything else becomes CORL_ERR_REWARD_FAILED with its message', () => {
    const coded = new CorlError('CORL_ERR_SANDBOX_UNAVAILABLE', 'expected bwrap, got none');
    expect(rewardFailure(coded, 'the reward')).to.equal(coded);
    const plain = new Error('boom');
    const e = rewardFailure(plain, 'the reward of problem "p1"');
    expect(e.code).to.equal('CORL_ERR_REWARD_FAILED');
    expect(e.detail).to.equal('expected the reward of problem "p1" to succeed, got boom');
    expect(e.cause).to.equal(plain);
    expect(rewardFailure('text', 'x').detail).to.equal('expected x to succeed, got text');
  });
});
