// The one grader: a completion is right when its answer key (the pipeline's AnswerKeys: the run's
// extractor and the grading equivalence, cached) matches its problem's reference key by the
// `matches` rule (core/voting/match.ts). Training's monitoring (train/accuracy, label/accuracy,
// reward/accuracy), `corl serve`'s grading of a label-free reward against the references trainers
// send, evaluation (the trainer's and `corl eval`'s), pretraining's held-out pass@1 and the rewards
// that read ground truth (`corl:ground-truth`, `corl:gt-verifier`) grade with it; `corl agreement` and the report read the verdicts it wrote.
import type { AnswerExtractor } from '../contracts/answer-extractor';
import type { Equivalence } from '../contracts/equivalence';
import type { GroundTruth, Problem, Reference } from '../contracts/problem';
import type { WorkOptions } from '../contracts/work';
import { matches } from '../voting/match';
import { AnswerKeys } from './answer-keys';

/** The key a reference grades against: its answer's key under `equivalence` (null without a reference). */
export function referenceKey(reference: Reference | undefined, equivalence: Pick<Equivalence, 'key'>): string | null {
  return reference ? equivalence.key(reference.answer) : null;
}

/**
 * Whether each answer key is right against the reference key `target` (null: no reference, so
 * nothing is right), by the `matches` rule. `work` goes to every `equal`.
 */
export async function gradeKeys(
  keys: readonly (string | null)[],
  target: string | null,
  equivalence: Pick<Equivalence, 'equal'>,
  work?: WorkOptions,
): Promise<boolean[]> {
  const right: boolean[] = [];
  for (const key of keys) right.push(await matches(key, target, equivalence, work));
  return right;
}

/** A group of texts graded: the extractor's answers, their keys, and whether each is right. */
export interface Graded {
  readonly answers: readonly (string | null)[];
  readonly keys: readonly (string | null)[];
  readonly correct: readonly boolean[];
}

/** A run's grader against its ground truth (monitoring only: nothing it says feeds a reward). */
export class Grader {
  /** The answer keys it grades with (the grading equivalence's, never the reward source's). */
  readonly keys: AnswerKeys;
  private readonly targets = new Map<string, string | null>();

  constructor(
    extractor: AnswerExtractor,
    /** The grading equivalence (`RunContext.grading`, an instance no label-free reward source holds). */
    readonly equivalence: Equivalence,
    private readonly groundTruth: GroundTruth,
  ) {
    this.keys = new AnswerKeys(extractor, equivalence);
  }

  /** The key of a problem's reference answer (null when it has none), computed once per problem. */
  target(problemId: string): string | null {
    if (!this.targets.has(problemId))
      this.targets.set(problemId, referenceKey(this.groundTruth.get(problemId), this.equivalence));
    return this.targets.get(problemId)!;
  }

  /** The reference answer as the task gives it (null when it has none). */
  reference(problemId: string): string | null {
    return this.groundTruth.get(problemId)?.answer ?? null;
  }

  /** Whether answer key `key` is right for problem `problemId` (false when it has no reference). */
  async right(key: string | null, problemId: string): Promise<boolean> {
    return (await gradeKeys([key], this.target(problemId), this.equivalence))[0]!;
  }

  /** The answers, keys and verdicts of `texts`, answers to `problem`. */
  async grade(problem: Pick<Problem, 'id'>, texts: readonly string[]): Promise<Graded> {
    const found = texts.map((t) => this.keys.of(t));
    const keys = found.map((f) => f.key);
    return {
      answers: found.map((f) => f.answer),
      keys,
      correct: await gradeKeys(keys, this.target(problem.id), this.equivalence),
    };
  }
}
