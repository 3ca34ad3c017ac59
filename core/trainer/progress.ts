import { SingleBar } from 'cli-progress';

/** What the trainer tells a progress display after each step. */
export interface StepSummary {
  readonly step: number;
  readonly total: number;
  /** Mean reward over agents. */
  readonly reward: number;
  /** Mean pseudo-label accuracy over agents (NaN when unknown). */
  readonly labelAccuracy: number;
  /** Latest held-out pass@1 per agent. */
  readonly evalAccuracy: readonly number[];
  /** Wall time of the step in ms. */
  readonly stepMs: number;
}

/** Shows training progress. */
export interface ProgressReporter {
  start(total: number, from: number, label: string): void;
  step(s: StepSummary): void;
  /** A line of text that must not be torn by the bar (evaluations, warnings). */
  note(line: string): void;
  stop(): void;
}

const fmt = (v: number, digits = 3): string => (Number.isFinite(v) ? v.toFixed(digits) : '-');

/** Print a line above a live bar (cli-progress redraws on its own line), or plainly without one. */
function noteAbove(stream: NodeJS.WriteStream, bar: SingleBar | undefined, line: string): void {
  if (bar) {
    stream.write('\r\x1b[K' + line + '\n');
    bar.render();
  } else {
    stream.write(line + '\n');
  }
}

/** A bar with ETA and live reward/accuracy on a terminal. */
export class BarProgress implements ProgressReporter {
  private bar?: SingleBar;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  start(total: number, from: number, label: string): void {
    this.bar = new SingleBar({
      format: `${label} [{bar}] {value}/{total} | ETA {eta_formatted} | reward {reward} | label acc {label} | eval acc {eval}`,
      stream: this.stream,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 20,
      barsize: 24,
    });
    this.bar.start(total, from, { reward: '-', label: '-', eval: '-' });
  }

  step(s: StepSummary): void {
    this.bar?.update(s.step, {
      reward: fmt(s.reward),
      label: fmt(s.labelAccuracy),
      eval: s.evalAccuracy.map((a) => fmt(a)).join('/') || '-',
    });
  }

  note(line: string): void {
    noteAbove(this.stream, this.bar, line);
  }

  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}

/** Plain periodic lines (CI, pipes): one every `every` steps, with the rate and an ETA. */
export class LineProgress implements ProgressReporter {
  private from = 0;
  private started = 0;
  private label = '';

  constructor(
    private readonly every: number,
    private readonly write: (line: string) => void = (l) => process.stderr.write(l + '\n'),
    private readonly now: () => number = () => performance.now(),
  ) {}

  start(total: number, from: number, label: string): void {
    this.from = from;
    this.label = label;
    this.started = this.now();
    this.write(`${label}: steps ${from}/${total}`);
  }

  step(s: StepSummary): void {
    if (s.step % this.every !== 0 && s.step !== s.total) return;
    const done = s.step - this.from;
    const elapsed = (this.now() - this.started) / 1000;
    const eta = done > 0 ? (elapsed / done) * (s.total - s.step) : NaN;
    this.write(
      `${this.label}: step ${s.step}/${s.total} reward ${fmt(s.reward)} label_acc ${fmt(s.labelAccuracy)} eval_acc ${s.evalAccuracy.map((a) => fmt(a)).join('/') || '-'} (${(s.stepMs / 1000).toFixed(2)} s/step, ETA ${Number.isFinite(eta) ? `${Math.round(eta)} s` : '-'})`,
    );
  }

  note(line: string): void {
    this.write(line);
  }

  stop(): void {}
}

/** Silent (tests, library use). */
export class NoProgress implements ProgressReporter {
  start(): void {}
  step(): void {}
  note(): void {}
  stop(): void {}
}

/** A bar on a terminal, plain lines otherwise. */
export function defaultProgress(logEvery: number): ProgressReporter {
  return process.stderr.isTTY ? new BarProgress() : new LineProgress(logEvery);
}

/** Progress over a count of items (problems answered by `corl eval`), updated once per batch. */
export interface CountProgress {
  start(total: number, label: string): void;
  /** `done` items of the total are finished; `detail` says what (e.g. "agent a 32/500"). */
  update(done: number, detail: string): void;
  note(line: string): void;
  stop(): void;
}

/** A bar with ETA on a terminal. */
export class CountBar implements CountProgress {
  private bar?: SingleBar;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  start(total: number, label: string): void {
    this.bar = new SingleBar({
      format: `${label} [{bar}] {value}/{total} | ETA {eta_formatted} | {detail}`,
      stream: this.stream,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 20,
      barsize: 24,
    });
    this.bar.start(total, 0, { detail: '' });
  }

  update(done: number, detail: string): void {
    this.bar?.update(done, { detail });
  }

  note(line: string): void {
    noteAbove(this.stream, this.bar, line);
  }

  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}

/** One plain line per update (CI, pipes). */
export class CountLines implements CountProgress {
  private total = 0;
  private label = '';

  constructor(private readonly write: (line: string) => void = (l) => process.stderr.write(l + '\n')) {}

  start(total: number, label: string): void {
    this.total = total;
    this.label = label;
    this.write(`${label}: 0/${total}`);
  }

  update(done: number, detail: string): void {
    this.write(`${this.label}: ${done}/${this.total}${detail ? ` (${detail})` : ''}`);
  }

  note(line: string): void {
    this.write(line);
  }

  stop(): void {}
}

/** Silent. */
export class NoCountProgress implements CountProgress {
  start(): void {}
  update(): void {}
  note(): void {}
  stop(): void {}
}

/** A bar on a terminal, plain lines otherwise. */
export function defaultCountProgress(): CountProgress {
  return process.stderr.isTTY ? new CountBar() : new CountLines();
}
