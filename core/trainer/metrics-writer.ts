// Where a run's metrics records go: metrics.jsonl of the run directory, then every metrics sink of
// the config, in order. Records are frozen first, so no sink can change what the next one gets.
import type { MetricsRecord, MetricsRun, MetricsSink } from '../contracts/metrics-sink';
import { deepFreeze } from '../util/fs';
import type { RunDirectory } from './run-dir';

/** Writes metrics records to the run and its sinks. */
export class MetricsWriter {
  constructor(
    private readonly run: RunDirectory,
    private readonly sinks: readonly MetricsSink[],
  ) {}

  /** Tell every sink which run it writes for (and, on a resume, the checkpoint's step); before the first write. */
  async start(run: MetricsRun): Promise<void> {
    deepFreeze(run);
    for (const s of this.sinks) await s.start?.(run);
  }

  async write(record: MetricsRecord): Promise<void> {
    deepFreeze(record);
    this.run.appendMetrics(record);
    for (const s of this.sinks) await s.write(record);
  }
}
