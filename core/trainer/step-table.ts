// A training step's data as one table (docs/architecture.md, "One training step"): a row per (agent,
// round, problem, sample) and group views, one group per agent × round × problem (a GRPO group). Each
// phase of the step fills columns: sampling the prompt and completion, answer keys the answer and key,
// scoring the score, credit the reward, advantages the advantage. A step without an interaction has one
// round, round 0.
import type { Completion } from '../contracts/completion';
import type { Problem } from '../contracts/problem';
import type { ScoredGroup } from '../reward/pipeline';

/** One sample: agent `agent`'s completion `sample` of problem `problem` (its index in the batch) in round `round`. */
export interface StepRow {
  readonly agent: number;
  readonly round: number;
  readonly problem: number;
  readonly sample: number;
  /** The prompt it was sampled from. */
  readonly prompt: string;
  readonly completion: Completion;
  /** The run extractor's answer (null: none parsed); filled by the answer keys. */
  answer: string | null;
  /** The answer key it votes with (null: no answer); filled by the answer keys. */
  key: string | null;
  /** The reward source's score (in a discussion, the verifier's); filled by scoring. */
  score: number;
  /** Its reward: the interaction's credit of the scores (the score itself without an interaction). */
  reward: number;
  /** Its advantage within its group. */
  advantage: number;
}

/** One agent's samples of one problem in one round: what the reward source scores and GRPO normalizes. */
export interface StepGroup {
  readonly agent: number;
  readonly round: number;
  readonly problem: number;
  /** The rows, sample 0 first. */
  readonly rows: readonly StepRow[];
  /** The reward source's checked result (its rewards are the rows' scores); filled by scoring. */
  scored?: ScoredGroup;
}

/** The table of one step: `agents` agents, the batch's problems, `samples` samples per group. */
export class StepTable {
  private readonly all: StepGroup[] = [];
  private count = 0;

  constructor(
    readonly problems: readonly Problem[],
    readonly agents: number,
    readonly samples: number,
  ) {}

  /** Rounds added so far. */
  get rounds(): number {
    return this.count;
  }

  /**
   * Add the next round: `prompt(a, i, k)` and `completion(a, i, k)` of every agent, problem and sample.
   * The other columns start empty (null keys, NaN numbers) until their phase fills them.
   */
  addRound(prompt: Cell<string>, completion: Cell<Completion>): void {
    const round = this.count++;
    for (let agent = 0; agent < this.agents; agent++)
      for (let problem = 0; problem < this.problems.length; problem++) {
        const rows: StepRow[] = [];
        for (let sample = 0; sample < this.samples; sample++)
          rows.push({
            agent,
            round,
            problem,
            sample,
            prompt: prompt(agent, problem, sample),
            completion: completion(agent, problem, sample),
            answer: null,
            key: null,
            score: NaN,
            reward: NaN,
            advantage: NaN,
          });
        this.all.push({ agent, round, problem, rows });
      }
  }

  /** The group of `agent`, `round` and problem `problem`. */
  group(agent: number, round: number, problem: number): StepGroup {
    const g = this.all[(round * this.agents + agent) * this.problems.length + problem];
    if (!g || g.agent !== agent || g.round !== round || g.problem !== problem)
      throw new RangeError(`no group of agent ${agent}, round ${round}, problem ${problem} in this step`);
    return g;
  }

  /** The problem of a group or row. */
  problemOf(at: { readonly problem: number }): Problem {
    const p = this.problems[at.problem];
    if (!p) throw new RangeError(`no problem ${at.problem} in this step`);
    return p;
  }

  /** The groups of one round, agent by agent, problem by problem. */
  roundGroups(round: number): readonly StepGroup[] {
    const size = this.agents * this.problems.length;
    return this.all.slice(round * size, (round + 1) * size);
  }

  /** One agent's groups, round by round, problem by problem: the order its advantages, update and metrics take. */
  agentGroups(agent: number): readonly StepGroup[] {
    return this.all.filter((g) => g.agent === agent);
  }

  /** The groups of one problem, round by round, agent by agent. */
  problemGroups(problem: number): readonly StepGroup[] {
    return this.all.filter((g) => g.problem === problem);
  }
}

/** A value per (agent, problem, sample). */
export type Cell<T> = (agent: number, problem: number, sample: number) => T;

/**
 * The rows of a group that train: all of them, or with `trainer.trainSamples` = n > 0 (TTRL's
 * vote-on-more split) the first n of its M = groupSize samples, whose label was voted over all M.
 */
export function trainedRows(g: StepGroup, n: number): readonly StepRow[] {
  return n > 0 ? g.rows.slice(0, n) : g.rows;
}
