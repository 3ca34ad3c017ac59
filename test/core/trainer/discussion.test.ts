// Discussion-round prompts against golden files (test/fixtures/data/discussion/): the chat format of
// jsonl/inline tasks (answers, solutions, solutions cut to a context), corl:arith's corpus format,
// and the coded error when not even the answers fit. CORL_UPDATE_GOLDEN=1 rewrites the files.
import { expect } from 'chai';
import * as fs from 'node:fs';
import type { ContextWindow } from '../../../core/contracts/policy';
import { createPlugin } from '../../../core/testing';
import { ELLIPSIS, roundPrompt, tail, type PreviousTurn } from '../../../core/trainer/discussion';
import { chatDiscussionPrompt } from '../../../core/discussion/prompts';
import { arithTask, inlineTask, jsonlTask } from '../../../plugins/tasks';
import { dataFixture } from '../../fixtures/configs';

function golden(name: string, actual: string): void {
  const file = dataFixture(`discussion/${name}`);
  if (process.env.CORL_UPDATE_GOLDEN === '1') fs.writeFileSync(file, actual);
  expect(actual, name).to.equal(fs.readFileSync(file, 'utf8'));
}

/** A context window of `tokens` characters, one token per character plus a start token. */
const chars = (tokens: number): ContextWindow => ({ tokens, count: (p) => 1 + p.length });

const P = 'What is 17 + 25?';
const previous: PreviousTurn[] = [
  { agent: 1, answer: '42', text: '17 + 25: 7 + 5 = 12, carry 1; 1 + 2 + 1 = 4. So the answer is \\boxed{42}.' },
  { agent: 2, answer: '32', text: '17 + 25: 7 + 5 = 12, write 2; 1 + 2 = 3. So the answer is \\boxed{32}.' },
];
const where = 'agents[0] debate 0 of problem "p", round 1';

describe('discussion prompts (golden files)', () => {
  it('chat format, answers only (a missing answer is said so)', () => {
    golden(
      'chat-answers.txt',
      roundPrompt(chatDiscussionPrompt, P, [...previous, { agent: 3, answer: null, text: 'I am not sure.' }], {
        share: 'answer',
        maxTokens: 64,
        where,
      }),
    );
  });

  it('chat format, whole solutions', () => {
    golden(
      'chat-solutions.txt',
      roundPrompt(chatDiscussionPrompt, P, previous, { share: 'solution', maxTokens: 64, where }),
    );
  });

  it('whole solutions cut from the front, all to the longest length that leaves maxTokens free', () => {
    const whole = roundPrompt(chatDiscussionPrompt, P, previous, { share: 'solution', maxTokens: 64, where });
    const window = chars(whole.length + 64 - 20); // 21 tokens too many (the start token counts)
    const cut = roundPrompt(chatDiscussionPrompt, P, previous, { share: 'solution', window, maxTokens: 64, where });
    golden('chat-solutions-cut.txt', cut);
    expect(window.count(cut)).to.be.at.most(window.tokens - 64);
    // One character more per solution would not fit.
    // Both solutions were cut (73 and 69 characters whole, 142 in all; 21 must go, and each cut adds
    // the 1-character mark): to 59 characters each, 120 + 2 marks = 122, 20 fewer than whole.
    expect(cut.split(ELLIPSIS).length - 1).to.equal(2);
    expect(previous.map((t) => t.text.length)).to.deep.equal([73, 69]);
    const quote = (n: number): string =>
      chatDiscussionPrompt(
        P,
        previous.map((t) => ({ ...t, solution: tail(t.text, n) })),
      );
    expect(cut).to.equal(quote(59));
    expect(window.count(quote(60))).to.be.greaterThan(window.tokens - 64);
  });

  it('falls back to answers only, then refuses with CORL_ERR_INTERACTION_CONTEXT', () => {
    const answers = roundPrompt(chatDiscussionPrompt, P, previous, { share: 'answer', maxTokens: 8, where });
    const fitsAnswers = chars(1 + answers.length + 8);
    expect(
      roundPrompt(chatDiscussionPrompt, P, previous, { share: 'solution', window: fitsAnswers, maxTokens: 8, where }),
    ).to.equal(answers);
    let caught: unknown;
    try {
      roundPrompt(chatDiscussionPrompt, P, previous, {
        share: 'solution',
        window: chars(answers.length + 8),
        maxTokens: 8,
        where,
      });
    } catch (e) {
      caught = e;
    }
    expect(caught).to.have.property('code', 'CORL_ERR_INTERACTION_CONTEXT');
    expect((caught as Error).message)
      .to.contain(where)
      .and.contain('leave 8 tokens free');
  });

  it('jsonl and inline tasks use the chat format', async () => {
    const inline = await createPlugin(inlineTask, { train: [{ id: 'a', prompt: P, answer: '42' }], heldOut: [] });
    const jsonl = await createPlugin(jsonlTask, { train: dataFixture('plain.jsonl'), format: 'plain' });
    const turns = [
      { agent: 1, answer: '42' },
      { agent: 2, answer: null, solution: 'I am not sure.' },
    ];
    expect(inline.discussionPrompt!(P, turns)).to.equal(chatDiscussionPrompt(P, turns));
    expect(jsonl.discussionPrompt!(P, turns)).to.equal(chatDiscussionPrompt(P, turns));
  });

  it("corl:arith quotes answers in its pretraining corpus's format", async () => {
    const task = await createPlugin(arithTask, { pretrain: { size: 400, discussion: { fraction: 0.5 } } });
    const data = await task.load();
    const prompt = data.heldOut[0]!.prompt;
    golden(
      'arith.txt',
      task.discussionPrompt!(prompt, [
        { agent: 1, answer: '42', solution: 'ignored: the corpus never quotes solutions' },
        { agent: 2, answer: null },
        { agent: 3, answer: 'forty' },
        { agent: 0, answer: '-7' },
      ]),
    );
    expect(task.discussionPrompt!(prompt, [{ agent: 1, answer: null }])).to.equal(prompt);
    // Every discussion turn of the corpus is a prompt the round format rebuilds exactly.
    const corpusPrompts = data.pretrainText!.map((t, i) => t.slice(0, data.pretrainPromptLengths![i]));
    const quoted = corpusPrompts.filter((p) => p.startsWith('Peers: '));
    expect(quoted.length).to.be.greaterThan(100);
    for (const p of quoted) {
      const m = /^Peers: ([-\d, ]+)\. (.*)$/s.exec(p)!;
      const answers = m[1]!.split(', ');
      expect(
        task.discussionPrompt!(
          m[2]!,
          answers.map((answer, agent) => ({ agent, answer })),
        ),
      ).to.equal(p);
    }
  });
});
