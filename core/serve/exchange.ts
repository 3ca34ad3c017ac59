// The cross-agent exchange of pseudo-label inputs (docs/guide/serve.md "The exchange").
import { hash } from 'node:crypto';
import type { AgentAnswers } from '../contracts/reward-source';
import { CorlError } from '../errors';
import type { Journal, JournalRecord } from './journal';
import { capAnswer, capKeys } from './keys';
import type { GroupAnswer, LabelSource, PostedGroup, Scorer } from './scorer';
import type { ServeRuntime } from './setup';
import { mapPacked } from '../util/arrays';

/** How one exchange behaves. */
export interface ExchangeOptions {
  /** Journal namespace: `groups` (POST /v1/groups) or `get_reward`. */
  readonly namespace: string;
  /** Longest wait for supervisors, in milliseconds. */
  readonly waitMs: number;
  /** What a group gets when the wait runs out. */
  readonly fallback: 'self' | 'zero' | 'error';
  /** Steps kept, counted back from the newest (Infinity: everything). */
  readonly keepSteps: number;
  /**
   * Rounds kept per group id, counted back from that id's newest (Infinity: everything). POST
   * /get_reward has no global step: its "step" is how often an agent has posted the id (the epoch),
   * so old slots are dropped per id rather than by step.
   */
  readonly keepRounds?: number;
  /**
   * The step window (POST /v1/groups): a post may be at most this many steps beyond the newest
   * step, which starts at `startStep`; undefined: no window (the server chooses the steps).
   */
  readonly maxStepsAhead?: number;
  /** The newest step of an empty exchange (default: none, -1). */
  readonly startStep?: number;
  /** Most distinct group ids held per step, all agents together (default: no limit). */
  readonly maxGroupsPerStep?: number;
}

/** What a compacted journal keeps of one namespace. */
export interface RetainRule {
  /** Newest steps kept (counted back from the namespace's newest step). */
  readonly steps: number;
  /** Newest rounds kept per group id (counted back from that id's newest). */
  readonly rounds?: number;
  /** The newest step to count `steps` back from, when it is not simply the newest record's (the exchange's newest step, which starts at `startStep`). */
  readonly newest?: number;
}

/** Events the server counts. */
export interface ExchangeEvents {
  /** A group had to wait for supervisors; `seconds` it waited, and whether they all arrived. */
  wait?(seconds: number, arrived: boolean): void;
  /** A group got a fallback (or partial) answer. */
  fallback?(kind: LabelSource | 'error'): void;
  /** A retry was answered from the stored answer. */
  replay?(): void;
}

interface Slot {
  readonly step: number;
  readonly id: string;
  readonly keys: Map<number, { keys: readonly (string | null)[]; hash: string }>;
  readonly answers: Map<number, { answer: GroupAnswer; hash: string }>;
  readonly pending: Map<number, Promise<GroupAnswer>>;
  readonly waiters: Set<() => void>;
}

/** Fingerprint of a posted group: what a retry must repeat exactly. */
export function groupHash(group: PostedGroup): string {
  // One pass over the same bytes as reference, then "\u0001" + text per completion (the digest
  // is unchanged from hashing them piece by piece, so journals stay valid); the one-shot hash
  // skips the Hash object.
  let text = group.reference ?? '\u0000';
  for (const c of group.completions) text += '\u0001' + c.text;
  return hash('sha1', text, 'base64url');
}

/**
 * Per (step, group id), each agent's answer keys; agent n's rewards come from the reward source
 * with `supervisors` = the keys of S(n) for the same group once they have all arrived (or what the
 * fallback says when the wait runs out). Answers are stored and journaled, so a retry of the same
 * agent, step and group gets the identical answer, before and after a restart.
 */
export class Exchange {
  private readonly slots = new Map<string, Slot>();
  private readonly bySteps = new Map<number, Set<string>>();
  /** Steps (rounds) held per group id, for `keepRounds`. */
  private readonly byId = new Map<string, Set<number>>();
  /** Newest step at which each (agent, group id) posted keys. */
  private readonly rounds = new Map<string, number>();
  private maxStep: number;
  private closing = false;

  constructor(
    private readonly rt: ServeRuntime,
    private readonly scorer: Scorer,
    private readonly journal: Journal,
    readonly options: ExchangeOptions,
    private readonly events: ExchangeEvents = {},
  ) {
    this.maxStep = options.startStep ?? -1;
  }

  /** The newest step: the highest accepted (or restored) step, at least `startStep`. */
  get newest(): number {
    return this.maxStep;
  }

