// The default prompts of a discussion: what a task without a format of its own (`corl:jsonl`,
// `corl:inline`, a third-party task without `discussionPrompt`/`evaluationPrompt`) shows an agent of
// its neighbours' previous turns. Plain chat text; agents are numbered from 1.
import type { NeighbourTurn } from '../contracts/task';

/**
 * A chat-friendly discussion prompt: the question, then each neighbour's previous answer (or whole
 * solution), then a request to answer again. The default of `Task.discussionPrompt`.
 */
export function chatDiscussionPrompt(prompt: string, turns: readonly NeighbourTurn[]): string {
  if (turns.length === 0) return prompt;
  const quoted = turns.map((t) => {
    const answer = t.answer ?? '(no answer)';
    return t.solution !== undefined
      ? `Agent ${t.agent + 1}'s solution (answer: ${answer}):\n${t.solution}`
      : `Agent ${t.agent + 1}: ${answer}`;
  });
  return (
    `${prompt}\n\nOther agents answered this question in the previous round:\n${quoted.join('\n\n')}\n\n` +
    'Consider their reasoning and answers, then solve the question again and give your own final answer.'
  );
}

/**
 * A chat-friendly evaluation prompt (an interaction's `evaluate` turn, CoMAS): the question, one other
 * agent's solution (or answer), and a request to list its errors and end with an answer of one's own.
 * Tasks without `evaluationPrompt` or `discussionPrompt` use it.
 */
export function chatEvaluationPrompt(prompt: string, turn: NeighbourTurn): string {
  const answer = turn.answer ?? '(no answer)';
  const quoted =
    turn.solution !== undefined
      ? `Agent ${turn.agent + 1}'s solution (answer: ${answer}):\n${turn.solution}`
      : `Agent ${turn.agent + 1}'s answer: ${answer}`;
  return (
    `${prompt}\n\nCheck another agent's work on this question.\n\n${quoted}\n\n` +
    'List every error you find in it and say briefly why each is wrong; do not retell the parts that are right. ' +
    'Then solve the question yourself and give your own final answer.'
  );
}
