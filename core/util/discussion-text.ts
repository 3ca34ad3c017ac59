/**
 * A chat-friendly discussion prompt: the question, then each neighbour's previous answer (or whole
 * solution), then a request to answer again (turns as `NeighbourTurn` of core/contracts/task.ts). Tasks without a format of their own (`corl:jsonl`,
 * `corl:inline`, and third-party tasks without `discussionPrompt`) use it. Agents are numbered from 1.
 */
export function chatDiscussionPrompt(
  prompt: string,
  turns: readonly { readonly agent: number; readonly answer: string | null; readonly solution?: string }[],
): string {
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
