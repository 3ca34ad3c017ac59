// Where a run's metrics records go: metrics.jsonl of the run directory, then every metrics sink of
// the config, in order (a sealed run's evaluation records go to metrics.jsonl only, sealed). Records are frozen first, so no sink can change what the next one gets.
import type { MetricsRecord, MetricsRun, MetricsSink } from '../contracts/metrics-sink';
import { CorlError, errorLine, isCorlError } from '../errors';
import { deepFreeze } from '../contracts/frozen';
import type { RunDirectory } from './run-dir';

/** Writes metrics records to the run and its sinks. */
export class MetricsWriter {
  constructor(
    private readonly run: RunDirectory,
    private readonly sinks: readonly MetricsSink[],
    /** The sinks' plugin names (the config's `metrics[i].use`), for messages. */
    private readonly names: readonly string[] = [],
  ) {}

  /** Tell every sink which run it writes for (and, on a resume, the checkpoint's step); before the first write. */
  async start(run: MetricsRun): Promise<void> {
    deepFreeze(run);
    for (const [i, s] of this.sinks.entries()) {
      try {
        await s.start?.(run);
      } catch (e) {
        throw sinkFailure(e, i, this.names[i], 'when the run started');
      }
    }
  }

  async write(record: MetricsRecord): Promise<void> {
    deepFreeze(record);
    this.run.appendMetrics(record);
    // a sealed run's evaluations stay in its sealed lines: no sink (TensorBoard, wandb, a file) gets them
    if (record.phase === 'eval' && this.run.sealed) return;
    for (const [i, s] of this.sinks.entries()) {
      try {
        await s.write(record);
      } catch (e) {
        throw sinkFailure(e, i, this.names[i], `writing the record of step ${record.step}`);
      }
    }
  }
}

/** A sink's own error, coded (a coded one passes as it is): its first line, never its stack. */
function sinkFailure(e: unknown, index: number, name: string | undefined, what: string): CorlError {
  if (isCorlError(e)) return e;
  const sink = name ? `"${name}"` : `metrics sink ${index}`;
  return new CorlError(
    'CORL_ERR_RUN_SINK',
    `expected ${sink} to accept the run's records, got an error ${what}: ${errorLine(e)}`,
    {
      where: `metrics[${index}]`,
      hint: "fix what the error names (usually the sink's path), then resume the run with corl train --resume",
    },
  );
}
