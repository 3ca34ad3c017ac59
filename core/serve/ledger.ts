// Idempotent retries by request id (docs/guide/serve.md "Idempotent retries"): a request sent
// with an `Idempotency-Key` is computed once per agent and key; a retry while it runs waits for
// the same reply, a retry after it gets the stored reply, before and after a restart. A reusable
// unit: any route whose request is not idempotent by its content (each POST /get_reward sample is
// a new sample) runs its work through `run`.
import { hash } from 'node:crypto';
import { CorlError } from '../errors';
import type { RecordSink } from './exchange';
import type { JournalRecord } from './journal';

/** The journal namespace of stored replies. */
export const REPLIES = 'requests';

/** The journal namespace of late /v1/samples answers (docs/guide/serve.md "Late samples"). */
export const LATE = 'late';

/** The journal namespace of pointwise /v1/samples answers: a keyed retry replays, never scores again. */
export const POINTWISE = 'pointwise';

/** Longest accepted request id. */
export const MAX_REQUEST_ID = 200;

/** What a ledger entry holds: the request's fingerprint, and its reply once there is one. */
interface Entry {
  readonly hash: string;
  /** Order among the agent's entries (journaled as the record's step). */
  readonly seq: number;
  reply?: unknown;
  /** Size of the stored reply as JSON (UTF-16 code units, what it holds in memory within a factor 2); 0 before it. */
  bytes: number;
  pending?: Promise<unknown>;
  /** Handed to the journal (from then on in every snapshot, so a compaction keeps it). */
  journaled?: boolean;
}

/** Fingerprint of a request body: a retry must repeat it exactly. */
export function requestHash(value: unknown): string {
  return hash('sha1', JSON.stringify(value), 'base64url');
}

/** The request id of an `Idempotency-Key` header value; undefined when absent. Throws on a malformed one. */
export function requestId(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const v = Array.isArray(header) ? header.join(',') : header;
  if (v.length === 0 || v.length > MAX_REQUEST_ID || !/^[\x21-\x7e]+$/.test(v))
    throw new CorlError(
      'CORL_ERR_SERVE_BAD_REQUEST',
      `expected Idempotency-Key to be 1 to ${MAX_REQUEST_ID} printable ASCII characters without spaces, got ${v.length > MAX_REQUEST_ID ? `${v.length} characters` : JSON.stringify(v)}`,
      {
        where: 'Idempotency-Key',
        hint: 'send a fresh random id per request (a UUID), the same on each of its retries',
      },
    );
  return v;
}

/** How much a ledger holds per agent: the newest `count` requests, and of their replies at most `bytes` (as JSON). */
export interface LedgerBounds {
  readonly count: number;
  readonly bytes: number;
}

/** Size of a reply as the ledger counts it: its JSON length. */
function replyBytes(reply: unknown): number {
  return JSON.stringify(reply)?.length ?? 0;
}

/**
 * Replies by (agent, request id), each agent's newest of them within `keep` (a count, and bytes of
 * replies: both bound memory and the journal), journaled as `reply` records before the reply is
 * sent, so a retry after a restart gets the same bytes.
 */
export class ReplyLedger {
  private readonly entries: Map<string, Entry>[];
  private readonly next: number[];
  /** Bytes of the replies each agent's entries hold. */
  private readonly held: number[];

  constructor(
    private readonly agents: readonly string[],
    private readonly sink: RecordSink,
    private readonly keep: LedgerBounds,
    /**
     * Keep and journal each reply (POST /get_reward); false: keep the fingerprint only, for a route
     * whose retries are answered identically from what it stores anyway (POST /v1/groups), so an id
     * reused with another body is still refused.
     */
    private readonly replies = true,
    private readonly onReplay?: () => void,
    /** Journal namespace of the records (`requests`, or `late` for late /v1/samples answers). */
    private readonly namespace: string = REPLIES,
  ) {
    this.entries = agents.map(() => new Map());
    this.next = agents.map(() => 0);
    this.held = agents.map(() => 0);
  }

