// Answers of samples posted with `defer: true` (docs/guide/serve.md "Many samples, few
// connections"), held per agent by request id until a POST /v1/samples/wait acknowledges them: a
// client's waiting samples cost no socket each, one wait request stands for all of them. Bounded
// per agent: at most `max` entries each, waiting or answered (all agents: that times the agents);
// the oldest answered one goes first (its sample, posted again, finds its stored answer), and one
// more without an answer to let go is refused by the caller.
import type { CorlError } from '../errors';
import type { SampleAnswer } from './samples';

/** How a deferred sample ended: its answer, or the coded error it got. */
export type MailboxOutcome = { readonly answer: SampleAnswer } | { readonly error: CorlError };

interface Entry {
  readonly group: string;
  /** Fingerprint of the sample (what its retry must repeat). */
  readonly hash: string;
  outcome?: MailboxOutcome;
}

/** What a wait finds for its request ids. */
export interface Collected {
  readonly ready: readonly (readonly [string, MailboxOutcome])[];
  /** Ids the service holds nothing for (never posted, answered and collected, or lost in a restart): post them again. */
  readonly unknown: readonly string[];
  /** Ids whose samples still wait for their group or their supervisors. */
  readonly pending: number;
}

export class Mailbox {
  private readonly boxes: Map<string, Entry>[];
  /** Per agent, the answered entries not yet collected, oldest first. */
  private readonly answered: Set<string>[];
  private readonly watchers: Map<string, Set<() => void>>[];

  constructor(
    agents: number,
    private readonly max: number,
  ) {
    this.boxes = Array.from({ length: agents }, () => new Map());
    this.answered = Array.from({ length: agents }, () => new Set());
    this.watchers = Array.from({ length: agents }, () => new Map());
  }

  /** Entries held for an agent (waiting or answered). */
  size(agent: number): number {
    return this.boxes[agent]!.size;
  }

  /** All entries held. */
  get total(): number {
    return this.boxes.reduce((n, b) => n + b.size, 0);
  }

  /** The entry of a request id, if held. */
  get(
    agent: number,
    id: string,
  ): { readonly group: string; readonly hash: string; readonly done: boolean } | undefined {
    const e = this.boxes[agent]!.get(id);
    return e && { group: e.group, hash: e.hash, done: e.outcome !== undefined };
  }

  /** Whether the agent may open one more entry: fewer than `max` held, or an answered one to let go. */
  room(agent: number): boolean {
    return this.boxes[agent]!.size < this.max || this.answered[agent]!.size > 0;
  }

  /**
   * A deferred sample was accepted: its outcome comes later. At `max` entries the agent's oldest
   * answered one goes (check `room` first: entries without an answer are never let go).
   */
  open(agent: number, id: string, group: string, hash: string): void {
    const box = this.boxes[agent]!;
    const answered = this.answered[agent]!;
    while (box.size >= this.max && answered.size > 0) {
      const oldest = answered.values().next().value as string;
      answered.delete(oldest);
      box.delete(oldest);
    }
    box.set(id, { group, hash });
  }

  /** A deferred sample's outcome: held until collected, and its watchers woken. */
  settle(agent: number, id: string, outcome: MailboxOutcome): void {
    const e = this.boxes[agent]!.get(id);
    if (!e || e.outcome) return;
    e.outcome = outcome;
    const answered = this.answered[agent]!;
    answered.add(id);
    while (answered.size > this.max) {
      const oldest = answered.values().next().value as string;
      answered.delete(oldest);
      this.boxes[agent]!.delete(oldest);
    }
    for (const wake of this.watchers[agent]!.get(id) ?? []) wake();
  }

  /**
   * The outcomes of the ids that have one (kept until acknowledged, so that an answer lost on its
   * way is sent again by the next wait); name the ids held nowhere.
   */
  collect(agent: number, ids: readonly string[]): Collected {
    const box = this.boxes[agent]!;
    const ready: [string, MailboxOutcome][] = [];
    const unknown: string[] = [];
    let pending = 0;
    for (const id of ids) {
      const e = box.get(id);
      if (!e) unknown.push(id);
      else if (!e.outcome) pending++;
      else ready.push([id, e.outcome]);
    }
    return { ready, unknown, pending };
  }

  /** The client received these outcomes: forget them (ids still waiting are kept). */
  ack(agent: number, ids: readonly string[]): void {
    const box = this.boxes[agent]!;
    for (const id of ids) {
      if (!box.get(id)?.outcome) continue;
      box.delete(id);
      this.answered[agent]!.delete(id);
    }
  }

  /** Call `wake` when one of the ids gets its outcome; returns the function that stops watching. */
  watch(agent: number, ids: readonly string[], wake: () => void): () => void {
    const w = this.watchers[agent]!;
    for (const id of ids) {
      let set = w.get(id);
      if (!set) w.set(id, (set = new Set()));
      set.add(wake);
    }
    return () => {
      for (const id of ids) {
        const set = w.get(id);
        if (!set) continue;
        set.delete(wake);
        if (set.size === 0) w.delete(id);
      }
    };
  }

  /** Forget everything (shutdown). */
  clear(): void {
    for (const b of this.boxes) b.clear();
    for (const a of this.answered) a.clear();
  }
}
