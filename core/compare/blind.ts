import type { ProgressReporter, StepSummary } from '../trainer/progress';

/**
 * A progress display that shows no evaluation result: under a plan the held-out split is read only
 * at the plan's looks, so the per-step line carries no eval accuracy and each evaluation is
 * announced without its numbers.
 */
export class BlindProgress implements ProgressReporter {
  constructor(private readonly inner: ProgressReporter) {}

  start(total: number, from: number, label: string): void {
    this.inner.start(total, from, label);
  }

  step(s: StepSummary): void {
    this.inner.step({ ...s, evalAccuracy: [] });
  }

  note(line: string): void {
    // a sealed run's trainer already hides its numbers
    const m = line.endsWith("results hidden until the plan's look")
      ? null
      : /^eval @ step (\d+): .*?(\([\d.]+ s\))?$/.exec(line);
    this.inner.note(
      m ? `eval @ step ${m[1]}: done${m[2] ? ` ${m[2]}` : ''}, results hidden until the plan's look` : line,
    );
  }

  stop(): void {
    this.inner.stop();
  }
}
