/** One line of metrics: a step's values for one agent (or for the cohort when `agent` is null). */
export interface MetricsRecord {
  /** Zero-based training step the values belong to (evaluation before training uses step 0). */
  readonly step: number;
  /** Agent index, or null for cohort-level metrics (e.g. `pair/kappa`). */
  readonly agent: number | null;
  /** `train` for training-step metrics, `eval` for held-out evaluation. */
  readonly phase: 'train' | 'eval';
  /** Namespaced metric values (`reward/mean`, `eval/accuracy`...). Finite numbers only. */
  readonly metrics: Readonly<Record<string, number>>;
}

/**
 * Receives metrics as the run produces them. The run's own `metrics.jsonl` is always written;
 * sinks add destinations (another file, a dashboard). Writes are in step order.
 */
export interface MetricsSink {
  /** Record one line. */
  write(record: MetricsRecord): void | Promise<void>;
  /** Flush and close. Optional. */
  close?(): void | Promise<void>;
}
