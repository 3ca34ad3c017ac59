// What a replayed journal record must mean before it is restored (docs/guide/serve.md "Journal
// format and recovery"): a record that passes its checksum can still be nonsense (edited by hand,
// written by a buggy tool, or by an older service that accepted any step); restoring it would
// answer 500 on retry, or move the newest step so far that the compaction drops every label.
import { createHash } from 'node:crypto';
import { CorlError } from '../errors';
import type { JournalRecord, Replay } from './journal';
import { LATE, MAX_REQUEST_ID, POINTWISE, REPLIES } from './ledger';

/** Longest group id POST /v1/groups accepts (and the journal may hold for that namespace). */
export const MAX_GROUP_ID = 1024;
/** Longest request id and rollout tag of a POST /v1/samples sample. */
export const MAX_SAMPLE_ID = 256;

/** Longest id of a journaled late sample: its step, group id (length-prefixed) and sample id. */
export const MAX_LATE_ID = 2048;

/** The namespaces an exchange journals under. */
export const NAMESPACES = ['groups', 'get_reward'] as const;

const SOURCES = ['supervisors', 'partial', 'self', 'zero'];
/** A fingerprint: base64url SHA-256 (43 characters), or a legacy SHA-1 (27; core/serve/fingerprint.ts). */
const HASH = /^(?:[A-Za-z0-9_-]{27}|[A-Za-z0-9_-]{43})$/;

/** What the checks need from the config. */
export interface RestoreContext {
  readonly agents: readonly string[];
  /** The step window of this service: used for version-1 journals, whose header does not say. */
  readonly maxStepsAhead: number;
}

/** What the check learned: the newest POST /v1/groups step the records reach (undefined: none). */
export interface RestoreSummary {
  readonly newest?: number;
}

function isStringOrNull(v: unknown): boolean {
  return v === null || typeof v === 'string';
}

/** A stored reply (namespace `requests`): a known agent, its order, the request id, a fingerprint and an object. */
function checkReply(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a record read from disk, checked field by field here
  r: Record<string, any>,
  bad: (field: string, expected: string, got: unknown) => CorlError,
  agents: ReadonlySet<string>,
  names: readonly string[],
): void {
  if (r.n !== REPLIES && r.n !== LATE && r.n !== POINTWISE)
    throw bad('"n"', `"${REPLIES}", "${LATE}" or "${POINTWISE}"`, r.n);
  if (typeof r.a !== 'string' || !agents.has(r.a))
    throw bad('"a"', `an agent of the config (${names.map((n) => `"${n}"`).join(', ')})`, r.a);
  if (!Number.isSafeInteger(r.s) || r.s < 0) throw bad('"s"', 'an order (a safe integer >= 0)', r.s);
  const most = r.n === REPLIES ? MAX_REQUEST_ID : MAX_LATE_ID;
  if (typeof r.g !== 'string' || r.g.length === 0 || r.g.length > most)
    throw bad('"g"', `a request id (1 to ${most} characters)`, r.g);
  if (typeof r.h !== 'string' || !HASH.test(r.h))
    throw bad('"h"', 'a request fingerprint (27 base64url characters)', r.h);
  if (!r.r || typeof r.r !== 'object' || Array.isArray(r.r)) throw bad('"r"', 'a reply object', r.r);
}

/** A fingerprint of a keys array (the checker keeps this, not the keys: its memory stays small per slot). */
function keysDigest(k: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(k)).digest('base64url');
}

/**
 * Checks each record's fields and what it says against what came before it, record by record as a
 * journal is read (it holds a small fingerprint per slot, never the records): known agent and
 * namespace, a safe step inside the step window of the generation that wrote it, keys posted at
 * most once per (agent, step, group) and every answer after its keys and consistent with them.
 * Throws CORL_ERR_SERVE_JOURNAL_RECORD naming the line and the field; changes nothing.
 */
export class ReplayChecker {
  private readonly agents: ReadonlySet<string>;
  private readonly keys = new Map<string, { h: string; d: string; n: number }>();
  private readonly answered = new Set<string>();
  private readonly rounds = new Map<string, number>();
  private readonly window: number;
  private newestStep: number | undefined;
  private reached: number | undefined;

