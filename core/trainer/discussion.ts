// Discussion rounds: each agent's view of the problem with its neighbours' previous turns, in the task's
// format, shortened to the policy's context (docs/guide/writing-an-interaction.md), and the one routine
// that samples a round, for a training step and for an evaluation.
import type { Completion } from '../contracts/completion';
import type { Interaction, InteractionShare, TurnRef } from '../contracts/interaction';
import type { ContextWindow, SampleRequest, SamplingOptions } from '../contracts/policy';
import type { Problem } from '../contracts/problem';
import type { NeighbourTurn } from '../contracts/task';
import { CorlError } from '../errors';
import { sampleChecked, type Agent, type RunContext } from './run-context';

/** A task's discussion prompt format (`Task.discussionPrompt`, or the chat default). */
export type DiscussionFormat = (prompt: string, turns: readonly NeighbourTurn[]) => string;

/** One neighbour's turn of the previous round, whole. */
export interface PreviousTurn {
  readonly agent: number;
  /** Its extracted answer (null: none parsed). */
  readonly answer: string | null;
  /** Its completion text. */
  readonly text: string;
}

/** How a round prompt is built. */
export interface RoundPromptOptions {
  /** Quote answers only, or whole solutions. */
  readonly share: InteractionShare;
  /** The policy's context window; absent: the prompt is sent whole. */
  readonly window?: ContextWindow;
  /** Completion tokens the prompt must leave room for (the sampling `maxTokens`). */
  readonly maxTokens: number;
  /** Where the prompt is for, in an error message (e.g. `agents[1] round 2 of problem "p7"`). */
  readonly where: string;
}

/** The mark that begins a solution shortened from the front. */
export const ELLIPSIS = '…';

/** A solution cut to its last `chars` characters (the end holds the final answer), marked by {@link ELLIPSIS}. */
export function tail(text: string, chars: number): string {
  return text.length <= chars ? text : ELLIPSIS + text.slice(text.length - chars);
}

/**
 * The prompt of one agent in one discussion round. With a context window, the prompt must leave
 * `maxTokens` free: whole solutions are cut from the front, all to the same length (the largest that
 * fits), down to answers only; when even answers only do not fit it throws CORL_ERR_INTERACTION_CONTEXT.
 */