  /** Restore state from replayed journal records of this namespace (checked by `checkReplay` first). */
  restore(records: readonly JournalRecord[]): void {
    for (const r of records) {
      if (r.n !== this.options.namespace) continue;
      const agent = this.rt.agentIndex(r.a);
      if (agent === undefined) continue;
      const slot = this.slot(r.s, r.g);
      if (r.t === 'keys') {
        slot.keys.set(agent, { keys: r.k, hash: r.h });
        this.noteRound(agent, r.g, r.s);
      } else slot.answers.set(agent, { answer: r.r as GroupAnswer, hash: r.h });
      this.maxStep = Math.max(this.maxStep, r.s);
    }
  }

  /** Records worth keeping in a compacted journal: per namespace the newest steps, and the newest rounds of each id. */
  static retain(records: readonly JournalRecord[], rule: (namespace: string) => RetainRule): JournalRecord[] {
    const max = new Map<string, number>();
    const maxOfId = new Map<string, number>();
    for (const r of records) {
      max.set(r.n, Math.max(max.get(r.n) ?? rule(r.n).newest ?? -1, r.s));
      const k = `${r.n}\u0000${r.g}`;
      maxOfId.set(k, Math.max(maxOfId.get(k) ?? -1, r.s));
    }
    return records.filter((r) => {
      const { steps, rounds = Infinity } = rule(r.n);
      return r.s > max.get(r.n)! - steps && r.s > maxOfId.get(`${r.n}\u0000${r.g}`)! - rounds;
    });
  }

  /** Number of (step, group) slots held. */
  get size(): number {
    return this.slots.size;
  }

  /** Whether this agent already has keys (and with which fingerprint) for a group. */
  postedHash(agent: number, step: number, id: string): string | undefined {
    return this.slots.get(slotKey(step, id))?.keys.get(agent)?.hash;
  }

  /**
   * The step to post a group under when the client has no step of its own (POST /get_reward): the
   * round after the agent's newest one for this id, unless that round is still unanswered with the
   * same completions (a wait cut short by a restart), which is resumed.
   */
  nextRound(agent: number, id: string, hash: string): number {
    const s = this.rounds.get(`${agent}\u0000${id}`);
    if (s === undefined) return 0;
    const slot = this.slots.get(slotKey(s, id));
    return slot && !slot.answers.has(agent) && slot.keys.get(agent)?.hash === hash ? s : s + 1;
  }

  private noteRound(agent: number, id: string, step: number): void {
    // Only an exchange that counts rounds per id needs them (POST /v1/groups steps come from the
    // client; keeping one entry per agent and id ever posted would grow without bound).
    if (this.options.keepRounds === undefined) return;
    const k = `${agent}\u0000${id}`;
    if ((this.rounds.get(k) ?? -1) < step) this.rounds.set(k, step);
  }

  /** Whether an answer is stored for the agent and group. */
  answered(agent: number, step: number, id: string): { hash: string } | undefined {
    return this.slots.get(slotKey(step, id))?.answers.get(agent);
  }

  /**
   * Post an agent's groups for a step and wait for their answers (at most `waitMs`, capped by the
   * configured limit). Answers are aligned with `groups`.
   */
  async post(
    agent: number,
    step: number,
    groups: readonly PostedGroup[],
    waitMs = this.options.waitMs,
  ): Promise<GroupAnswer[]> {
    if (this.closing) throw unavailable();
    this.admit(step, groups);
    const deadline = performance.now() + Math.min(Math.max(0, waitMs), this.options.waitMs);
    const hashes = mapPacked(groups, (g) => groupHash(g));
    const check = (): void => {
      groups.forEach((g, i) => {
        const posted = this.postedHash(agent, step, g.id);
        if (posted !== undefined && posted !== hashes[i]) {
          throw new CorlError(
            'CORL_ERR_SERVE_CONFLICT',
            `expected the same completions as the first post of group "${g.id}" at step ${step} by agent "${this.rt.agents[agent]}", got different ones`,
            { where: `groups[${i}]` },
          );
        }
      });
    };
    check();
    const fresh: number[] = [];
    groups.forEach((g, i) => {
      if (this.postedHash(agent, step, g.id) === undefined) fresh.push(i);
    });
    const max = this.rt.settings.maxKeyChars;
    const computed = await Promise.all(fresh.map(async (i) => capKeys(await this.scorer.keys(groups[i]!), max)));
    check(); // a concurrent post may have stored keys meanwhile
    this.admit(step, groups); // or moved the newest step, or filled the step
    const records: JournalRecord[] = [];
    const touched: Slot[] = [];
    fresh.forEach((i, j) => {
      const g = groups[i]!;
      const slot = this.slot(step, g.id);
      if (slot.keys.has(agent)) return;
      slot.keys.set(agent, { keys: computed[j]!, hash: hashes[i]! });
      this.noteRound(agent, g.id, step);
      records.push({
        t: 'keys',
        n: this.options.namespace,
        a: this.rt.agents[agent]!,
        s: step,
        g: g.id,
        h: hashes[i]!,
        k: computed[j]!,
      });
      touched.push(slot);
    });
    // Peers may be woken before these keys are durable: any answer built on them is journaled
    // after them in the same append-only file, so it can never be durable without them.
    const durable = this.journal.append(records);
    for (const slot of touched) for (const w of [...slot.waiters]) w();
    if (step > this.maxStep) this.advance(step);
    // Answers are computed while the keys are being written: an answer record is appended after
    // these keys, so when both are ready together they share one write and one fdatasync. The
    // request is answered only once both are durable (an error answer, too, waits for the keys).
    const [keysDone, answersDone] = await Promise.allSettled([
      durable,
      Promise.all(groups.map((g, i) => this.answer(agent, step, g, hashes[i]!, deadline))),
    ]);
    if (keysDone.status === 'rejected') throw keysDone.reason;
    if (answersDone.status === 'rejected') throw answersDone.reason;
    return answersDone.value;
  }