  /**
   * `header`: the exchange state of the generation read (undefined: a version-1 journal or none, whose
   * window starts at its first step and is `ctx.maxStepsAhead` wide).
   */
  constructor(
    private readonly file: string,
    private readonly ctx: RestoreContext,
    private readonly header: { readonly newest: number; readonly maxStepsAhead: number } | undefined,
  ) {
    this.agents = new Set(ctx.agents);
    this.window = header?.maxStepsAhead ?? ctx.maxStepsAhead;
    this.newestStep = header?.newest;
  }

  /** The newest POST /v1/groups step the header and the records reach (undefined: none). */
  get newest(): number | undefined {
    return this.reached === undefined && this.header === undefined
      ? undefined
      : this.header
        ? Math.max(this.header.newest, this.reached ?? -1)
        : this.reached;
  }

  /** Check one record, read at 1-based `line`. */
  check(rec: JournalRecord, line: number): void {
    // A record as read from disk, not yet the JournalRecord its type claims: checked field by field below.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- every field is checked before it is used
    const r = rec as unknown as Record<string, any>;
    const file = this.file;
    const bad = (field: string, expected: string, got: unknown): CorlError =>
      new CorlError(
        'CORL_ERR_SERVE_JOURNAL_RECORD',
        `expected ${field} of the record at line ${line} of ${file} to be ${expected}, got ${JSON.stringify(got)?.slice(0, 80) ?? 'nothing'}`,
        { where: `${file}:${line}` },
      );
    if (!r || typeof r !== 'object' || Array.isArray(r)) throw bad('the record', 'an object', r);
    if (r.t === 'reply') return checkReply(r, bad, this.agents, this.ctx.agents);
    if (r.t !== 'keys' && r.t !== 'answer') throw bad('"t"', '"keys", "answer" or "reply"', r.t);
    if (!(NAMESPACES as readonly string[]).includes(r.n))
      throw bad('"n"', `one of ${NAMESPACES.map((n) => `"${n}"`).join(', ')}`, r.n);
    if (typeof r.a !== 'string' || !this.agents.has(r.a))
      throw bad('"a"', `an agent of the config (${this.ctx.agents.map((n) => `"${n}"`).join(', ')})`, r.a);
    if (!Number.isSafeInteger(r.s) || r.s < 0) throw bad('"s"', 'a step (a safe integer >= 0)', r.s);
    if (typeof r.g !== 'string' || r.g.length === 0 || (r.n === 'groups' && r.g.length > MAX_GROUP_ID))
      throw bad('"g"', `a group id (1 to ${MAX_GROUP_ID} characters)`, r.g);
    if (typeof r.h !== 'string' || !HASH.test(r.h))
      throw bad('"h"', 'a group fingerprint (27 base64url characters)', r.h);
    const slot = JSON.stringify([r.n, r.a, r.s, r.g]);
    if (r.t === 'keys') return this.checkKeys(r, slot, bad);
    this.checkAnswer(r, slot, bad);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a record read from disk, checked field by field
  private checkKeys(r: Record<string, any>, slot: string, bad: Bad): void {
    if (
      !Array.isArray(r.k) ||
      r.k.length === 0 ||
      !r.k.every((x: unknown) => x === null || (typeof x === 'string' && x !== ''))
    )
      throw bad('"k"', 'a non-empty array of answer keys (non-empty strings or null)', r.k);
    if (this.keys.has(slot))
      throw bad(
        'the record',
        `the first keys of agent "${r.a}" for group "${r.g}" at step ${r.s} (keys are journaled once)`,
        'a second keys record',
      );
    if (r.n === 'groups') {
      const newest = this.newestStep;
      if (newest !== undefined && r.s > newest + this.window)
        throw bad(
          '"s"',
          `a step at most ${this.window} beyond the newest step so far (${newest}), as the service that wrote it enforced`,
          r.s,
        );
      this.newestStep = newest === undefined ? r.s : Math.max(newest, r.s);
      this.reached = this.reached === undefined ? r.s : Math.max(this.reached, r.s);
    } else {
      // Rounds match by problem: an agent joins a peer's newer round, or opens the one past all.
      const round = r.g;
      const prev = this.rounds.get(round);
      if (r.s > (prev ?? -1) + 1)
        throw bad('"s"', `round ${(prev ?? -1) + 1} at most (the round after the newest one of this group)`, r.s);
      if (prev === undefined || r.s > prev) this.rounds.set(round, r.s);
    }
    this.keys.set(slot, { h: r.h, d: keysDigest(r.k), n: r.k.length });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a record read from disk, checked field by field
  private checkAnswer(r: Record<string, any>, slot: string, bad: Bad): void {
    const posted = this.keys.get(slot);
    if (!posted)
      throw bad(
        'the record',
        `an answer after the keys of agent "${r.a}" for group "${r.g}" at step ${r.s}`,
        'an answer without keys',
      );
    if (posted.h !== r.h) throw bad('"h"', `the fingerprint of the keys it answers (${posted.h})`, r.h);
    if (this.answered.has(slot))
      throw bad(
        'the record',
        `the first answer of agent "${r.a}" for group "${r.g}" at step ${r.s} (answers are journaled once)`,
        'a second answer',
      );
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer object, checked field by field below
    const a = r.r as Record<string, any>;
    if (!a || typeof a !== 'object' || Array.isArray(a)) throw bad('"r"', 'an answer object', a);
    if (a.id !== r.g) throw bad('"r.id"', `the group id "${r.g}"`, a.id);
    if (
      !Array.isArray(a.rewards) ||
      a.rewards.length !== posted.n ||
      !a.rewards.every((x: unknown) => typeof x === 'number' && Number.isFinite(x))
    )
      throw bad('"r.rewards"', `${posted.n} finite numbers (one per completion)`, a.rewards);
    if (!Array.isArray(a.keys) || a.keys.length !== posted.n || keysDigest(a.keys) !== posted.d)
      throw bad('"r.keys"', 'the answer keys of the keys record it answers', a.keys);
    if (!SOURCES.includes(a.source)) throw bad('"r.source"', SOURCES.map((s) => `"${s}"`).join(', '), a.source);
    if (a.label !== undefined && !isStringOrNull(a.label)) throw bad('"r.label"', 'a string or null', a.label);
    if (a.ownLabel !== undefined && !isStringOrNull(a.ownLabel))
      throw bad('"r.ownLabel"', 'a string or null', a.ownLabel);
    if (a.agree !== undefined && a.agree !== 0 && a.agree !== 1) throw bad('"r.agree"', '0 or 1', a.agree);
    if (a.labelRight !== undefined && a.labelRight !== 0 && a.labelRight !== 1)
      throw bad('"r.labelRight"', '0 or 1', a.labelRight);
    if (
      a.rewardRight !== undefined &&
      (!Array.isArray(a.rewardRight) ||
        a.rewardRight.length !== posted.n ||
        !a.rewardRight.every((x: unknown) => x === 0 || x === 1))
    )
      throw bad('"r.rewardRight"', `${posted.n} numbers 0 or 1 (one per completion)`, a.rewardRight);
    if (
      !a.metrics ||
      typeof a.metrics !== 'object' ||
      Array.isArray(a.metrics) ||
      !Object.values(a.metrics).every((x) => typeof x === 'number' && Number.isFinite(x))
    )
      throw bad('"r.metrics"', 'an object of finite numbers', a.metrics);
    if (
      a.rollout !== undefined &&
      (r.n === 'groups' || typeof a.rollout !== 'string' || a.rollout.length === 0 || a.rollout.length > MAX_SAMPLE_ID)
    )
      throw bad(
        '"r.rollout"',
        `a rollout tag (1 to ${MAX_SAMPLE_ID} characters) of a group formed without a step`,
        a.rollout,
      );
    this.answered.add(slot);
  }
}

type Bad = (field: string, expected: string, got: unknown) => CorlError;

/** Check every record of a replay read whole (tools, tests): see {@link ReplayChecker}. */
export function checkReplay(replay: Replay, file: string, ctx: RestoreContext): RestoreSummary {
  let header = replay.header?.exchange;
  if (header === undefined) {
    // A version-1 journal has no exchange state: its oldest step stands in for the newest at compaction.
    let oldest: number | undefined;
    for (const r of replay.records)
      if (r?.n === 'groups' && Number.isSafeInteger(r.s) && (oldest === undefined || r.s < oldest)) oldest = r.s;
    if (oldest !== undefined) header = { newest: oldest, maxStepsAhead: ctx.maxStepsAhead };
  }
  const checker = new ReplayChecker(file, ctx, header);
  replay.records.forEach((r, i) => checker.check(r, replay.lines[i]!));
  const newest = checker.newest;
  return newest === undefined ? {} : { newest };
}
