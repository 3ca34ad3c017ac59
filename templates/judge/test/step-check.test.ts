import { expect } from 'chai';
import type { JudgeItem, JudgeRequest } from 'corl';
import { createPlugin, judgeContract } from 'corl/testing';
import { checkWork, exampleJudge, register, writtenSteps } from '../src';

// The contract every judge keeps (manifest, options, label-free, one score in [1, 3] or null per
// item, whole counts of calls and samples, deterministic), run against this plugin.
judgeContract(exampleJudge, { register, optionSets: [{ unchecked: 2 }, { fromPrompt: false, unchallenged: 1 }] });

const PROMPT = 'What is 47+85-19?';
const RIGHT = '47+85=132;132-19=113;\\boxed{113}';

/** A turn as corl hands it to a judge; the key is the answer itself here (exact equality). */
const turn = (agent: number, text: string) => {
  const answer = /\\boxed\{([^}]*)\}/.exec(text)?.[1] ?? null;
  return { agent, text, answer, key: answer };
};

/** One problem's request: each proposal of agent 0 with agent 1's evaluation of it. `sample` must never be needed. */
const request = (pairs: [string, string][]): JudgeRequest => ({
  agents: 2,
  problem: 'p1',
  prompt: PROMPT,
  step: 0,
  items: pairs.map(([p, e]): JudgeItem => ({ proposal: turn(0, p), evaluation: turn(1, e) })),
  equal: async (a, b) => a === b,
  sample: async () => {
    throw new Error('example:judge samples no policy');
  },
});

describe('example:judge', () => {
  it('reads the steps a solution writes, in order', () => {
    expect(writtenSteps('5-8=-3;-3+4=1;\\boxed{1}')).to.deep.equal([
      { left: 5, op: '-', right: 8, result: -3 },
      { left: -3, op: '+', right: 4, result: 1 },
    ]);
    expect(writtenSteps('The answer is \\boxed{113}.')).to.deep.equal([]);
  });

  it('finds the first flaw of each kind of slip, and lets right work hold', () => {
    expect(checkWork(PROMPT, RIGHT, '113')).to.deep.equal({ verdict: 'holds', reason: '2 step(s) check out' });
    // A column slip: 47 + 85 is 132, not 122.
    expect(checkWork(PROMPT, '47+85=122;122-19=103;\\boxed{103}', '103').reason).to.equal('step 1: 47+85=122 is false');
    // A copy slip between steps: the second step starts at 123, the first ended at 132.
    expect(checkWork(PROMPT, '47+85=132;123-19=104;\\boxed{104}', '104').reason).to.equal(
      'step 2 starts at 123, not at the result before it, 132',
    );
    // A copy slip into the answer.
    expect(checkWork(PROMPT, '47+85=132;132-19=113;\\boxed{131}', '131').reason).to.equal(
      'the answer 131 is not the last result, 113',
    );
    // True arithmetic on a misread number: 58 is not in the problem (allowed with fromPrompt: false).
    const misread = '47+58=105;105-19=86;\\boxed{86}';
    expect(checkWork(PROMPT, misread, '86').reason).to.equal('step 1 uses 58, which is not in the problem');
    expect(checkWork(PROMPT, misread, '86', false).verdict).to.equal('holds');
    expect(checkWork(PROMPT, '\\boxed{113}', '113').verdict).to.equal('unchecked');
    expect(checkWork(PROMPT, '47+85=132;132-19=113;', null).reason).to.equal('no answer given');
  });

  it('scores on the rubric: 3 for work that holds, 1 for flawed work contested, 2 when let stand, null unchecked', async () => {
    const judge = await createPlugin(exampleJudge, {});
    const slip = '47+85=122;122-19=103;\\boxed{103}';
    const r = await judge.score(
      request([
        [RIGHT, RIGHT], // right, and the evaluation agrees
        [RIGHT, slip], // right; the evaluation's criticism does not hold
        [slip, RIGHT], // flawed, and the evaluation answered otherwise: a fatal criticism that holds
        [slip, slip], // flawed, and the evaluation let it stand
        [slip, 'Looks fine to me.'], // flawed, and the evaluation gave no answer: let stand too
        ['\\boxed{113}', RIGHT], // nothing written to check
      ]),
    );
    expect(r).to.deep.equal({ scores: [3, 3, 1, 2, 2, null], calls: 0, samples: 0 });
    // corl:comas rewards a proposal s = (score − 1)/2 and its evaluation 1 − s: 1/0, 1/0, 0/1, 0.5/0.5, 0.5/0.5, nothing.
  });

  it('options move the scores of flawed work let stand and of unchecked proposals', async () => {
    const judge = await createPlugin(exampleJudge, { unchallenged: 1, unchecked: 2 });
    const slip = '47+85=122;122-19=103;\\boxed{103}';
    const r = await judge.score(request([[slip, slip], ['\\boxed{113}', RIGHT]]));
    expect(r.scores).to.deep.equal([1, 2]);
  });
});
