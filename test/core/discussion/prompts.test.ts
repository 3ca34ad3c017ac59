import { expect } from 'chai';
import { chatDiscussionPrompt, chatEvaluationPrompt } from '../../../core/discussion/prompts';

describe('core/discussion/prompts (the default discussion and evaluation prompts)', () => {
  it('quotes each neighbour by its number from 1, its answer or its solution, then asks again', () => {
    expect(chatDiscussionPrompt('Q?', [])).to.equal('Q?');
    expect(
      chatDiscussionPrompt('Q?', [
        { agent: 0, answer: '4' },
        { agent: 2, answer: null, solution: 'so 5' },
      ]),
    ).to.equal(
      'Q?\n\nOther agents answered this question in the previous round:\n' +
        'Agent 1: 4\n\n' +
        "Agent 3's solution (answer: (no answer)):\nso 5\n\n" +
        'Consider their reasoning and answers, then solve the question again and give your own final answer.',
    );
  });

  it("quotes the one turn to check and asks for its errors and one's own answer", () => {
    expect(chatEvaluationPrompt('Q?', { agent: 1, answer: '6' })).to.equal(
      "Q?\n\nCheck another agent's work on this question.\n\nAgent 2's answer: 6\n\n" +
        'List every error you find in it and say briefly why each is wrong; do not retell the parts that are right. ' +
        'Then solve the question yourself and give your own final answer.',
    );
    expect(chatEvaluationPrompt('Q?', { agent: 0, answer: '6', solution: '2 * 3 = 6' })).to.contain(
      "Agent 1's solution (answer: 6):\n2 * 3 = 6\n\nList every error",
    );
  });
});
