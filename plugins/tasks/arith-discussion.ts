// Discussion turns in corl:arith's pretraining corpus: the prompt carries the answers that
// neighbours gave in an earlier round (right in a configured share, otherwise a slipped wrong
// answer), and the writer, whose own chain disagrees with them, sometimes adopts their answer.
// So a model pretrained on it reads such prompts and is swayed by them, for better (a right
// neighbour) or worse (a wrong one), before any interaction reward teaches it when to be.
import type { NeighbourTurn } from '../../core/contracts/task';
import type { Rng } from '../../core/util/rng';
import type { ArithOptions, ArithProblem, ArithStep } from './arith';
import { writeChain, type SlipRates, type WrittenChain } from './arith-slips';

/** How discussion turns are drawn: corl:arith's `pretrain.discussion` option. */
export type DiscussionOptions = ArithOptions['pretrain']['discussion'];

/** The prompt of a discussion turn: the neighbours' answers of the previous round, then the problem. */
export function arithDiscussionPrompt(prompt: string, answers: readonly string[]): string {
  return `Peers: ${answers.join(', ')}. ${prompt}`;
}

/**
 * corl:arith's `discussionPrompt`: the corpus format, quoting each neighbour's answer (whole
 * solutions are not quoted: the corpus never shows them, so the embedded models could not read them).
 * Neighbours without an integer answer are left out; with none left, the plain prompt.
 */
export function arithRoundPrompt(prompt: string, turns: readonly NeighbourTurn[]): string {
  const answers = turns.map((t) => t.answer?.trim() ?? '').filter((a) => /^-?\d+$/.test(a));
  return answers.length > 0 ? arithDiscussionPrompt(prompt, answers) : prompt;
}

/** One discussion turn of the corpus. */
export interface DiscussionTurn {
  /** The neighbours' answers quoted in the prompt. */
  readonly answers: readonly number[];
  /** The writer's chain as written (after adopting, when it did). */
  readonly chain: WrittenChain;
  /** Whether the writer replaced its own result by the neighbours' plurality. */
  readonly adopted: boolean;
}

/** A wrong answer a slipping neighbour could give (its own slipped chain; a one-digit slip if none comes out wrong). */
function wrongAnswer(p: ArithProblem, rates: SlipRates, rng: Rng): number {
  for (let tries = 0; tries < 16; tries++) {
    const c = writeChain(p, rates, rng);
    if (c.answer !== p.answer) return c.answer;
  }
  const last = p.answer % 10;
  return p.answer - last + (last === 9 ? 8 : last + 1);
}

/** The plurality of `xs` (ties to the first seen). */
function plurality(xs: readonly number[]): number {
  const counts = new Map<number, number>();
  let best = xs[0]!;
  for (const x of xs) {
    const c = (counts.get(x) ?? 0) + 1;
    counts.set(x, c);
    if (c > counts.get(best)!) best = x;
  }
  return best;
}

/** Draw one discussion turn of `p`. */
export function discussionTurn(p: ArithProblem, rates: SlipRates, o: DiscussionOptions, rng: Rng): DiscussionTurn {
  const n = o.neighbours.min + rng.int(o.neighbours.max - o.neighbours.min + 1);
  const answers: number[] = [];
  for (let i = 0; i < n; i++) answers.push(rng.next() < o.neighbourRight ? p.answer : wrongAnswer(p, rates, rng));
  const own = writeChain(p, rates, rng);
  const target = plurality(answers);
  if (own.answer === target || !(rng.next() < o.adopt)) return { answers, chain: own, adopted: false };
  // Adopting: the writer's last step ends at the neighbours' answer, and that is what it boxes.
  const steps: ArithStep[] = own.steps.map((s, i) => (i === own.steps.length - 1 ? { ...s, result: target } : s));
  return { answers, chain: { ...own, steps, answer: target }, adopted: true };
}
