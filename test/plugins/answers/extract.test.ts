import { expect } from 'chai';
import {
  afterAnswerIs,
  ALL_RULES,
  extractMathAnswer,
  isThousands,
  lastAnswerTag,
  lastBoxed,
  lastNumber,
  minervaAnswer,
} from '../../../plugins/answers/extract';
import { lastIndexOfTail } from '../../../plugins/answers/latex';

describe('plugins/answers/extract', () => {
  describe('minervaAnswer', () => {
    it('takes the $…$ after the last "final answer is" when ". I hope" follows', () => {
      expect(minervaAnswer('Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.')).to.equal(
        '\\frac{1}{2}',
      );
      expect(
        minervaAnswer(
          'The final answer is $3$. I hope it is correct. Wait: the final answer is $4$. I hope it is correct.',
        ),
      ).to.equal('4');
      expect(minervaAnswer('The final answer is $3$ and that is all.')).to.equal(null);
      expect(minervaAnswer('the final answer is 3. I hope it is correct.')).to.equal(null);
    });
  });

  describe('lastBoxed', () => {
    it('takes the last brace-balanced \\boxed{} or \\fbox{}', () => {
      expect(lastBoxed('first \\boxed{1} then \\boxed{\\frac{1}{2}} done')).to.equal('\\frac{1}{2}');
      expect(lastBoxed('\\boxed{a{b}c} and \\fbox{7}')).to.equal('7');
      expect(lastBoxed('\\fbox{7} and \\boxed{ {x}^{2} }')).to.equal('{x}^{2}');
    });
    it('skips an unbalanced last box (a truncated completion) for the one before it', () => {
      expect(lastBoxed('ok \\boxed{3} then broken \\boxed{4')).to.equal('3');
      expect(lastBoxed('\\boxed{\\boxed{\\boxed{')).to.equal(null);
    });
    it('reads \\boxed without braces up to the next $ or line end', () => {
      expect(lastBoxed('$\\boxed 5$ end')).to.equal('5');
      expect(lastBoxed('\\boxed 12\nnext line')).to.equal('12');
    });
    it('ignores escaped braces and other macros starting with boxed', () => {
      expect(lastBoxed('\\boxed{\\{1,2\\}}')).to.equal('\\{1,2\\}');
      expect(lastBoxed('\\boxedx{3}')).to.equal(null);
      expect(lastBoxed('nothing here')).to.equal(null);
      expect(lastBoxed('\\boxed{}')).to.equal(null);
      expect(lastBoxed('\\boxed{ $ $ }')).to.equal(null);
    });
  });

  describe('lastAnswerTag', () => {
    it('takes the content of the last closed <answer> tag', () => {
      expect(lastAnswerTag('<answer>1</answer> then <ANSWER> 2 </ANSWER>')).to.equal(' 2 ');
      expect(lastAnswerTag('<answer>1</answer> then <answer>unclosed')).to.equal('1');
      expect(lastAnswerTag('no tags')).to.equal(null);
    });
  });

  describe('afterAnswerIs', () => {
    it('reads to the end of the sentence, keeping decimal points', () => {
      expect(afterAnswerIs('So the answer is 42.')).to.equal('42');
      expect(afterAnswerIs('so the answer is 3.75. Done')).to.equal('3.75');
      expect(afterAnswerIs('The answer is x+1\nThen more text')).to.equal('x+1');
    });
    it('takes a $…$ span, a \\(…\\) span, markdown emphasis and "Answer:"', () => {
      expect(afterAnswerIs('The final answer is $x^2$\nbye')).to.equal('x^2');
      expect(afterAnswerIs('the answer is \\(\\frac{3}{4}\\) indeed')).to.equal('\\frac{3}{4}');
      expect(afterAnswerIs('the answer is: **12**')).to.equal('12');
      expect(afterAnswerIs('**Answer:** $\\dfrac{3}{4}$.')).to.equal('\\dfrac{3}{4}');
    });
    it('uses the last marker', () => {
      expect(afterAnswerIs('The answer is 3. No wait, the answer is 5.')).to.equal('5');
      expect(afterAnswerIs('the answer is')).to.equal(null);
      expect(afterAnswerIs('nothing')).to.equal(null);
    });
  });

  describe('lastNumber', () => {
    it('finds the last number, with a sign and decimals', () => {
      expect(lastNumber('we get 3 apples and then 7 pears')).to.equal('7');
      expect(lastNumber('so x = -5.')).to.equal('-5');
      expect(lastNumber('value is 3.14.')).to.equal('3.14');
      expect(lastNumber('about .5 of it')).to.equal('0.5');
      expect(lastNumber('no digits')).to.equal(null);
    });
    it('drops thousands commas only when properly grouped', () => {
      expect(lastNumber('costs 1,234,567 dollars')).to.equal('1234567');
      expect(lastNumber('the pair (3,4)')).to.equal('4');
      expect(lastNumber('1,2345')).to.equal('2345');
      expect(lastNumber('12,345.5 m')).to.equal('12345.5');
      expect(lastNumber('3-5')).to.equal('5');
    });
    it('isThousands', () => {
      expect(isThousands('1,000')).to.equal(true);
      expect(isThousands('12,345,678')).to.equal(true);
      expect(isThousands('1,00')).to.equal(false);
      expect(isThousands('1234,567')).to.equal(false);
      expect(isThousands('1000')).to.equal(false);
    });
  });

  describe('extractMathAnswer (priority and switches)', () => {
    it('Minerva, then <answer>, then \\boxed, then "answer is", then the last number', () => {
      expect(extractMathAnswer('\\boxed{2}. The final answer is $3$. I hope it is correct.')).to.equal('3');
      expect(extractMathAnswer('\\boxed{2} <answer>9</answer>')).to.equal('9');
      expect(extractMathAnswer('<answer>The answer is \\boxed{7}</answer>')).to.equal('7');
      expect(extractMathAnswer('<answer>$ 12 $</answer> and then 5')).to.equal('12');
      expect(extractMathAnswer('Thinking about it, the answer is \\boxed{4}.')).to.equal('4');
      expect(extractMathAnswer('The answer is 6, I think 7 was wrong')).to.equal('6, I think 7 was wrong');
      expect(extractMathAnswer('we get 3 apples and then 7 pears')).to.equal('7');
    });
    it('each rule can be switched off', () => {
      const text = 'The final answer is $3$. I hope it is correct. \\boxed{2} and 8';
      expect(extractMathAnswer(text, { ...ALL_RULES, minerva: false })).to.equal('2');
      expect(extractMathAnswer(text, { ...ALL_RULES, minerva: false, boxed: false })).to.equal('3');
      expect(extractMathAnswer(text, { ...ALL_RULES, minerva: false, boxed: false, answerIs: false })).to.equal('8');
      expect(extractMathAnswer('we get 3 apples and then 7 pears', { ...ALL_RULES, lastNumber: false })).to.equal(null);
      expect(extractMathAnswer('<answer>9</answer>', { ...ALL_RULES, answerTags: false, lastNumber: false })).to.equal(
        null,
      );
    });
    it('is total: empty strings and non-strings give null', () => {
      expect(extractMathAnswer('')).to.equal(null);
      expect(extractMathAnswer(undefined as unknown as string)).to.equal(null);
    });
  });
  describe('lastIndexOfTail', () => {
    it('finds the last case-folded match, before `end` when given', () => {
      const text = 'See <ANSWER>4</Answer> then </answer>.';
      // "See <ANSWER>4" is 13 characters; "See <ANSWER>4</Answer> then " is 28
      expect(lastIndexOfTail(text, '</answer>', true)).to.equal(28);
      expect(lastIndexOfTail(text, '</answer>', true, 28)).to.equal(13);
      expect(lastIndexOfTail(text, '<answer>', true, 13)).to.equal(4);
      expect(lastIndexOfTail(text, '</answer>', false)).to.equal(28);
      expect(lastIndexOfTail(text, '</Answer>', false)).to.equal(13);
    });

    it('is -1 when a non-letter of the needle is nowhere before `end`', () => {
      expect(lastIndexOfTail('The ANSWER is 4', '</answer>', true)).to.equal(-1);
      expect(lastIndexOfTail('The ANSWER is 4', 'answer:', true)).to.equal(-1);
      expect(lastIndexOfTail('x </answer>', '</answer>', true, 2)).to.equal(-1);
      expect(lastIndexOfTail('</answer>', '</answer>', true, 0)).to.equal(-1);
      // the needle's non-letters are there but not in the needle's order: still no match
      expect(lastIndexOfTail('a: answer', 'answer:', true)).to.equal(-1);
    });

    it('widens its window over a long text, with non-ASCII letters before the match', () => {
      const filler = 'İstanbul, ÅNGSTRÖM. '.repeat(200); // 4 000 characters, "İ" lowercases to two
      expect(lastIndexOfTail(`${filler}ANSWER: 5`, 'answer:', true)).to.equal(4000);
      expect(lastIndexOfTail(`ANSWER: 5 ${filler}`, 'answer:', true)).to.equal(0);
      expect(lastIndexOfTail(`${filler}answer 5`, 'answer:', true)).to.equal(-1);
    });
  });
});
