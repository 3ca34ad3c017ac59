import type { InjectionToken } from 'tsyringe';

/**
 * One problem as every plugin sees it. The reference answer is deliberately absent: it travels
 * beside the problem in {@link GroundTruth}, which only reward sources that declare
 * `readsGroundTruth` (and the evaluator, for monitoring) ever receive.
 */
export interface Problem {
  /** Stable identifier, unique within a task; variants and ground truth are aligned by it. */
  readonly id: string;
  /** The canonical prompt text given to a policy. */
  readonly prompt: string;
  /**
   * Row-aligned surface phrasings of the same problem (same id, same reference answer), e.g.
   * produced by `corl rephrase`. `corl:rephrase` hands variant `i` to the agents assigned to it.
   */
  readonly variants?: readonly string[];
  /**
   * Local image files (PNG, JPEG, GIF or WebP) for multimodal problems, absolute or relative to the
   * config. Chat backends send them as image parts after the prompt; text-only backends refuse them.
   */
  readonly images?: readonly string[];
  /**
   * Inputs a code task runs candidate programs on (expected outputs are never here: they are
   * ground truth). Each entry is a list of argument literals for one call.
   */
  readonly testInputs?: readonly (readonly string[])[];
  /** Free-form facts about the problem (difficulty, source, function name...). Never the answer. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** The reference solution of one problem. */
export interface Reference {
  /** The reference final answer, as text (e.g. `\frac{1}{2}`, `42`, `C`). */
  readonly answer: string;
  /** For code tasks: the expected output of each entry of `Problem.testInputs`, as `repr` text. */
  readonly expectedOutputs?: readonly string[];
  /** The full worked solution, when the dataset has one (used for pretraining, `corl pretrain`). */
  readonly solution?: string;
}

/**
 * Read access to the references of a task, keyed by problem id. Handed only to reward sources whose
 * manifest declares `readsGroundTruth` (in their container), and to the trainer's evaluator.
 */
export interface GroundTruth {
  /** The reference of a problem, or undefined if the task has none for it. */
  get(problemId: string): Reference | undefined;
  /** Number of problems that have a reference. */
  readonly size: number;
}

/** Injection token of the run's {@link GroundTruth}: registered only in the container of a reward source that declares `readsGroundTruth`. */
export const GROUND_TRUTH: InjectionToken<GroundTruth> = 'corl.GroundTruth';

/** A {@link GroundTruth} over a map; the usual implementation. */
export class MapGroundTruth implements GroundTruth {
  private readonly refs: ReadonlyMap<string, Reference>;
  constructor(refs: Iterable<readonly [string, Reference]>) {
    this.refs = new Map(refs);
  }
  get(problemId: string): Reference | undefined {
    return this.refs.get(problemId);
  }
  get size(): number {
    return this.refs.size;
  }
}