  /**
   * Whether a post may change anything: its step inside the window (no older than `keepSteps`
   * behind the newest, no further than `maxStepsAhead` beyond it) and room at that step for its
   * new group ids. Throws a coded error and changes nothing otherwise.
   */
  private admit(step: number, groups: readonly PostedGroup[]): void {
    const oldest = this.maxStep - this.options.keepSteps + 1;
    if (step < oldest) {
      throw new CorlError(
        'CORL_ERR_SERVE_STEP_EXPIRED',
        `expected a step of at least ${oldest} (the newest is ${this.maxStep}, ${this.options.keepSteps} are kept), got ${step}`,
        { where: 'step' },
      );
    }
    const ahead = this.options.maxStepsAhead;
    if (ahead !== undefined && step > this.maxStep + ahead) {
      throw new CorlError(
        'CORL_ERR_SERVE_STEP_AHEAD',
        `expected a step of at most ${this.maxStep + ahead} (the newest step is ${this.maxStep}; a post may run serve.exchange.maxStepsAhead = ${ahead} beyond it), got ${step}`,
        {
          where: 'step',
          hint: "post the trainer's real step; a cohort resuming at a later step against a fresh journal sets serve.exchange.startStep",
        },
      );
    }
    const cap = this.options.maxGroupsPerStep;
    if (cap !== undefined) {
      const held = this.bySteps.get(step)?.size ?? 0;
      const added = groups.reduce((n, g) => n + (this.slots.has(slotKey(step, g.id)) ? 0 : 1), 0);
      if (added > 0 && held + added > cap) {
        throw new CorlError(
          'CORL_ERR_SERVE_STEP_FULL',
          `expected at most ${cap} distinct group ids at step ${step} (serve.exchange.maxGroupsPerStep), got ${held} held and ${added} new`,
          { where: 'groups' },
        );
      }
    }
  }

  private answer(
    agent: number,
    step: number,
    group: PostedGroup,
    hash: string,
    deadline: number,
  ): Promise<GroupAnswer> {
    const slot = this.slot(step, group.id);
    const stored = slot.answers.get(agent);
    if (stored) {
      this.events.replay?.();
      return Promise.resolve(stored.answer);
    }
    let p = slot.pending.get(agent);
    if (!p) {
      p = this.resolve(slot, agent, group, hash, deadline).finally(() => slot.pending.delete(agent));
      slot.pending.set(agent, p);
    }
    return p;
  }

