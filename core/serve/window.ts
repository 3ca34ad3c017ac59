// The step window of a cohort (docs/guide/serve.md "Steps"): which steps a post may name, and
// when a step is dropped. It moves only with what every agent of the cohort has reached, so no
// agent's posts, however many, can expire a step another agent still needs. A reusable unit:
// every route that posts by step asks `admit`, then `reach`.
import { CorlError } from '../errors';

/** How a {@link StepWindow} is set. */
export interface WindowOptions {
  /** Steps kept behind the cohort's floor (the slowest agent's newest step); Infinity: all. */
  readonly keepSteps: number;
  /** How far beyond the floor a post may be; undefined: no limit. */
  readonly maxStepsAhead?: number;
  /** The newest step of an agent that has posted nothing. */
  readonly startStep: number;
}

/**
 * The window of one group of agents that read each other's answers (a cohort, or one agent alone
 * under `corl:self`). Each agent's newest posted step is its reach; the floor is the smallest reach
 * (an agent that has posted nothing is at `startStep`). A post may name a step from
 * `floor - keepSteps + 1` to `floor + maxStepsAhead`; steps below the first are expired.
 */
export class StepWindow {
  private readonly reached = new Map<number, number>();

  constructor(
    /** The agents of this window, by index. */
    readonly agents: readonly number[],
    readonly options: WindowOptions,
    /** Agent names, for messages. */
    private readonly names: readonly string[],
  ) {}

  /** The newest step an agent posted (startStep when none). */
  reachOf(agent: number): number {
    return this.reached.get(agent) ?? this.options.startStep;
  }

  /** The smallest reach of the window's agents. */
  get floor(): number {
    let f = Infinity;
    for (const a of this.agents) f = Math.min(f, this.reachOf(a));
    return f;
  }

  /** The largest reach. */
  get newest(): number {
    let n = -Infinity;
    for (const a of this.agents) n = Math.max(n, this.reachOf(a));
    return n;
  }

  /** The oldest step still kept (-Infinity: every step). */
  get oldest(): number {
    return Number.isFinite(this.options.keepSteps) ? this.floor - this.options.keepSteps + 1 : -Infinity;
  }

  /** The slowest agents (those at the floor). */
  private slowest(): string {
    const f = this.floor;
    return this.agents
      .filter((a) => this.reachOf(a) === f)
      .map((a) => `"${this.names[a]}"`)
      .join(', ');
  }

  /** Throws a coded error (changing nothing) unless `step` is inside the window. */
  admit(step: number): void {
    const oldest = this.oldest;
    if (step < oldest) {
      throw new CorlError(
        'CORL_ERR_SERVE_STEP_EXPIRED',
        `expected a step of at least ${oldest} (every agent has reached step ${this.floor} or later, and ${this.options.keepSteps} steps are kept behind the slowest), got ${step}`,
        { where: 'step' },
      );
    }
    const ahead = this.options.maxStepsAhead;
    if (ahead !== undefined && step > this.floor + ahead) {
      throw new CorlError(
        'CORL_ERR_SERVE_STEP_AHEAD',
        `expected a step of at most ${this.floor + ahead} (the slowest agent, ${this.slowest()}, is at step ${this.floor}; a post may run serve.exchange.maxStepsAhead = ${ahead} beyond it), got ${step}`,
        {
          where: 'step',
          hint: "post the trainer's real step, and check that every agent of the cohort is running (GET /health shows each agent's step); a cohort resuming at a later step against a fresh journal sets serve.exchange.startStep",
        },
      );
    }
  }

  /** Record that `agent` posted `step`; returns the oldest kept step when it moved (slots below it may go). */
  reach(agent: number, step: number): number | undefined {
    if (step <= this.reachOf(agent)) return undefined;
    const before = this.oldest;
    this.reached.set(agent, step);
    const after = this.oldest;
    return after > before ? after : undefined;
  }
}
