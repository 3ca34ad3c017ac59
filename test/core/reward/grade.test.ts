import { expect } from 'chai';
import type { Equivalence } from '../../../core/contracts/equivalence';
import { MapGroundTruth } from '../../../core/contracts/problem';
import { Grader, gradeKeys, referenceKey } from '../../../core/reward/grade';
import { gradeGroup } from '../../../core/reward/metrics';
import { buildRewardContext } from '../../../core/reward/context';
import { matchesReference } from '../../../plugins/rewards/ground-truth';

const extractor = { extract: (t: string): string | null => /\\boxed\{(.*)\}/.exec(t)?.[1] ?? null };
// Keys are trimmed answers; "0.5" and "1/2" are different keys but one answer, as `equal` says.
const equivalence: Equivalence = {
  key: (a) => (a.trim() === '' ? null : a.trim()),
  equal: async (a, b) => a === b || [a, b].every((x) => x === '0.5' || x === '1/2'),
};
const gt = new MapGroundTruth([
  ['p1', { answer: ' 0.5 ' }],
  ['p2', { answer: '' }],
]);

describe('core/reward/grade (the one grader: answer keys and the matches rule)', () => {
  const grader = new Grader(extractor, equivalence, gt);

  it('grades by matches, not string identity: an equal answer with another key is right', async () => {
    const g = await grader.grade({ id: 'p1' }, ['\\boxed{1/2}', '\\boxed{0.5}', '\\boxed{3}', 'no idea']);
    expect(g).to.deep.equal({
      answers: ['1/2', '0.5', '3', null],
      keys: ['1/2', '0.5', '3', null],
      correct: [true, true, false, false],
    });
    expect(grader.target('p1')).to.equal('0.5');
    expect(grader.reference('p1')).to.equal(' 0.5 ');
  });

  it('nothing is right for a problem without a reference, or whose reference is no answer', async () => {
    expect((await grader.grade({ id: 'p9' }, ['\\boxed{0.5}'])).correct).to.deep.equal([false]);
    expect((await grader.grade({ id: 'p2' }, ['\\boxed{}', 'x'])).correct).to.deep.equal([false, false]);
    expect(await grader.right(null, 'p1')).to.equal(false);
    expect(grader.reference('p9')).to.equal(null);
  });

  it('every caller gives one verdict per key: the grader, the step metrics and the ground-truth reward', async () => {
    // '' breaks the Equivalence contract (a key that is no answer): no caller counts it right.
    const keys = ['1/2', '0.5', '3', null, ''];
    const target = referenceKey({ answer: ' 0.5 ' }, equivalence);
    expect(target).to.equal('0.5');
    const expected = [true, true, false, false, false];
    expect(await gradeKeys(keys, target, equivalence)).to.deep.equal(expected);
    expect(await gradeKeys(keys, null, equivalence)).to.deep.equal([false, false, false, false, false]);
    // reward/accuracy's rewardRight: 1 where the 0/1 reward equals the verdict
    const g = await gradeGroup({ rewards: [1, 0, 0, 0, 1], label: '1/2' }, keys, target, undefined, equivalence);
    expect(g).to.deep.equal({ labelRight: 1, rewardRight: [1, 0, 1, 1, 0] });
    // corl:ground-truth and corl:gt-verifier, on the frozen context the pipeline builds
    const ctx = buildRewardContext(
      {
        problem: { id: 'p1', prompt: 'q' },
        prompt: 'q',
        agent: 0,
        agents: 1,
        step: 0,
        supervisors: [],
        completions: keys.map((k) => ({ text: `\\boxed{${k ?? ''}}`, length: 1, finishReason: 'stop' as const })),
        answers: keys,
        keys,
        reference: { answer: ' 0.5 ' },
      },
      equivalence,
    );
    expect(await matchesReference(ctx, 'corl:ground-truth')).to.deep.equal(expected);
  });
});
