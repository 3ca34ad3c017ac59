/** One line of metrics: a step's values for one agent (or for the cohort when `agent` is null). */
export interface MetricsRecord {
  /**
   * Updates completed when the values were taken (TRL's `state.global_step`): a `train` record written
   * after the k-th update has step k (the first is 1); an evaluation after it is also step k, the one
   * before training step 0.
   */
  readonly step: number;
  /** Agent index, or null for cohort-level metrics (e.g. `pair/kappa`). */
  readonly agent: number | null;
  /** `train` for training-step metrics, `eval` for held-out evaluation. */
  readonly phase: 'train' | 'eval';
  /** Namespaced metric values (`reward/mean`, `eval/accuracy`...). Finite numbers only. */
  readonly metrics: Readonly<Record<string, number>>;
}

/** The run a sink writes for, as {@link MetricsSink.start} receives it. Frozen. */
export interface MetricsRun {
  /** Absolute path of the run directory (`corl train --out`); a sink may keep its files there. */
  readonly dir: string;
  /** The run's resolved config (defaults applied), as config.json of the run directory holds it. */
  readonly config: unknown;
  /** The agents' names, in agent order (`MetricsRecord.agent` indexes it). */
  readonly agents: readonly string[];
  /**
   * Null for a new run. On a resume, the step of the checkpoint it continues from: every record
   * with `step` above it that the sink received before the stop comes again, identically, so a
   * sink that keeps records across processes drops those it holds past this step (metrics.jsonl
   * is cut back the same way). A sink that appends lines to a file can leave that to
   * `RunAppendFile` (corl's main module), as `corl:jsonl` does.
   */
  readonly resumeAt: number | null;
}

/**
 * Receives metrics as the run produces them. The run's own `metrics.jsonl` is always written;
 * sinks add destinations (another file, a dashboard). Writes are in step order.
 */
export interface MetricsSink {
  /**
   * Called once by a training run before the first write (test kits and other callers may skip
   * it: a sink must work without it). Optional.
   */
  start?(run: MetricsRun): void | Promise<void>;
  /** Record one line. */
  write(record: MetricsRecord): void | Promise<void>;
  /** Flush and close. Optional. */
  close?(): void | Promise<void>;
}