  /** Entries held, all agents together. */
  get size(): number {
    return this.entries.reduce((n, m) => n + m.size, 0);
  }

  /**
   * The reply to request `id` of `agent` whose body has fingerprint `fp`: computed by `compute` the
   * first time (and stored once it succeeds; a failure is not stored, so a retry computes again),
   * shared while it runs, replayed after. The same id with another body is 409 CORL_ERR_SERVE_CONFLICT.
   */
  run(agent: number, id: string, fp: string, compute: () => Promise<unknown>): Promise<unknown> {
    const held = this.entries[agent]!;
    const e = held.get(id);
    if (e) {
      if (e.hash !== fp)
        throw new CorlError(
          'CORL_ERR_SERVE_CONFLICT',
          `expected the same body as the first request with Idempotency-Key "${id}" of agent "${this.agents[agent]}", got a different one`,
          { where: 'Idempotency-Key', hint: 'send a new id with every new request; only its retries repeat it' },
        );
      if (e.pending) return e.pending;
      if (!this.replies) return compute();
      this.onReplay?.();
      return Promise.resolve(e.reply);
    }
    const entry: Entry = { hash: fp, seq: this.next[agent]!++, bytes: 0 };
    held.set(id, entry);
    this.evict(agent);
    entry.pending = compute().then(
      async (reply) => {
        if (this.replies) entry.reply = reply;
        if (this.replies && held.get(id) === entry) {
          entry.bytes = replyBytes(reply);
          this.held[agent]! += entry.bytes;
          this.evict(agent);
        }
        // still held (the byte bound may have let it go at once: then it is not journaled either)
        if (this.replies && held.get(id) === entry) {
          entry.journaled = true;
          await this.sink.append([
            { t: 'reply', n: this.namespace, a: this.agents[agent]!, s: entry.seq, g: id, h: fp, r: reply },
          ]);
        }
        entry.pending = undefined;
        return reply;
      },
      (err: unknown) => {
        if (held.get(id) === entry) this.drop(agent, id);
        throw err;
      },
    );
    return entry.pending;
  }

  /** Restore a replayed `reply` record. */
  restore(r: JournalRecord): void {
    if (r.t !== 'reply' || r.n !== this.namespace) return;
    const agent = this.agents.indexOf(r.a);
    if (agent < 0) return;
    this.drop(agent, r.g);
    const bytes = replyBytes(r.r);
    this.entries[agent]!.set(r.g, { hash: r.h, seq: r.s, reply: r.r, bytes, journaled: true });
    this.held[agent]! += bytes;
    this.next[agent] = Math.max(this.next[agent]!, r.s + 1);
    this.evict(agent);
  }

  /** The records of the replies held and handed to the journal, oldest first per agent. */
  snapshot(): JournalRecord[] {
    if (!this.replies) return [];
    const out: JournalRecord[] = [];
    this.entries.forEach((m, agent) => {
      for (const [id, e] of m)
        if (e.journaled)
          out.push({ t: 'reply', n: this.namespace, a: this.agents[agent]!, s: e.seq, g: id, h: e.hash, r: e.reply });
    });
    return out;
  }

  /** Ids held for `agent` (settled or running), oldest first. */
  idsOf(agent: number): IterableIterator<string> {
    return this.entries[agent]!.keys();
  }

  /** Forget request `id` of `agent`. */
  private drop(agent: number, id: string): void {
    const e = this.entries[agent]!.get(id);
    if (!e) return;
    this.entries[agent]!.delete(id);
    this.held[agent]! -= e.bytes;
  }

  /** Forget the agent's oldest requests until it holds at most `keep.count` of them and `keep.bytes` of replies (one is always kept). */
  private evict(agent: number): void {
    const held = this.entries[agent]!;
    while (held.size > this.keep.count || (held.size > 1 && this.held[agent]! > this.keep.bytes))
      this.drop(agent, held.keys().next().value as string);
  }
}
