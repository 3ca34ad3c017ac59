// The cross-agent exchange of pseudo-label inputs (docs/guide/serve.md "The exchange").
import type { AgentAnswers } from '../contracts/reward-source';
import type { Topology } from '../contracts/topology';
import { CorlError } from '../errors';
import type { JournalRecord } from './journal';
import { capAnswer, capKeys } from './keys';
import type { GroupAnswer, LabelSource, PostedGroup, Scorer } from './scorer';
import type { ServeRuntime } from './setup';
import { StepWindow } from './window';
import { inPhase, type RequestWork } from './work';
import type { WorkOptions } from '../contracts/work';
import { SharedWork } from '../util/shared-work';
import { mapPacked } from '../util/arrays';

/** Where an exchange's records go (the journal, once it is open). */
export interface RecordSink {
  append(records: readonly JournalRecord[]): Promise<void>;
}

/** How one exchange behaves. */
export interface ExchangeOptions {
  /** Journal namespace: `groups` (POST /v1/groups) or `get_reward`. */
  readonly namespace: string;
  /** Longest wait for supervisors, in milliseconds. */
  readonly waitMs: number;
  /** What a group gets when the wait runs out. */
  readonly fallback: 'self' | 'zero' | 'error';
  /**
   * The step window (POST /v1/groups): steps kept behind the slowest agent, how far beyond it a
   * post may be, and the step of an agent that has posted nothing. Undefined: the steps are
   * rounds the service counts itself (POST /get_reward), kept by `keepGroups` and `keepRounds`.
   */
  readonly window?: { readonly keepSteps: number; readonly maxStepsAhead: number; readonly startStep: number };
  /** Most distinct group ids one agent may hold at one step (POST /v1/groups; default: no limit). */
  readonly maxGroupsPerStep?: number;
  /**
   * Most characters of answer keys one agent may hold in this exchange, all its held steps (rounds)
   * together (default: no limit). The counts cap each key and the group ids of a step; this caps
   * what they hold together, whatever the completions answer.
   */
  readonly maxHeldKeyChars?: number;
  /**
   * Group ids each agent keeps (POST /get_reward), counted back from the one it posted last: an id
   * leaves the exchange, all its rounds, once it is among no agent's newest `keepGroups`.
   */
  readonly keepGroups?: number;
  /** Rounds kept per group id, counted back from that id's newest (POST /get_reward). */
  readonly keepRounds?: number;
}

/** Events the server counts. */
export interface ExchangeEvents {
  /** A group had to wait for supervisors; `seconds` it waited, and whether they all arrived. */
  wait?(seconds: number, arrived: boolean): void;
  /** A group got a fallback (or partial) answer. */
  fallback?(kind: LabelSource | 'error'): void;
  /** A retry was answered from the stored answer. */
  replay?(): void;
  /** A group fell back with `count` supervisors that hold its problem at no kept step (round). */
  unseen?(count: number): void;
  /** A label-free group was graded against its reference (label right 1/0; rewards right 1/0 each). */
  graded?(agent: number, labelRight: number | undefined, rewardRight: readonly number[] | undefined): void;
  /** A new answer was stored and journaled in `namespace` at `step` (a round in rounds mode); never a replay. */
  decided?(namespace: string, agent: number, step: number, answer: GroupAnswer): void;
}

interface Stored<T> {
  readonly value: T;
  readonly hash: string;
  /** Order in which the fact was recorded (a compacted journal writes them in this order). */
  readonly seq: number;
}

/** Characters of a group's answer keys, as `maxHeldKeyChars` counts them (a missing key counts 1). */
function keyChars(keys: readonly (string | null)[]): number {
  let n = 0;
  for (const k of keys) n += k === null ? 1 : Math.max(1, k.length);
  return n;
}

/** An agent's supervisors in one slot (see `peersOf`). */
interface Peers {
  /** Its supervisors other than itself. */
  readonly others: readonly number[];
  /** Its own answer keys in the slot. */
  readonly own: readonly (string | null)[];
  /** The other supervisors without keys in the slot now. */
  missing(): number[];
  /** The supervisors with keys in the slot now (itself included), with those keys. */
  present(): AgentAnswers[];
}

