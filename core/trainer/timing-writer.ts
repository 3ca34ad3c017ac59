// timing.jsonl: how long each step's phases took. Monitoring only: nothing reads it back, and a
// resumed run's figures differ from an uninterrupted one's (wall-clock times), unlike its metrics.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Milliseconds of one step's phases. */
export interface StepTiming {
  readonly step: number;
  readonly sampleMs: number;
  readonly rewardMs: number;
  readonly updateMs: number;
  readonly evalMs: number;
  readonly checkpointMs: number;
  readonly totalMs: number;
}

/** Appends one line per step to the run's timing.jsonl. */
export class TimingWriter {
  private readonly file: string;

  constructor(runDir: string) {
    this.file = path.join(runDir, 'timing.jsonl');
  }

  write(t: StepTiming): void {
    fs.appendFileSync(this.file, JSON.stringify(t) + '\n');
  }
}