  private async resolve(
    slot: Slot,
    agent: number,
    group: PostedGroup,
    hash: string,
    deadline: number,
  ): Promise<GroupAnswer> {
    const N = this.rt.agents.length;
    const sup = this.rt.topology.supervisors(agent, N);
    const others = sup.filter((m) => m !== agent);
    const missing = (): number[] => others.filter((m) => !slot.keys.has(m));
    // A pointwise source (a verifier) never looks at supervisors: nothing to wait for.
    if (this.rt.pointwise) {
      const own = slot.keys.get(agent)!.keys;
      const present = mapPacked(
        sup.filter((m) => m === agent || slot.keys.has(m)),
        (m) => ({ agent: m, keys: m === agent ? own : slot.keys.get(m)!.keys }),
      );
      return this.store(
        slot,
        agent,
        group,
        hash,
        await this.scorer.score(agent, slot.step, group, own, present, 'supervisors'),
      );
    }
    if (missing().length) {
      const t = performance.now();
      await this.waitUntil(slot, () => missing().length === 0, deadline);
      if (this.closing) throw unavailable();
      this.events.wait?.((performance.now() - t) / 1000, missing().length === 0);
    }
    const own = slot.keys.get(agent)!.keys;
    const answersOf = (m: number): AgentAnswers => ({ agent: m, keys: m === agent ? own : slot.keys.get(m)!.keys });
    let answer: GroupAnswer;
    const absent = missing();
    if (absent.length === 0) {
      answer = await this.scorer.score(agent, slot.step, group, own, mapPacked(sup, answersOf), 'supervisors');
    } else if (absent.length < others.length) {
      this.events.fallback?.('partial');
      answer = await this.scorer.score(
        agent,
        slot.step,
        group,
        own,
        mapPacked(
          sup.filter((m) => m === agent || slot.keys.has(m)),
          answersOf,
        ),
        'partial',
      );
    } else if (this.options.fallback === 'self') {
      this.events.fallback?.('self');
      answer = await this.scorer.score(agent, slot.step, group, own, [answersOf(agent)], 'self');
    } else if (this.options.fallback === 'zero') {
      this.events.fallback?.('zero');
      answer = this.scorer.zero(group, own);
    } else {
      this.events.fallback?.('error');
      throw new CorlError(
        'CORL_ERR_SERVE_PEER_TIMEOUT',
        `expected the answers of ${absent.map((m) => `"${this.rt.agents[m]}"`).join(', ')} for group "${group.id}" at step ${slot.step}, got none before the wait ran out`,
        { where: `agent "${this.rt.agents[agent]}"` },
      );
    }
    return this.store(slot, agent, group, hash, answer);
  }

  private async store(
    slot: Slot,
    agent: number,
    group: PostedGroup,
    hash: string,
    answer: GroupAnswer,
  ): Promise<GroupAnswer> {
    const existing = slot.answers.get(agent);
    if (existing) return existing.answer;
    answer = capAnswer(answer, this.rt.settings.maxKeyChars);
    slot.answers.set(agent, { answer, hash });
    await this.journal.append([
      {
        t: 'answer',
        n: this.options.namespace,
        a: this.rt.agents[agent]!,
        s: slot.step,
        g: group.id,
        h: hash,
        r: answer,
      },
    ]);
    return answer;
  }

  private waitUntil(slot: Slot, ready: () => boolean, deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const remaining = deadline - performance.now();
      if (ready() || remaining <= 0 || this.closing) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        slot.waiters.delete(check);
        resolve();
      };
      const check = (): void => {
        if (ready() || this.closing) done();
      };
      const timer = setTimeout(done, remaining);
      slot.waiters.add(check);
    });
  }

  /** Wake every waiting request so it can answer 503 (used at shutdown). */
  close(): void {
    this.closing = true;
    for (const slot of this.slots.values()) for (const w of [...slot.waiters]) w();
  }

  private advance(step: number): void {
    this.maxStep = step;
    if (!Number.isFinite(this.options.keepSteps)) return;
    const oldest = step - this.options.keepSteps + 1;
    for (const [s, keys] of this.bySteps) {
      if (s >= oldest) continue;
      for (const k of keys) this.drop(k);
      this.bySteps.delete(s);
    }
  }

  private drop(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    const steps = this.byId.get(slot.id);
    steps?.delete(slot.step);
    if (steps && steps.size === 0) this.byId.delete(slot.id);
  }

  /** A new round of `id` began: drop that id's rounds older than `keepRounds` (nobody waits on them any more). */
  private pruneRounds(id: string, newest: number): void {
    const keep = this.options.keepRounds ?? Infinity;
    if (!Number.isFinite(keep)) return;
    for (const s of [...(this.byId.get(id) ?? [])]) {
      if (s > newest - keep) continue;
      const key = slotKey(s, id);
      const slot = this.slots.get(key);
      if (slot && (slot.pending.size > 0 || slot.waiters.size > 0)) continue; // still answering: dropped later
      this.drop(key);
      this.bySteps.get(s)?.delete(key);
      if (this.bySteps.get(s)?.size === 0) this.bySteps.delete(s);
    }
  }

  private slot(step: number, id: string): Slot {
    const key = slotKey(step, id);
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { step, id, keys: new Map(), answers: new Map(), pending: new Map(), waiters: new Set() };
      this.slots.set(key, slot);
      let set = this.bySteps.get(step);
      if (!set) this.bySteps.set(step, (set = new Set()));
      set.add(key);
      let steps = this.byId.get(id);
      if (!steps) this.byId.set(id, (steps = new Set()));
      steps.add(step);
      this.pruneRounds(id, Math.max(...steps));
    }
    return slot;
  }
}

function slotKey(step: number, id: string): string {
  return `${step}\u0000${id}`;
}

function unavailable(): CorlError {
  return new CorlError('CORL_ERR_SERVE_UNAVAILABLE', 'expected a running service, got one shutting down', {
    hint: 'retry against the restarted service; the request is idempotent',
  });
}