interface Slot {
  readonly key: string;
  /** The window (group of agents that read each other) the slot belongs to. */
  readonly part: number;
  readonly step: number;
  readonly id: string;
  readonly keys: Map<number, Stored<readonly (string | null)[]>>;
  readonly answers: Map<number, Stored<GroupAnswer>>;
  readonly waiters: Set<() => void>;
}

import { groupHash, sameGroup } from './fingerprint';

export { groupHash };

/**
 * Agents grouped by who reads whose answers: the connected parts of the supervision graph (a
 * ring is one part, `corl:self` one part per agent). Parts share nothing: each has its own steps.
 */
export function readingParts(topology: Topology, agents: number): number[] {
  const parent = Array.from({ length: agents }, (_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (let a = 0; a < agents; a++)
    for (const s of topology.supervisors(a, agents)) if (s >= 0 && s < agents) parent[find(a)] = find(s);
  const ids = new Map<number, number>();
  return Array.from({ length: agents }, (_, a) => {
    const root = find(a);
    if (!ids.has(root)) ids.set(root, ids.size);
    return ids.get(root)!;
  });
}

/**
 * Per (step, group id), each agent's answer keys; agent n's rewards come from the reward source
 * with `supervisors` = the keys of S(n) for the same group once they have all arrived (or what the
 * fallback says when the wait runs out). Answers are stored and journaled, so a retry of the same
 * agent, step and group gets the identical answer, before and after a restart.
 *
 * What is kept is bounded and decided by the records alone, in the order they were journaled, so
 * that replaying a journal rebuilds exactly the state the service had: POST /v1/groups steps go
 * with the {@link StepWindow} of their part; POST /get_reward ids with each agent's newest
 * `keepGroups` and each id's newest `keepRounds` rounds.
 */
export class Exchange {
  private readonly slots = new Map<string, Slot>();
  /** Per part, the slot keys of each step. */
  private readonly bySteps: Map<number, Set<string>>[];
  /** Per part, the steps (rounds) of each id. */
  private readonly byId: Map<string, Set<number>>[];
  /** Newest round at which each (agent, group id) posted keys (rounds only). */
  private readonly rounds = new Map<string, number>();
  /** Per agent, its group ids from the least to the most recently posted (rounds only). */
  private readonly recent: Map<string, true>[];
  /** Per part and id, how many agents hold it among their newest `keepGroups`. */
  private readonly holders = new Map<string, number>();
  /** Per part and step, how many slots each agent has keys in (for `maxGroupsPerStep`). */
  private readonly held = new Map<string, Map<number, number>>();
  /** Per agent, characters of the answer keys it holds (for `maxHeldKeyChars`). */
  private readonly chars: number[];
  /** Part of each agent. */
  private readonly part: number[];
  /** The step window of each part (steps mode). */
  private readonly windows: StepWindow[] | undefined;
  private seq = 0;
  private closing = false;
  /** Answers being computed, per slot and agent: shared by a request and its retries, stopped when none waits. */
  private readonly pending = new SharedWork<string, GroupAnswer>();

  constructor(
    private readonly rt: ServeRuntime,
    private readonly scorer: Scorer,
    private readonly journal: RecordSink,
    readonly options: ExchangeOptions,
    private readonly events: ExchangeEvents = {},
  ) {
    const N = rt.agents.length;
    this.part = readingParts(rt.topology, N);
    const parts = Math.max(0, ...this.part) + 1;
    this.bySteps = Array.from({ length: parts }, () => new Map());
    this.byId = Array.from({ length: parts }, () => new Map());
    this.recent = Array.from({ length: N }, () => new Map());
    this.chars = new Array<number>(N).fill(0);
    const w = options.window;
    this.windows = w
      ? Array.from(
          { length: parts },
          (_, p) =>
            new StepWindow(
              this.part.flatMap((q, a) => (q === p ? [a] : [])),
              { keepSteps: w.keepSteps, maxStepsAhead: w.maxStepsAhead, startStep: w.startStep },
              rt.agents,
            ),
        )
      : undefined;
  }

  /** The newest step any agent reached (steps mode; -1 in rounds mode). */
  get newest(): number {
    return this.windows ? Math.max(...this.windows.map((w) => w.newest)) : -1;
  }

  /** Each agent's newest posted step (steps mode). */
  reaches(): Record<string, number> {
    const out: Record<string, number> = {};
    if (this.windows)
      this.rt.agents.forEach((name, a) => {
        out[name] = this.windows![this.part[a]!]!.reachOf(a);
      });
    return out;
  }

  /** Number of (step, group) slots held. */
  get size(): number {
    return this.slots.size;
  }

  /** Restore one replayed journal record of this namespace (checked by `checkReplay` first), applying what is kept as the live service did. */
  restore(r: JournalRecord): void {
    if (r.n !== this.options.namespace) return;
    const agent = this.rt.agentIndex(r.a);
    if (agent === undefined || r.t === 'reply') return;
    if (r.t === 'keys') {
      const slot = this.slot(agent, r.s, r.g);
      if (slot.keys.has(agent)) return;
      this.putKeys(slot, agent, r.k, r.h);
      this.reach(agent, r.s);
      return;
    }
    // An answer is journaled only while its slot is held: one whose slot is gone was dropped by the same rule then.
    const slot = this.slots.get(this.slotKey(agent, r.s, r.g));
    if (slot?.keys.has(agent) && !slot.answers.has(agent))
      slot.answers.set(agent, { value: r.r as GroupAnswer, hash: r.h, seq: this.seq++ });
  }

  /** The records of everything held, in the order they were recorded: replaying them rebuilds this state. */
  snapshot(): { seq: number; record: JournalRecord }[] {
    const n = this.options.namespace;
    const out: { seq: number; record: JournalRecord }[] = [];
    for (const slot of this.slots.values()) {
      for (const [agent, k] of slot.keys)
        out.push({
          seq: k.seq,
          record: { t: 'keys', n, a: this.rt.agents[agent]!, s: slot.step, g: slot.id, h: k.hash, k: k.value },
        });
      for (const [agent, a] of slot.answers)
        out.push({
          seq: a.seq,
          record: { t: 'answer', n, a: this.rt.agents[agent]!, s: slot.step, g: slot.id, h: a.hash, r: a.value },
        });
    }
    return out.sort((x, y) => x.seq - y.seq);
  }

  /** Whether this agent already has keys (and with which fingerprint) for a group. */
  postedHash(agent: number, step: number, id: string): string | undefined {
    return this.slots.get(this.slotKey(agent, step, id))?.keys.get(agent)?.hash;
  }

  /**
   * The round to post a group under when the client has no step of its own (POST /get_reward,
   * POST /v1/samples without one), by docs/guide/serve.md "Rounds without a step": the agent's own
   * unanswered round with the same completions (a retry), else the oldest round in which a peer's
   * group waits and the agent has none, else a round past every round of the id. Matched by
   * problem identity, never by how often each agent posted it, and never into a round whose peers
   * were answered without this agent (their keys are an earlier sampling of the problem).
   */
  nextRound(agent: number, group: PostedGroup): number {
    const id = group.id;
    const hash = groupHash(group);
    const rounds = [...(this.byId[this.part[agent]!]!.get(id) ?? [])].sort((x, y) => x - y);
    let join: number | undefined;
    for (const r of rounds) {
      const slot = this.slots.get(this.slotKey(agent, r, id));
      if (!slot) continue;
      const mine = slot.keys.get(agent);
      if (mine) {
        if (!slot.answers.has(agent) && sameGroup(mine.hash, group, hash)) return r;
      } else if (join === undefined && [...slot.keys.keys()].some((a) => this.waits(slot, a))) join = r;
    }
    return join ?? Math.max(rounds.at(-1) ?? -1, this.rounds.get(`${agent}\u0000${id}`) ?? -1) + 1;
  }

  /**
   * Whether agent `a`'s group in a slot still waits for its supervisors: no answer, and either a
   * request of it is being answered there now, or the slot is its newest round of the id (a retry
   * may resume it after a restart or a 504). One left unanswered in a round it moved past does not.
   */
  private waits(slot: Slot, a: number): boolean {
    if (slot.answers.has(a)) return false;
    return this.pending.has(`${slot.key}\u0000${a}`) || this.rounds.get(`${a}\u0000${slot.id}`) === slot.step;
  }

  /**
   * Post one group without a step and wait for its answer: its answer keys are computed first, then
   * its round is chosen ({@link nextRound}) and its keys stored in the same turn, so that two groups
   * choosing at once (two rollouts of one problem, two agents) never choose from the same state.
   */
  async postRound(
    agent: number,
    group: PostedGroup,
    waitMs: number = this.options.waitMs,
    req?: RequestWork,
  ): Promise<{ round: number; answer: GroupAnswer }> {
    if (this.closing) throw unavailable();
    const max = this.rt.settings.maxKeyChars;
    const keys = await inPhase(req, 'the answer keys of its groups', async (w) =>
      capKeys(await this.scorer.keys(group, w), max),
    );
    const round = this.nextRound(agent, group);
    const [answer] = await this.post(agent, round, [group], waitMs, req, [keys]);
    return { round, answer: answer! };
  }

  /** Whether `agent` holds keys of group `id` at any step (round) its part keeps. */
  private holdsAny(agent: number, id: string): boolean {
    for (const r of this.byId[this.part[agent]!]!.get(id) ?? [])
      if (this.slots.get(this.slotKey(agent, r, id))?.keys.has(agent)) return true;
    return false;
  }

  /** The stored answer of an agent for a group, if any. */
  answerOf(agent: number, step: number, id: string): GroupAnswer | undefined {
    return this.slots.get(this.slotKey(agent, step, id))?.answers.get(agent)?.value;
  }

  /**
   * The answers a stored answer of `agent` was rewarded against, to score one more sample of its
   * group alike: its supervisors' keys (those present now, itself standing for itself with the
   * group's own keys), the group's own keys for the self fallback, undefined for the zero fallback.
   */
  supervisorsOf(agent: number, step: number, id: string, answer: GroupAnswer): AgentAnswers[] | undefined {
    if (answer.source === 'zero') return undefined;
    if (answer.source === 'self') return [{ agent, keys: answer.keys }];
    const slot = this.slots.get(this.slotKey(agent, step, id));
    const sup = this.rt.topology.supervisors(agent, this.rt.agents.length);
    return sup.flatMap((m) => {
      if (m === agent) return [{ agent, keys: answer.keys }];
      const k = slot?.keys.get(m)?.value;
      return k ? [{ agent: m, keys: k }] : [];
    });
  }

  /** The steps (rounds) at which an agent's part holds a group id, newest first. */
  stepsOf(agent: number, id: string): number[] {
    return [...(this.byId[this.part[agent]!]!.get(id) ?? [])].sort((a, b) => b - a);
  }

  /** Throws the coded error a post of this agent at this step would get from the step window (steps mode). */
  checkStep(agent: number, step: number): void {
    this.windows?.[this.part[agent]!]!.admit(step);
  }

  /** Whether an answer is stored for the agent and group. */
  answered(agent: number, step: number, id: string): { hash: string } | undefined {
    return this.slots.get(this.slotKey(agent, step, id))?.answers.get(agent);
  }

  /**
   * Post an agent's groups for a step and wait for their answers (at most `waitMs`, capped by the
   * configured limit). Answers are aligned with `groups`. The plugin work runs as `req`'s, in two
   * phases (the groups' keys, then each answer): when the request goes away or a phase outlasts
   * its time, it stops, and keys are stored only if every group's keys were computed. `given`: the
   * groups' answer keys, already computed (aligned with `groups`): nothing is awaited before they
   * are stored.
   */
  async post(
    agent: number,
    step: number,
    groups: readonly PostedGroup[],
    waitMs = this.options.waitMs,
    req?: RequestWork,
    given?: readonly (readonly (string | null)[])[],
  ): Promise<GroupAnswer[]> {
    if (this.closing) throw unavailable();
    this.admit(agent, step, groups);
    const deadline = performance.now() + Math.min(Math.max(0, waitMs), this.options.waitMs);
    const hashes = mapPacked(groups, (g) => groupHash(g));
    const check = (): void => {
      groups.forEach((g, i) => {
        const posted = this.postedHash(agent, step, g.id);
        if (posted !== undefined && !sameGroup(posted, g, hashes[i]!)) {
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
    const computed = given
      ? fresh.map((i) => given[i]!)
      : await inPhase(req, 'the answer keys of its groups', (w) =>
          Promise.all(fresh.map(async (i) => capKeys(await this.scorer.keys(groups[i]!, w), max))),
        );
    check(); // a concurrent post may have stored keys meanwhile
    this.admit(agent, step, groups); // or moved the window, or filled the agent's step
    this.admitChars(
      agent,
      fresh.reduce((n, i, j) => n + (this.postedHash(agent, step, groups[i]!.id) ? 0 : keyChars(computed[j]!)), 0),
    );
    const records: JournalRecord[] = [];
    const touched: Slot[] = [];
    // Each group's slot, held on to: an old round may be dropped as soon as it is made (its id has
    // newer rounds than `keepRounds`), and its request still answers from it.
    const slots: (Slot | undefined)[] = groups.map((g) => this.slots.get(this.slotKey(agent, step, g.id)));
    fresh.forEach((i, j) => {
      const g = groups[i]!;
      const slot = (slots[i] ??= this.slot(agent, step, g.id));
      if (slot.keys.has(agent)) return;
      this.putKeys(slot, agent, computed[j]!, hashes[i]!);
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
    if (records.length > 0) this.reach(agent, step);
    // Answers are computed while the keys are being written: an answer record is appended after
    // these keys, so when both are ready together they share one write and one fdatasync. The
    // request is answered only once both are durable (an error answer, too, waits for the keys).
    const [keysDone, answersDone] = await Promise.allSettled([
      durable,
      Promise.all(groups.map((g, i) => this.answer(slots[i]!, agent, g, hashes[i]!, deadline, req))),
    ]);
    if (keysDone.status === 'rejected') throw keysDone.reason;
    if (answersDone.status === 'rejected') throw answersDone.reason;
    return answersDone.value;
  }

  /**
   * Whether a post may change anything: its step inside its part's window and room at that step
   * for the agent's new group ids. Throws a coded error and changes nothing otherwise.
   */
  private admit(agent: number, step: number, groups: readonly PostedGroup[]): void {
    const p = this.part[agent]!;
    this.windows?.[p]!.admit(step);
    const cap = this.options.maxGroupsPerStep;
    if (cap !== undefined) {
      const held = this.held.get(`${p}\u0000${step}`)?.get(agent) ?? 0;
      const added = groups.reduce(
        (n, g) => n + (this.slots.get(this.slotKey(agent, step, g.id))?.keys.has(agent) ? 0 : 1),
        0,
      );
      if (added > 0 && held + added > cap) {
        throw new CorlError(
          'CORL_ERR_SERVE_STEP_FULL',
          `expected at most ${cap} distinct group ids of agent "${this.rt.agents[agent]}" at step ${step} (serve.exchange.maxGroupsPerStep), got ${held} held and ${added} new`,
          { where: 'groups' },
        );
      }
    }
  }

  /** Whether the agent may hold `added` more characters of keys; throws the coded error and changes nothing otherwise. */
  private admitChars(agent: number, added: number): void {
    const cap = this.options.maxHeldKeyChars;
    if (cap === undefined || added === 0 || this.chars[agent]! + added <= cap) return;
    throw new CorlError(
      'CORL_ERR_SERVE_KEYS_FULL',
      `expected the answer keys agent "${this.rt.agents[agent]}" holds to stay within ${cap} characters (serve.exchange.maxHeldKeyChars), got ${this.chars[agent]} held and ${added} new`,
      {
        where: 'groups',
        hint: 'post fewer or shorter distinct answers, or raise serve.exchange.maxHeldKeyChars; held keys are let go as their steps leave the window',
      },
    );
  }

  /** Store an agent's keys in a slot and account for them (rounds, recency, per-step counts, characters). */
  private putKeys(slot: Slot, agent: number, keys: readonly (string | null)[], hash: string): void {
    slot.keys.set(agent, { value: keys, hash, seq: this.seq++ });
    this.chars[agent]! += keyChars(keys);
    const stepKey = `${slot.part}\u0000${slot.step}`;
    let counts = this.held.get(stepKey);
    if (!counts) this.held.set(stepKey, (counts = new Map()));
    counts.set(agent, (counts.get(agent) ?? 0) + 1);
    if (this.options.keepGroups === undefined) return;
    const k = `${agent}\u0000${slot.id}`;
    if ((this.rounds.get(k) ?? -1) < slot.step) this.rounds.set(k, slot.step);
    this.touch(agent, slot.part, slot.id);
  }

  /** An agent posted `id`: it becomes its most recent; its least recent beyond `keepGroups` is let go. */
  private touch(agent: number, part: number, id: string): void {
    const recent = this.recent[agent]!;
    const had = recent.delete(id);
    recent.set(id, true);
    if (!had) this.holders.set(`${part}\u0000${id}`, (this.holders.get(`${part}\u0000${id}`) ?? 0) + 1);
    const keep = this.options.keepGroups ?? Infinity;
    while (recent.size > keep) {
      const oldest = recent.keys().next().value as string;
      recent.delete(oldest);
      const h = `${part}\u0000${oldest}`;
      const left = (this.holders.get(h) ?? 1) - 1;
      if (left > 0) this.holders.set(h, left);
      else {
        this.holders.delete(h);
        this.dropId(part, oldest);
      }
    }
  }

  /** Every round of an id, and every agent's round count of it. */
  private dropId(part: number, id: string): void {
    for (const s of [...(this.byId[part]!.get(id) ?? [])]) this.drop(`${part}\u0000${s}\u0000${id}`);
    this.part.forEach((p, a) => {
      if (p === part) this.rounds.delete(`${a}\u0000${id}`);
    });
  }

  /** An agent reached a step: in steps mode, the steps its part no longer keeps are dropped. */
  private reach(agent: number, step: number): void {
    const p = this.part[agent]!;
    const oldest = this.windows?.[p]!.reach(agent, step);
    if (oldest === undefined) return;
    for (const [s, keys] of this.bySteps[p]!) {
      if (s >= oldest) continue;
      for (const k of [...keys]) this.drop(k);
      this.held.delete(`${p}\u0000${s}`);
    }
  }

  private answer(
    slot: Slot,
    agent: number,
    group: PostedGroup,
    hash: string,
    deadline: number,
    req: RequestWork | undefined,
  ): Promise<GroupAnswer> {
    const stored = slot.answers.get(agent);
    if (stored) {
      this.events.replay?.();
      return Promise.resolve(stored.value);
    }
    const lane = req?.lane ?? this.rt.agents[agent]!;
    return this.pending.run(`${slot.key}\u0000${agent}`, { signal: req?.gone, lane }, (w) =>
      this.resolve(slot, agent, group, hash, deadline, req && { ...req, gone: w.signal }),
    );
  }

  private async resolve(
    slot: Slot,
    agent: number,
    group: PostedGroup,
    hash: string,
    deadline: number,
    req: RequestWork | undefined,
  ): Promise<GroupAnswer> {
    const peers = this.peersOf(slot, agent);
    // A pointwise source (a verifier) never looks at supervisors: nothing to wait for.
    if (this.rt.pointwise) {
      return this.store(
        slot,
        agent,
        hash,
        await inPhase(req, 'the rewards of its groups', (w) =>
          this.scorer.score(agent, slot.step, group, peers.own, peers.present(), 'supervisors', w),
        ),
        group,
      );
    }
    if (peers.missing().length) {
      const t = performance.now();
      await this.waitUntil(slot, () => peers.missing().length === 0, deadline, req?.gone);
      if (this.closing) throw unavailable();
      req?.gone?.throwIfAborted();
      this.events.wait?.((performance.now() - t) / 1000, peers.missing().length === 0);
    }
    return this.store(
      slot,
      agent,
      hash,
      await inPhase(req, 'the rewards of its groups', (w) => this.scoreAfterWait(slot, agent, group, peers, w)),
      group,
    );
  }

  /** An agent's supervisors in a slot, and the answer keys of those that hold keys there (its own for itself). */
  private peersOf(slot: Slot, agent: number): Peers {
    const sup = this.rt.topology.supervisors(agent, this.rt.agents.length);
    const others = sup.filter((m) => m !== agent);
    const own = slot.keys.get(agent)!.value;
    const answersOf = (m: number): AgentAnswers => ({ agent: m, keys: m === agent ? own : slot.keys.get(m)!.value });
    return {
      others,
      own,
      missing: () => others.filter((m) => !slot.keys.has(m)),
      present: () =>
        mapPacked(
          sup.filter((m) => m === agent || slot.keys.has(m)),
          answersOf,
        ),
    };
  }

  /** The answer once the wait is over: against every supervisor, the ones that arrived, or the fallback. */
  private async scoreAfterWait(
    slot: Slot,
    agent: number,
    group: PostedGroup,
    peers: Peers,
    w: WorkOptions | undefined,
  ): Promise<GroupAnswer> {
    const absent = peers.missing();
    if (absent.length === 0)
      return this.scorer.score(agent, slot.step, group, peers.own, peers.present(), 'supervisors', w);
    // Supervisors that hold this problem at no kept step (round): they never sampled it (yet).
    const unseen = absent.filter((m) => !this.holdsAny(m, group.id)).length;
    if (unseen > 0) this.events.unseen?.(unseen);
    const marked = (a: GroupAnswer): GroupAnswer => ({
      ...a,
      metrics: { ...a.metrics, 'exchange/peer_unseen': peers.others.length ? unseen / peers.others.length : 0 },
    });
    return marked(await this.fallbackOf(slot, agent, group, { peers, absent }, w));
  }

  private async fallbackOf(
    slot: Slot,
    agent: number,
    group: PostedGroup,
    { peers, absent }: { readonly peers: Peers; readonly absent: readonly number[] },
    w: WorkOptions | undefined,
  ): Promise<GroupAnswer> {
    if (absent.length < peers.others.length) {
      this.events.fallback?.('partial');
      return this.scorer.score(agent, slot.step, group, peers.own, peers.present(), 'partial', w);
    }
    if (this.options.fallback === 'self') {
      this.events.fallback?.('self');
      return this.scorer.score(agent, slot.step, group, peers.own, [{ agent, keys: peers.own }], 'self', w);
    }
    if (this.options.fallback === 'zero') {
      this.events.fallback?.('zero');
      return this.scorer.zero(group, peers.own);
    }
    this.events.fallback?.('error');
    throw new CorlError(
      'CORL_ERR_SERVE_PEER_TIMEOUT',
      `expected the answers of ${absent.map((m) => `"${this.rt.agents[m]}"`).join(', ')} for group "${group.id}" at step ${slot.step}, got none before the wait ran out`,
      { where: `agent "${this.rt.agents[agent]}"` },
    );
  }

  private async store(
    slot: Slot,
    agent: number,
    hash: string,
    computed: GroupAnswer,
    group: PostedGroup,
  ): Promise<GroupAnswer> {
    const existing = slot.answers.get(agent);
    if (existing) return existing.value;
    const capped = capAnswer(computed, this.rt.settings.maxKeyChars);
    // POST /v1/samples: which sample got which reward, so that a retry finds its own (also after a restart).
    const answer = group.members
      ? {
          ...capped,
          members: group.members.map((m) => ({ id: m.id, h: m.h })),
          ...(group.rollout !== undefined ? { rollout: group.rollout } : {}),
        }
      : capped;
    // A slot dropped meanwhile (its steps or rounds left the window while this answer was being
    // computed) is no longer held: the answer goes to the waiting request only, never to the
    // journal, so that a replay drops the slot at the same point and finds nothing after it.
    if (this.slots.get(slot.key) !== slot) return answer;
    slot.answers.set(agent, { value: answer, hash, seq: this.seq++ });
    await this.journal.append([
      {
        t: 'answer',
        n: this.options.namespace,
        a: this.rt.agents[agent]!,
        s: slot.step,
        g: slot.id,
        h: hash,
        r: answer,
      },
    ]);
    // Once durable: a point never counts an answer that a restart could score again.
    this.events.decided?.(this.options.namespace, agent, slot.step, answer);
    return answer;
  }

  private waitUntil(slot: Slot, ready: () => boolean, deadline: number, gone?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const remaining = deadline - performance.now();
      if (ready() || remaining <= 0 || this.closing || gone?.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        slot.waiters.delete(check);
        gone?.removeEventListener('abort', done);
        resolve();
      };
      gone?.addEventListener('abort', done, { once: true });
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

  private drop(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    for (const [agent, k] of slot.keys) this.chars[agent]! -= keyChars(k.value);
    const steps = this.byId[slot.part]!.get(slot.id);
    steps?.delete(slot.step);
    if (steps && steps.size === 0) this.byId[slot.part]!.delete(slot.id);
    const ofStep = this.bySteps[slot.part]!.get(slot.step);
    ofStep?.delete(key);
    if (ofStep && ofStep.size === 0) this.bySteps[slot.part]!.delete(slot.step);
    // Anyone still waiting on it is woken (it answers with what arrived; nothing more will).
    for (const w of [...slot.waiters]) w();
  }

  /**
   * A new round of `id` began: drop that id's rounds older than `keepRounds`, except the new one
   * and each agent's newest (its round count must survive a restart, and the journal records only
   * what is held).
   */
  private pruneRounds(part: number, id: string, fresh: number): void {
    const keep = this.options.keepRounds ?? Infinity;
    const steps = this.byId[part]!.get(id);
    if (!Number.isFinite(keep) || !steps) return;
    const newest = Math.max(...steps);
    const own = new Set<number>();
    this.part.forEach((p, a) => {
      const r = p === part ? this.rounds.get(`${a}\u0000${id}`) : undefined;
      if (r !== undefined) own.add(r);
    });
    for (const s of [...steps])
      if (s <= newest - keep && s !== fresh && !own.has(s)) this.drop(`${part}\u0000${s}\u0000${id}`);
  }

  private slotKey(agent: number, step: number, id: string): string {
    return `${this.part[agent]}\u0000${step}\u0000${id}`;
  }

  private slot(agent: number, step: number, id: string): Slot {
    const part = this.part[agent]!;
    const key = `${part}\u0000${step}\u0000${id}`;
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { key, part, step, id, keys: new Map(), answers: new Map(), waiters: new Set() };
      this.slots.set(key, slot);
      let set = this.bySteps[part]!.get(step);
      if (!set) this.bySteps[part]!.set(step, (set = new Set()));
      set.add(key);
      let steps = this.byId[part]!.get(id);
      if (!steps) this.byId[part]!.set(id, (steps = new Set()));
      steps.add(step);
      this.pruneRounds(part, id, step);
    }
    return slot;
  }
}

function unavailable(): CorlError {
  return new CorlError('CORL_ERR_SERVE_UNAVAILABLE', 'expected a running service, got one shutting down', {
    hint: 'retry against the restarted service; the request is idempotent',
  });
}
