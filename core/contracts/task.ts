import type { InjectionToken } from 'tsyringe';
import type { GroundTruth, Problem } from './problem';

/** The problems of a task, split, with their references kept apart. */
export interface TaskData {
  /** Problems to train on, in a fixed order (the trainer shuffles them with the data seed). */
  readonly train: readonly Problem[];
  /** Held-out problems for evaluation; never trained on. */
  readonly heldOut: readonly Problem[];
  /**
   * Validation problems, disjoint from both splits: settings (sampling, budgets, corpus options)
   * are chosen on these (`eval.split: "validation"`), so the held-out split stays unseen. Optional.
   */
  readonly validation?: readonly Problem[];
  /** References of train and held-out problems, keyed by problem id. */
  readonly groundTruth: GroundTruth;
  /**
   * Texts for pretraining (`corl pretrain`, SFT), each a whole prompt + worked solution.
   * Tasks without a pretraining corpus omit it.
   */
  readonly pretrainText?: readonly string[];
  /**
   * For each pretraining text, how many of its leading characters are prompt (excluded from the
   * the loss, as in SFT). Aligned with `pretrainText`; absent means the whole text is trained on.
   */
  readonly pretrainPromptLengths?: readonly number[];
}

/** A neighbour's turn of the previous round, as a discussion prompt quotes it. */
export interface NeighbourTurn {
  /** The neighbour's agent index. */
  readonly agent: number;
  /** Its extracted answer (null: none could be parsed). */
  readonly answer: string | null;
  /**
   * Its whole completion, when the interaction shares solutions (`share: "solution"`); absent when it
   * shares answers only. May be shortened from the front (to `…` + its end) to fit the policy's context.
   */
  readonly solution?: string;
}

/** A source of problems. Deterministic: the same options give the same data. */
export interface Task {
  /** Loads (or generates) the splits. Called once per run. */
  load(): Promise<TaskData>;
  /**
   * The prompt of a discussion round: `prompt` (the agent's view of the problem) with the neighbours'
   * previous turns, in the task's own prompt format (the one its models were trained to read).
   * Optional: without it the trainer uses a plain chat text ("Other agents answered: …"). Pure.
   */
  discussionPrompt?(prompt: string, turns: readonly NeighbourTurn[]): string;
  /**
   * The prompt of an evaluation turn (an interaction's `evaluate` round, CoMAS): `prompt` with one
   * other agent's turn to check, in the task's format. Optional: without it the trainer uses
   * `discussionPrompt` with that one turn when the task has one (the evaluator answers again after
   * reading it), else a plain chat text asking for the solution's errors and an answer of its own. Pure.
   */
  evaluationPrompt?(prompt: string, turn: NeighbourTurn): string;
}

/** Injection token of the run's {@link Task} (its data holds the references): registered only in the container of a reward source that declares `readsGroundTruth`. */
export const TASK: InjectionToken<Task> = 'corl.Task';