export function roundPrompt(
  format: DiscussionFormat,
  prompt: string,
  previous: readonly PreviousTurn[],
  o: RoundPromptOptions,
): string {
  const build = (chars: number | null): string =>
    format(
      prompt,
      previous.map((t) =>
        chars === null
          ? { agent: t.agent, answer: t.answer }
          : { agent: t.agent, answer: t.answer, solution: tail(t.text, chars) },
      ),
    );
  const longest = Math.max(0, ...previous.map((t) => t.text.length));
  const whole = build(o.share === 'solution' ? longest : null);
  if (!o.window) return whole;
  const budget = o.window.tokens - o.maxTokens;
  const fits = (p: string): boolean => o.window!.count(p) <= budget;
  if (fits(whole)) return whole;
  if (o.share === 'solution') {
    // The largest common length that fits (the count grows with the length kept).
    let lo = 1;
    let hi = longest - 1;
    let best: string | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const p = build(mid);
      if (fits(p)) {
        best = p;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (best !== undefined) return best;
    const answers = build(null);
    if (fits(answers)) return answers;
  }
  const shortest = build(null);
  throw new CorlError(
    'CORL_ERR_INTERACTION_CONTEXT',
    `expected the discussion prompt of ${o.where} to leave ${o.maxTokens} tokens free in the policy's context of ${o.window.tokens}, got a prompt of ${o.window.count(shortest)} tokens even with answers only`,
    {
      where: o.where,
      hint: 'lower the sampling maxTokens, give agents fewer neighbours (another topology), or use a policy with a longer context',
    },
  );
}

/** What a round's prompts need of the interaction: its share, and optionally its turn kinds and reads. */
export type TurnPlan = Pick<Interaction, 'share' | 'turn' | 'reads'>;

/** The formats a round's prompt may be built with. */
export interface TurnFormats {
  readonly discussion: DiscussionFormat;
  readonly evaluation: DiscussionFormat;
}

/**
 * The earlier turns agent `agent` reads in round `round` (the interaction's `reads`, or its neighbours'
 * turns of round − 1), checked: each of an earlier round and an agent of the cohort, exactly one for an
 * `evaluate` round; otherwise CORL_ERR_INTERACTION_OUTPUT.
 */
export function turnsRead(
  plan: TurnPlan,
  round: number,
  agent: number,
  neighbours: readonly (readonly number[])[],
  use: string,
): readonly TurnRef[] {
  const refs = plan.reads
    ? plan.reads(round, agent, neighbours)
    : neighbours[agent]!.map((m) => ({ round: round - 1, agent: m }));
  const N = neighbours.length;
  const evaluate = (plan.turn?.(round) ?? 'answer') === 'evaluate';
  const ok =
    Array.isArray(refs) &&
    refs.every(
      (t) =>
        Number.isInteger(t?.round) &&
        t.round >= 0 &&
        t.round < round &&
        Number.isInteger(t.agent) &&
        t.agent >= 0 &&
        t.agent < N,
    ) &&
    (!evaluate || refs.length === 1);
  if (!ok)
    throw new CorlError(
      'CORL_ERR_INTERACTION_OUTPUT',
      `expected "${use}" to name ${evaluate ? 'exactly one earlier turn' : 'earlier turns'} (rounds 0..${round - 1}, agents 0..${N - 1}) for agent ${agent} to read in round ${round}, got ${JSON.stringify(refs)?.slice(0, 120)}`,
      { where: 'interaction' },
    );
  return refs;
}

/** The prompt of agent `agent` in round `round`: the turns it reads, in the format of the round's kind. */
export function turnPrompt(
  plan: TurnPlan,
  formats: TurnFormats,
  prompt: string,
  read: readonly PreviousTurn[],
  round: number,
  o: Omit<RoundPromptOptions, 'share'>,
): string {
  const evaluate = (plan.turn?.(round) ?? 'answer') === 'evaluate';
  return roundPrompt(evaluate ? formats.evaluation : formats.discussion, prompt, read, { ...o, share: plan.share });
}

/** Who discusses and how: the same for a training step's rounds and an evaluation's. */
export interface DiscussionSetup {
  readonly agents: readonly Agent[];
  readonly interaction: TurnPlan;
  /** The interaction's name in the config, for messages. */
  readonly use: string;
  readonly neighbours: readonly (readonly number[])[];
  readonly formats: TurnFormats;
}

/** One round to sample: its problems, debates, what each debate reads, and the sampling settings. */
export interface RoundToSample {
  /** The round, r ≥ 1. */
  readonly round: number;
  readonly problems: readonly Problem[];
  /** Parallel debates per problem (K in training, `eval.samples` in evaluation). */
  readonly debates: number;
  /** Agent `agent`'s own request for problem `i` (its view: id, prompt, images); the round's prompt replaces its prompt. */
  request(agent: number, i: number): SampleRequest;
  /** The text and extracted answer of agent `agent`'s turn of round `round` in debate `k` of problem `i`. */
  earlier(
    round: number,
    agent: number,
    i: number,
    k: number,
  ): { readonly text: string; readonly answer: string | null };
  /** Sampling settings of every agent (its `maxTokens` is what a prompt must leave room for). */
  readonly sampling: Omit<SamplingOptions, 'n' | 'seed'>;
  /** The seed of agent `agent`'s samples of this round. */
  seed(agent: Agent): number;
  /** Debate `k` of problem `p` as messages name it (e.g. `agents[1] debate 3 of problem "p7", round 2 at step 5`). */
  where(agent: Agent, p: Problem, k: number): string;
  /** The sampling call as messages name it. */
  readonly what: string;
}

/**
 * One discussion round, for training and evaluation alike: debate k of every agent reads the turns
 * of the same debate the interaction names (by default the neighbours' turns of round r − 1), in the
 * format of the round's kind, and samples one completion from that prompt. Returns the prompts and
 * completions, `[agent][problem][debate]`.
 */
export async function discussionRound(
  setup: DiscussionSetup,
  r: RoundToSample,
): Promise<{ prompts: string[][][]; completions: Completion[][][] }> {
  const { interaction, formats } = setup;
  const K = r.debates;
  const prompts = setup.agents.map((a) => {
    const window = a.policy.contextWindow?.();
    const refs = turnsRead(interaction, r.round, a.index, setup.neighbours, setup.use);
    return r.problems.map((p, i) =>
      Array.from({ length: K }, (_, k) =>
        turnPrompt(
          interaction,
          formats,
          r.request(a.index, i).prompt,
          refs.map((t) => ({ agent: t.agent, ...pick(r.earlier(t.round, t.agent, i, k)) })),
          r.round,
          { window, maxTokens: r.sampling.maxTokens, where: r.where(a, p, k) },
        ),
      ),
    );
  });
  const completions = await Promise.all(
    setup.agents.map(async (a) => {
      const requests = r.problems.flatMap((_, i) =>
        prompts[a.index]![i]!.map((prompt) => ({ ...r.request(a.index, i), prompt })),
      );
      const flat = await sampleChecked(a, requests, { ...r.sampling, n: 1, seed: r.seed(a) }, r.what);
      return r.problems.map((_, i) => flat.slice(i * K, (i + 1) * K).map((g) => g[0]!));
    }),
  );
  return { prompts, completions };
}

/** The text and answer of a turn, and nothing else. */
function pick(t: { readonly text: string; readonly answer: string | null }): { text: string; answer: string | null } {
  return { answer: t.answer, text: t.text };
}

/** A run's discussion setup: its agents, interaction, neighbours and the task's formats. */
export function discussionSetup(
  ctx: Pick<RunContext, 'agents' | 'neighbours' | 'discussionPrompt' | 'evaluationPrompt' | 'loaded'> & {
    readonly interaction: TurnPlan;
  },
): DiscussionSetup {
  return {
    agents: ctx.agents,
    interaction: ctx.interaction,
    use: ctx.loaded.config.interaction?.use ?? 'none',
    neighbours: ctx.neighbours,
    formats: { discussion: ctx.discussionPrompt, evaluation: ctx.evaluationPrompt },
  };
}
