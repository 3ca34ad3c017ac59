// POST /v1/samples (docs/guide/serve.md "POST /v1/samples"): trainers that score one completion at a
// time (verl's reward loop, a TRL process holding part of a group, OpenRLHF's agent executor) post
// each sample with its group id and the group's declared size; the samples of a group meet here,
// and the complete group goes through the same exchange as POST /v1/groups (with a step) or as
// POST /get_reward (without one: the service counts rounds per group id).
import { CorlError, isCorlError } from '../errors';
import { statusOf } from './http';
import { Mailbox, type Collected } from './mailbox';
import type { Exchange } from './exchange';
import { groupHash, sameGroup } from './fingerprint';
import { byText } from './order';
import { capKeys } from './keys';
import type { ReplyLedger } from './ledger';
import type { ServeBoard } from './board';
import type { ServeMetrics } from './prom';
import { bad, object, parseCompletion } from './requests';
import { MAX_GROUP_ID, MAX_SAMPLE_ID } from './restore';
import {
  sampleGrades,
  type GroupAnswer,
  type LabelSource,
  type PostedCompletion,
  type PostedGroup,
  type Scorer,
} from './scorer';
import type { ServeRuntime } from './setup';
import { inPhase, sharedRequestWork, type RequestWork } from './work';

export { MAX_SAMPLE_ID };

/** One posted sample. */
export interface PostedSample {
  /** The problem's id, the same in every agent's posts. */
  readonly group: string;
  /** How many samples the group has (the GRPO K). */
  readonly size: number;
  /** The sample's position in its group, when the trainer knows it. */
  readonly sample?: number;
  /** The trainer's own id of this group instance (verl's uid): samples with one rollout tag are one group. */
  readonly rollout?: string;
  /** Idempotency key: a retry with the same id gets the same answer. */
  readonly requestId?: string;
  /**
   * The service's id of a sample without a request id posted under an Idempotency-Key: the key and
   * the sample's place in the request (`~k` + JSON), so that the request's retry is the same sample.
   */
  readonly retryId?: string;
  readonly prompt: string;
  readonly completion: PostedCompletion;
  readonly reference?: string;
  readonly testInputs?: readonly (readonly string[])[];
  /**
   * False: a vote-only sample (TTRL's vote-on-more split): it is keyed and votes with its group
   * (`size` counts it), and its answer carries no reward. Absent: a sample the trainer trains on.
   */
  readonly train?: false;
}

/** A POST /v1/samples body: one sample, or several under `samples`. */
export interface SamplesRequest {
  readonly agent: string | number;
  /** The trainer's step; undefined: the service counts rounds per group id. */
  readonly step?: number;
  /** Longest wait for supervisors in seconds (capped by serve.exchange.wait). */
  readonly wait?: number;
  readonly samples: readonly PostedSample[];
  /** Whether the body was one sample (answered with one object) or a `samples` list. */
  readonly single: boolean;
  /** Answer at once with each sample's status; the answers are collected by POST /v1/samples/wait. */
  readonly defer: boolean;
}

/** A POST /v1/samples/wait body: the request ids of deferred samples whose answers the client waits for. */
export interface SamplesWaitRequest {
  readonly agent: string | number;
  readonly requestIds: readonly string[];
  /** Ids whose answers the client received from an earlier wait: the service forgets them. */
  readonly received: readonly string[];
  /** Longest wait in seconds for the first answer (capped by serve.samples.poll). */
  readonly wait?: number;
}

/** What a deferred sample's post answers for it at once. */
export type Accepted =
  | { readonly requestId: string; readonly status: 'pending' }
  | { readonly requestId: string; readonly error: ErrorBody };

/** A coded error as the routes send it. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly status: number;
  readonly where?: string;
  readonly hint?: string;
}

/** What POST /v1/samples/wait answers. */
export interface WaitAnswer {
  /** Answers of the ids that have one (each carries its requestId). */
  readonly samples: readonly SampleAnswer[];
  /** Ids whose sample ended on a coded error. */
  readonly errors: readonly { readonly requestId: string; readonly error: ErrorBody }[];
  /** Ids the service holds nothing for: post their samples again (same request ids). */
  readonly unknown: readonly string[];
  /** How many of the ids still wait. */
  readonly pending: number;
}

/** The answer for one sample. */
export interface SampleAnswer {
  readonly group: string;
  /** The step posted, or the round the service counted. */
  readonly step?: number;
  readonly round?: number;
  readonly sample?: number;
  readonly requestId?: string;
  /** Its reward; null for a vote-only sample (posted with `train: false`). */
  readonly reward: number | null;
  /** False for a vote-only sample. */
  readonly train?: false;
  /** This completion's answer key (null: no answer). */
  readonly key: string | null;
  readonly label?: string | null;
  readonly ownLabel?: string | null;
  readonly source: LabelSource;
  /** Samples the group was scored with (fewer than declared when `serve.samples.wait` ran out). */
  readonly groupSize: number;
  readonly metrics: Readonly<Record<string, number>>;
}

function optionalId(v: unknown, where: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length === 0) throw bad(where, 'a non-empty string', v);
  if (v.length > MAX_SAMPLE_ID)
    throw new CorlError(
      'CORL_ERR_SERVE_LIMIT',
      `expected ${where} to have at most ${MAX_SAMPLE_ID} characters, got ${v.length}`,
      {
        where,
      },
    );
  return v;
}

function parseSample(v: unknown, where: string, limits: SampleLimits): PostedSample {
  const { maxCompletions } = limits;
  const o = object(v, where);
  const at = (f: string): string => (where === 'the request body' ? f : `${where}.${f}`);
  let group: string;
  if (typeof o.group === 'string' && o.group.length > 0) group = o.group;
  else if (Number.isSafeInteger(o.group)) group = String(o.group);
  else throw bad(at('group'), "a group id (non-empty string or integer), the same in every agent's posts", o.group);
  if (group.length > MAX_GROUP_ID)
    throw new CorlError(
      'CORL_ERR_SERVE_LIMIT',
      `expected ${at('group')} to have at most ${MAX_GROUP_ID} characters, got ${group.length}`,
      {
        where: at('group'),
      },
    );
  if (!Number.isSafeInteger(o.size) || (o.size as number) < 1)
    throw bad(at('size'), 'the group size (an integer >= 1: the number of samples of this prompt)', o.size);
  const size = o.size as number;
  if (size > maxCompletions)
    throw new CorlError(
      'CORL_ERR_SERVE_LIMIT',
      `expected ${at('size')} to be at most ${maxCompletions} (serve.maxCompletions), got ${size}`,
      {
        where: at('size'),
      },
    );
  if (
    o.sample !== undefined &&
    o.sample !== null &&
    (!Number.isSafeInteger(o.sample) || (o.sample as number) < 0 || (o.sample as number) >= size)
  )
    throw bad(at('sample'), `the sample's position in its group (0 to ${size - 1})`, o.sample);
  if (o.prompt !== undefined && o.prompt !== null && typeof o.prompt !== 'string')
    throw bad(at('prompt'), 'a string', o.prompt);
  if (o.completion === undefined)
    throw bad(at('completion'), 'a completion (a string or {text, length, ...})', o.completion);
  if (o.reference !== undefined && o.reference !== null && typeof o.reference !== 'string')
    throw bad(at('reference'), 'a string', o.reference);
  let testInputs: string[][] | undefined;
  if (o.testInputs !== undefined && o.testInputs !== null) {
    if (!Array.isArray(o.testInputs)) throw bad(at('testInputs'), 'an array of argument lists', o.testInputs);
    if (o.testInputs.length > (limits.maxTestInputs ?? Infinity))
      throw new CorlError(
        'CORL_ERR_SERVE_LIMIT',
        `expected ${at('testInputs')} to have at most ${limits.maxTestInputs} entries (serve.maxTestInputs), got ${o.testInputs.length}`,
        { where: at('testInputs') },
      );
    testInputs = o.testInputs.map((t, k) => {
      if (!Array.isArray(t) || !t.every((x) => typeof x === 'string'))
        throw bad(`${at('testInputs')}[${k}]`, 'an array of strings', t);
      return t as string[];
    });
  }
  if (o.train !== undefined && o.train !== null && typeof o.train !== 'boolean')
    throw bad(at('train'), 'true (the trainer trains on this sample) or false (it only votes with its group)', o.train);
  const sample = o.sample === undefined || o.sample === null ? undefined : (o.sample as number);
  const rollout = optionalId(o.rollout, at('rollout'));
  const requestId = optionalId(o.requestId, at('requestId'));
  // '#' and '~' start the service's own sample ids (a position, a generated or a key-derived one).
  if (requestId !== undefined && /^[#~]/.test(requestId))
    throw bad(at('requestId'), 'a request id that does not start with "#" or "~" (those name positions)', requestId);
  return {
    group,
    size,
    ...(sample !== undefined ? { sample } : {}),
    ...(rollout !== undefined ? { rollout } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
    prompt: typeof o.prompt === 'string' ? o.prompt : '',
    completion: parseCompletion(o.completion, at('completion')),
    ...(typeof o.reference === 'string' ? { reference: o.reference } : {}),
    ...(testInputs ? { testInputs } : {}),
    ...(o.train === false ? { train: false as const } : {}),
  };
}

/** Count limits of one POST /v1/samples request. */
export interface SampleLimits {
  /** Largest declared group size (`serve.maxCompletions`). */
  readonly maxCompletions: number;
  /** Most samples in one request. */
  readonly maxSamples: number;
  /** Most `testInputs` entries per sample (`serve.maxTestInputs`). */
  readonly maxTestInputs?: number;
}

/** Parse and check a POST /v1/samples body. */
export function parseSamplesRequest(body: unknown, limits: SampleLimits): SamplesRequest {
  const o = object(body, 'the request body');
  if (
    !(typeof o.agent === 'string' && o.agent.length > 0) &&
    !(Number.isSafeInteger(o.agent) && (o.agent as number) >= 0)
  )
    throw bad('agent', 'an agent name (or index)', o.agent);
  if (o.step !== undefined && o.step !== null && (!Number.isSafeInteger(o.step) || (o.step as number) < 0))
    throw bad('step', 'a training step (a safe integer >= 0), or nothing to let the service count rounds', o.step);
  if (o.wait !== undefined && (typeof o.wait !== 'number' || !Number.isFinite(o.wait) || o.wait < 0))
    throw bad('wait', 'a number of seconds >= 0', o.wait);
  const single = o.samples === undefined;
  if (o.defer !== undefined && typeof o.defer !== 'boolean') throw bad('defer', 'true or false', o.defer);
  const defer = o.defer === true;
  if (defer && single)
    throw bad('samples', 'a list of samples (defer needs samples, each with a requestId)', o.samples);
  let samples: PostedSample[];
  if (single) samples = [parseSample(o, 'the request body', limits)];
  else {
    if (!Array.isArray(o.samples) || o.samples.length === 0)
      throw bad('samples', 'a non-empty array of {group, size, completion, ...}', o.samples);
    if (o.samples.length > limits.maxSamples)
      throw new CorlError(
        'CORL_ERR_SERVE_LIMIT',
        `expected samples to have at most ${limits.maxSamples} entries (serve.samples.maxPending, serve.maxRequestCompletions), got ${o.samples.length}`,
        { where: 'samples' },
      );
    samples = o.samples.map((s, i) => parseSample(s, `samples[${i}]`, limits));
    if (defer)
      samples.forEach((s, i) => {
        if (s.requestId === undefined)
          throw bad(`samples[${i}].requestId`, 'a request id (defer collects answers by request id)', undefined);
      });
  }
  return {
    agent: o.agent as string | number,
    ...(o.step !== undefined && o.step !== null ? { step: o.step as number } : {}),
    ...(o.wait !== undefined ? { wait: o.wait as number } : {}),
    samples,
    single,
    defer,
  };
}

/** Parse and check a POST /v1/samples/wait body. */
export function parseSamplesWaitRequest(body: unknown, maxIds: number): SamplesWaitRequest {
  const o = object(body, 'the request body');
  if (
    !(typeof o.agent === 'string' && o.agent.length > 0) &&
    !(Number.isSafeInteger(o.agent) && (o.agent as number) >= 0)
  )
    throw bad('agent', 'an agent name (or index)', o.agent);
  if (!Array.isArray(o.requestIds))
    throw bad('requestIds', 'an array of the request ids of deferred samples', o.requestIds);
  if (o.requestIds.length > maxIds)
    throw new CorlError(
      'CORL_ERR_SERVE_LIMIT',
      `expected requestIds to have at most ${maxIds} entries (serve.samples.maxPending), got ${o.requestIds.length}`,
      { where: 'requestIds' },
    );
  const ids = o.requestIds.map((v, i) => optionalId(v, `requestIds[${i}]`));
  ids.forEach((v, i) => {
    if (v === undefined) throw bad(`requestIds[${i}]`, 'a non-empty string', v);
  });
  if (o.wait !== undefined && (typeof o.wait !== 'number' || !Number.isFinite(o.wait) || o.wait < 0))
    throw bad('wait', 'a number of seconds >= 0', o.wait);
  let received: string[] = [];
  if (o.received !== undefined) {
    if (!Array.isArray(o.received)) throw bad('received', 'an array of request ids', o.received);
    if (o.received.length > maxIds)
      throw new CorlError(
        'CORL_ERR_SERVE_LIMIT',
        `expected received to have at most ${maxIds} entries (serve.samples.maxPending), got ${o.received.length}`,
        { where: 'received' },
      );
    received = o.received.map((v, i) => {
      if (typeof v !== 'string') throw bad(`received[${i}]`, 'a request id', v);
      return v;
    });
  }
  return {
    agent: o.agent as string | number,
    requestIds: [...new Set(ids as string[])],
    received,
    ...(o.wait !== undefined ? { wait: o.wait as number } : {}),
  };
}

interface Waiter {
  resolve(a: SampleAnswer): void;
  reject(e: unknown): void;
}

/** A parked POST /v1/samples/wait request. */
interface Parked {
  readonly agent: number;
  /** Answer it now with what it has (its place is taken by another agent's wait). */
  readonly answer: () => void;
  /** Refuse it with 503 (shutdown). */
  readonly stop: () => void;
}

/**
 * Most POST /v1/samples/wait requests parked at once, all agents together: half the connection
 * places of one peer (or of all), so that waits, which hold their connections, always leave the
 * other half to posts, whatever number of agents share one address.
 */
export function maxParkedWaits(s: { readonly maxConnections: number; readonly maxConnectionsPerPeer: number }): number {
  return Math.max(1, Math.floor(Math.min(s.maxConnections, s.maxConnectionsPerPeer) / 2));
}

interface Member {
  readonly id: string;
  readonly sample: PostedSample;
  /** Fingerprint of what a retry must repeat. */
  readonly hash: string;
  readonly waiters: Waiter[];
  waitMs: number;
  /** Aborted when the member's request goes away (undefined: a sample with an id, whose retry may claim it). */
  readonly gone?: AbortSignal;
}

/** Samples of one group instance waiting for the rest. */
interface Pending {
  readonly key: string;
  readonly agent: number;
  readonly step: number | undefined;
  readonly group: string;
  readonly size: number;
  readonly members: Map<string, Member>;
  timer?: NodeJS.Timeout;
}

/** Members of groups being scored: a retry meanwhile joins the same answer. */
interface InFlight {
  readonly hash: string;
  readonly answer: Promise<SampleAnswer>;
}

function memberHash(s: PostedSample): string {
  return groupHash(memberGroup(s));
}

/** What a sample's fingerprint covers: its group id, completion, reference, and whether it only votes. */
function memberGroup(s: PostedSample): PostedGroup {
  const c = s.completion;
  return {
    id: s.group,
    prompt: '',
    completions: [c],
    ...(s.reference !== undefined ? { reference: s.reference } : {}),
    // A vote-only sample's fingerprint differs from the same sample trained on (a trained one's is
    // what it always was, so journals of earlier versions still replay).
    ...(s.train === false ? { members: [{ id: 'vote-only', h: '' }] } : {}),
  };
}

/** Forms groups from posted samples and scores them through an exchange. */
export class SampleScorer {
  private readonly pending = new Map<string, Pending>();
  private readonly inflight = new Map<string, InFlight>();
  /** Rollout tags whose group was scored, so that a sample past the declared size is refused (bounded). */
  private readonly closed: Map<string, { size: number; round?: number }>[];
  /** Per agent, samples waiting for the rest of their group (each agent within serve.samples.maxPending). */
  private readonly waiting: number[];
  /** Answers of deferred samples until a wait collects them. */
  private readonly mail: Mailbox;
  /** Parked POST /v1/samples/wait requests, oldest first: all of them, and per agent (within serve.samples.maxWaits). */
  private readonly parked = new Set<Parked>();
  private readonly parkedOf: Set<Parked>[];
  /** Most parked waits of all agents together ({@link maxParkedWaits}). */
  private readonly maxParked: number;
  private generated = 0;
  private closing = false;

  constructor(
    private readonly rt: ServeRuntime,
    private readonly scorer: Scorer,
    private readonly exchanges: { readonly steps: Exchange; readonly rounds: Exchange },
    private readonly metrics: ServeMetrics,
    /** Late samples' answers, per agent within its bound (journaled: a retry replays after a restart). */
    private readonly lates: ReplyLedger,
    /** A pointwise source's answers by stable id (journaled: a retry replays, never scores or counts again). */
    private readonly pointwiseAnswers: ReplyLedger,
    /** Where pointwise answers (scored outside the exchange) are counted for the metrics sinks. */
    private readonly board?: Pick<ServeBoard, 'decided'>,
  ) {
    const n = rt.agents.length;
    this.closed = Array.from({ length: n }, () => new Map());
    this.waiting = new Array<number>(n).fill(0);
    this.mail = new Mailbox(n, rt.settings.samples.maxPending);
    this.parkedOf = Array.from({ length: n }, () => new Set());
    this.maxParked = maxParkedWaits(rt.settings);
  }

  /** Samples waiting for the rest of their group, all agents together. */
  get pendingSamples(): number {
    return this.waiting.reduce((a, b) => a + b, 0);
  }

  /** Deferred samples' answers held (waiting or not yet collected), all agents together. */
  get deferred(): number {
    return this.mail.total;
  }

  /** Requests waiting on samples whose groups are still forming: each sample's post and its retries still open. */
  get sampleWaiters(): number {
    let n = 0;
    for (const p of this.pending.values()) for (const m of p.members.values()) n += m.waiters.length;
    return n;
  }

  /** Wait requests parked now. */
  get parkedWaits(): number {
    return this.parked.size;
  }

  /**
   * Answers for a request's samples, aligned with them. `work.gone` aborts when the client goes
   * away: a sample without a request id (or position) then leaves its group, so that a re-sent copy
   * is not counted twice; one with an id stays, and its retry gets its answer. A group's work runs
   * in `work.lane` and stops only when every member's request has gone (core/serve/work.ts).
   */
  post(agent: number, req: SamplesRequest, work: RequestWork): Promise<SampleAnswer[]> {
    if (this.closing) return Promise.reject(unavailable());
    req.samples.forEach((s, i) => this.check(s, req.single ? '' : `samples[${i}].`));
    const waitMs = this.waitMs(req);
    // A step the window refuses is refused before its samples wait for their group.
    if (req.step !== undefined) this.exchanges.steps.checkStep(agent, req.step);
    const answers: Promise<SampleAnswer>[] = [];
    try {
      req.samples.forEach((s, i) =>
        answers.push(this.one(agent, req.step, s, waitMs, req.single ? '' : `samples[${i}]`, work)),
      );
    } catch (e) {
      // The samples before the refused one are posted (a retry finds them by id); nobody awaits them here.
      for (const a of answers) a.catch(() => undefined);
      throw e;
    }
    return Promise.all(answers);
  }

  /**
   * Deferred samples (`defer: true`, each with a request id): each is placed in its group as
   * `post` places it, and answered at once with its status (pending, or its own coded error: one
   * refused sample never refuses the others); its answer is kept for POST /v1/samples/wait. The
   * work runs without `gone`: a sample with an id waits for its collector, not for a connection.
   */
  submit(agent: number, req: SamplesRequest, work: RequestWork): Accepted[] {
    if (this.closing) throw unavailable();
    const waitMs = this.waitMs(req);
    if (req.step !== undefined) this.exchanges.steps.checkStep(agent, req.step);
    const kept: RequestWork = { lane: work.lane, seconds: work.seconds };
    return req.samples.map((s, i) => {
      const id = s.requestId!;
      const where = `samples[${i}]`;
      try {
        this.check(s, `${where}.`);
        const hash = memberHash(s);
        const held = this.mail.get(agent, id);
        if (held) {
          if (held.group !== s.group || held.hash !== hash) throw this.conflict(agent, req.step, s, where);
          this.metrics.replays.inc();
          return { requestId: id, status: 'pending' };
        }
        if (!this.mail.room(agent))
          throw new CorlError(
            'CORL_ERR_SERVE_BUSY',
            `expected at most ${this.rt.settings.samples.maxPending} deferred samples of agent "${this.rt.agents[agent]}" held without an answer (serve.samples.maxPending, per agent), got one more`,
            { where, hint: 'retry after a moment; answered samples free their places' },
          );
        const answer = this.one(agent, req.step, s, waitMs, where, kept);
        this.mail.open(agent, id, s.group, hash);
        answer.then(
          (a) => {
            if (a.reward !== null) this.metrics.completions.inc({ route: '/v1/samples' });
            this.mail.settle(agent, id, { answer: a });
          },
          (e: unknown) => this.mail.settle(agent, id, { error: coded(e) }),
        );
        return { requestId: id, status: 'pending' };
      } catch (e) {
        return { requestId: id, error: errorBody(coded(e)) };
      }
    });
  }

  /**
   * POST /v1/samples/wait: the outcomes of deferred samples, as soon as at least one of the ids
   * has one (those that end together are answered together), or after `waitMs` with none. An
   * outcome is kept until a later wait names it `received`, so one lost on its way (the collector
   * closed the connection, a proxy cut it) is sent again.
   */
  wait(
    agent: number,
    req: { readonly requestIds: readonly string[]; readonly received: readonly string[] },
    waitMs: number,
    gone?: AbortSignal,
  ): Promise<WaitAnswer> {
    if (this.closing) return Promise.reject(unavailable());
    this.mail.ack(agent, req.received);
    const ids = req.requestIds;
    const now = this.mail.collect(agent, ids);
    if (now.ready.length || now.unknown.length || now.pending === 0 || waitMs <= 0)
      return Promise.resolve(waitAnswer(now));
    try {
      this.makeRoom(agent);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      let woken = false;
      const end = (): void => {
        clearTimeout(timer);
        unwatch();
        gone?.removeEventListener('abort', leave);
        this.parked.delete(parked);
        this.parkedOf[agent]!.delete(parked);
      };
      const finish = (): void => {
        end();
        resolve(waitAnswer(this.mail.collect(agent, ids)));
      };
      const leave = (): void => {
        end();
        reject(gone!.reason);
      };
      const stop = (): void => {
        end();
        reject(unavailable());
      };
      // Answers of one group arrive in one turn of the event loop: collect them all, then answer.
      const wake = (): void => {
        if (woken) return;
        woken = true;
        setImmediate(finish);
      };
      const unwatch = this.mail.watch(agent, ids, wake);
      const timer = setTimeout(finish, waitMs);
      const parked: Parked = { agent, answer: finish, stop };
      this.parked.add(parked);
      this.parkedOf[agent]!.add(parked);
      gone?.addEventListener('abort', leave, { once: true });
    });
  }

  /**
   * Room for one more parked wait of `agent`: within its own bound (serve.samples.maxWaits; over
   * it, 503 for this wait, never another agent's), and within the bound of all agents together,
   * where a wait takes the place of the oldest wait of the agent holding the most (answered at
   * once with what it has) when that agent holds at least two more than this one; else 503.
   */
  private makeRoom(agent: number): void {
    const mine = this.parkedOf[agent]!.size;
    const max = this.rt.settings.samples.maxWaits;
    if (mine >= max)
      throw new CorlError(
        'CORL_ERR_SERVE_BUSY',
        `expected at most ${max} POST /v1/samples/wait requests of agent "${this.rt.agents[agent]}" held open at once (serve.samples.maxWaits, per agent), got one more`,
        { where: 'requestIds', hint: 'one wait per collector collects for all its samples; retry after a moment' },
      );
    if (this.parked.size < this.maxParked) return;
    let heavy = agent;
    this.parkedOf.forEach((set, a) => {
      if (set.size > this.parkedOf[heavy]!.size) heavy = a;
    });
    const oldest = this.parkedOf[heavy]!.values().next().value;
    if (heavy === agent || oldest === undefined || this.parkedOf[heavy]!.size < mine + 2)
      throw new CorlError(
        'CORL_ERR_SERVE_BUSY',
        `expected at most ${this.maxParked} POST /v1/samples/wait requests held open at once, all agents together (half of serve.maxConnections or serve.maxConnectionsPerPeer, the smaller), got one more while agent "${this.rt.agents[agent]}" holds ${mine} of them`,
        {
          where: 'requestIds',
          hint: 'retry after a moment; fewer collectors per agent (one wait collects for all its samples)',
        },
      );
    this.metrics.waitsAnswered.inc();
    oldest.answer();
  }

  /** The longest wait for supervisors a request may ask for. */
  private waitMs(req: SamplesRequest): number {
    return Math.min(Math.max(0, (req.wait ?? Infinity) * 1000), this.rt.settings.exchange.wait * 1000);
  }

  /** The checks of one sample against the service's settings (`where`: its field prefix). */
  private check(s: PostedSample, where: string): void {
    const K = this.rt.settings.groupSize;
    if (K > 0 && s.size !== K)
      throw new CorlError(
        'CORL_ERR_SERVE_GROUP_SIZE',
        `expected ${where}size to be ${K} (serve.groupSize), got ${s.size}`,
        {
          where: `${where}size`,
        },
      );
    if (this.rt.readsGroundTruth && s.reference === undefined)
      throw new CorlError(
        'CORL_ERR_SERVE_BAD_REQUEST',
        `expected ${where}reference because "${this.rt.config.reward.use}" reads ground truth, got nothing`,
        { where: `${where}reference` },
      );
  }

  private one(
    agent: number,
    step: number | undefined,
    s: PostedSample,
    waitMs: number,
    where: string,
    work: RequestWork,
  ): Promise<SampleAnswer> {
    if (this.rt.pointwise) return this.pointwiseOnce(agent, step, s, where, work);
    // Its id: the request id, else its position at a step, else the Idempotency-Key's, else its position.
    const position = s.sample !== undefined ? `#${s.sample}` : undefined;
    const stable = s.requestId ?? (step !== undefined ? position : undefined) ?? s.retryId ?? position;
    const id = stable ?? `~${this.generated++}`;
    const hash = memberHash(s);
    const memberKey = keyOf(agent, step, s.group, id);
    const flying = this.inflight.get(memberKey);
    if (flying) {
      if (flying.hash !== hash) throw this.conflict(agent, step, s, where);
      this.metrics.replays.inc();
      return flying.answer;
    }
    // A retry of a sample whose group was already scored (request id, or position with a step).
    if (stable !== undefined && (step !== undefined || s.requestId !== undefined || s.retryId !== undefined)) {
      const stored = this.stored(agent, step, s, id, hash, where);
      if (stored) {
        this.metrics.replays.inc();
        return Promise.resolve(stored);
      }
    }
    // Without a step, samples with one rollout tag form one group (none: one untagged group per id).
    const pendingKey = JSON.stringify([
      'pending',
      agent,
      step ?? null,
      s.group,
      step === undefined ? (s.rollout ?? null) : null,
    ]);
    if (step !== undefined) {
      const done = this.exchanges.steps.answerOf(agent, step, s.group);
      // A group scored with fewer samples than its size (the wait ran out) still has room: its late
      // sample is scored against what the group was (docs/guide/serve.md "Late samples").
      if (done && done.rewards.length < s.size) return this.late(agent, { step }, s, { id, hash }, done, work, where);
      if (done) throw this.complete(agent, step, s, done.rewards.length, where);
    } else if (s.rollout !== undefined) {
      // A rollout's group scored short takes its late samples as a step's does, in its round.
      const c = this.scoredRollout(agent, pendingKey, s.group, s.rollout);
      if (c) {
        const done = c.round === undefined ? undefined : this.exchanges.rounds.answerOf(agent, c.round, s.group);
        if (done && c.round !== undefined && done.rewards.length < s.size)
          return this.late(agent, { round: c.round }, s, { id, hash }, done, work, where);
        throw this.complete(agent, step, s, c.size, where);
      }
    }
    const open = this.pending.get(pendingKey);
    if (open && open.size !== s.size)
      throw new CorlError(
        'CORL_ERR_SERVE_GROUP_SIZE',
        `expected ${where ? `${where}.` : ''}size ${open.size} like the other samples of group "${s.group}" posted by agent "${this.rt.agents[agent]}", got ${s.size}`,
        { where: `${where ? `${where}.` : ''}size` },
      );
    const known = open?.members.get(id);
    const other = open && !known ? open.members.values().next().value : undefined;
    if (other && other.sample.prompt !== s.prompt)
      // One group is one prompt: a group id shared by different prompts (a label column that is the
      // answer, posted as the id) would put the prompts that share an answer into one vote.
      throw new CorlError(
        'CORL_ERR_SERVE_BAD_REQUEST',
        `expected ${where ? `${where}.` : ''}prompt to be the prompt of the other samples of group "${s.group}" posted by agent "${this.rt.agents[agent]}", got another one`,
        {
          where: `${where ? `${where}.` : ''}prompt`,
          hint: 'give each prompt its own group id (a problem id, or a hash of the prompt), never the answer',
        },
      );
    if (known) {
      if (known.hash !== hash) throw this.conflict(agent, step, s, where);
      this.metrics.replays.inc();
      known.waitMs = Math.max(known.waitMs, waitMs);
      return follow(known, work.gone);
    }
    if (this.waiting[agent]! >= this.rt.settings.samples.maxPending)
      throw new CorlError(
        'CORL_ERR_SERVE_BUSY',
        `expected at most ${this.rt.settings.samples.maxPending} samples of agent "${this.rt.agents[agent]}" waiting for their groups (serve.samples.maxPending, per agent), got one more`,
        { where: where || 'samples', hint: 'retry after a moment; complete groups free their samples' },
      );
    // Nothing is created before every check has passed: a refused sample leaves no trace.
    let p = open;
    if (!p) {
      p = { key: pendingKey, agent, step, group: s.group, size: s.size, members: new Map() };
      this.pending.set(pendingKey, p);
      const group = p;
      p.timer = setTimeout(() => this.close(group, true), this.rt.settings.samples.wait * 1000);
    }
    const gone = stable === undefined ? work.gone : undefined;
    const member: Member = { id, sample: s, hash, waiters: [], waitMs, ...(gone ? { gone } : {}) };
    const answer = new Promise<SampleAnswer>((resolve, reject) => member.waiters.push({ resolve, reject }));
    p.members.set(id, member);
    this.waiting[agent]!++;
    if (gone) {
      const group = p;
      gone.addEventListener('abort', () => this.leave(group, id, gone.reason), { once: true });
    }
    if (p.members.size >= p.size) this.close(p, false);
    return answer;
  }

  /** A sample whose client went away leaves its group, if the group is still forming. */
  private leave(p: Pending, id: string, reason: unknown): void {
    const m = p.members.get(id);
    if (this.pending.get(p.key) !== p || !m) return;
    p.members.delete(id);
    this.waiting[p.agent]!--;
    for (const w of m.waiters) w.reject(reason);
    if (p.members.size === 0) {
      clearTimeout(p.timer);
      this.pending.delete(p.key);
    }
  }

  /** The stored answer of a sample whose group was scored, if the sample is one of its members. */
  private stored(
    agent: number,
    step: number | undefined,
    s: PostedSample,
    id: string,
    hash: string,
    where: string,
  ): SampleAnswer | undefined {
    const ex = step === undefined ? this.exchanges.rounds : this.exchanges.steps;
    for (const at of step === undefined ? ex.stepsOf(agent, s.group) : [step]) {
      const a = ex.answerOf(agent, at, s.group);
      const k = a?.members?.findIndex((m) => m.id === id) ?? -1;
      if (!a || k < 0) continue;
      if (!sameGroup(a.members![k]!.h, memberGroup(s), hash)) throw this.conflict(agent, step, s, where);
      return answerOf(a, k, step === undefined ? { round: at } : { step: at }, s);
    }
    return undefined;
  }

  private close(p: Pending, partial: boolean): void {
    if (this.pending.get(p.key) !== p) return;
    this.pending.delete(p.key);
    clearTimeout(p.timer);
    const members = [...p.members.values()];
    if (members.length === 0) return;
    this.waiting[p.agent]! -= members.length;
    this.metrics.sampleGroups.inc({ outcome: partial && members.length < p.size ? 'partial' : 'complete' });
    if (p.step === undefined && members.some((m) => m.sample.rollout !== undefined))
      this.remember(p.agent, p.key, members.length);
    // Scoring order: by text, then sample id, never by arrival (docs/guide/serve.md "Ties").
    members.sort((a, b) => byText(a.sample.completion.text, b.sample.completion.text) || byText(a.id, b.id));
    const first = members[0]!.sample;
    const reference = members.map((m) => m.sample.reference).find((r) => r !== undefined);
    const group: PostedGroup = {
      id: p.group,
      prompt: first.prompt,
      completions: members.map((m) => m.sample.completion),
      // A label-free reward never reads it (the scorer hands it on only to one that reads ground
      // truth); kept for the diagnostics the scorer grades against it.
      ...(reference !== undefined ? { reference } : {}),
      ...(first.testInputs ? { testInputs: first.testInputs } : {}),
      members: members.map((m) => ({ id: m.id, h: m.hash })),
      ...(p.step === undefined && first.rollout !== undefined ? { rollout: first.rollout } : {}),
    };
    const waitMs = Math.max(...members.map((m) => m.waitMs));
    const work = sharedRequestWork(
      this.rt.agents[p.agent]!,
      this.rt.settings.timeouts.work,
      members.map((m) => m.gone),
    );
    const scored = this.score(p.agent, p.step, group, waitMs, work);
    // A rollout whose group got no answer (a 504, a shutdown) is not scored: its retry forms it again.
    if (p.step === undefined)
      scored.then(
        (r) => {
          const c = this.closed[p.agent]!.get(p.key);
          if (c && 'round' in r.at) c.round = r.at.round;
        },
        () => this.closed[p.agent]!.delete(p.key),
      );
    members.forEach((m, k) => {
      const answer = scored.then((r) => answerOf(r.answer, k, r.at, m.sample));
      const key = keyOf(p.agent, p.step, p.group, m.id);
      this.inflight.set(key, { hash: m.hash, answer });
      answer.then(
        (a) => {
          for (const w of m.waiters) w.resolve(a);
        },
        (e) => {
          for (const w of m.waiters) w.reject(e);
        },
      );
      void answer.catch(() => undefined).finally(() => this.inflight.delete(key));
    });
  }

  private remember(agent: number, key: string, size: number): void {
    const closed = this.closed[agent]!;
    closed.set(key, { size });
    // Bounded per agent: the oldest tags go first (scoredRollout then finds them in the rounds kept).
    while (closed.size > this.rt.settings.samples.maxPending) closed.delete(closed.keys().next().value!);
  }

  /**
   * Whether a rollout tag's group of this agent was scored: the tag map while the service runs,
   * else the answers of the rounds kept, which carry their tag and are journaled, so a sample of
   * that rollout arriving after a restart (or after the tag map let it go) still finds its round.
   */
  private scoredRollout(
    agent: number,
    key: string,
    group: string,
    rollout: string,
  ): { readonly size: number; readonly round?: number } | undefined {
    const c = this.closed[agent]!.get(key);
    if (c) return c;
    const rounds = this.exchanges.rounds;
    for (const round of rounds.stepsOf(agent, group)) {
      const a = rounds.answerOf(agent, round, group);
      if (a?.rollout === rollout) return { size: a.rewards.length, round };
    }
    return undefined;
  }

  private async score(
    agent: number,
    step: number | undefined,
    group: PostedGroup,
    waitMs: number,
    work: RequestWork,
  ): Promise<{ answer: GroupAnswer; at: { step: number } | { round: number } }> {
    if (step !== undefined) {
      const [answer] = await this.exchanges.steps.post(agent, step, [group], waitMs, work);
      return { answer: answer!, at: { step } };
    }
    const { round, answer } = await this.exchanges.rounds.postRound(agent, group, waitMs, work);
    return { answer, at: { round } };
  }

  /**
   * A sample of a group already scored with fewer than its size: rewarded alone against the answers
   * the group was rewarded against (its supervisors' keys, its own for the self fallback, 0 for the
   * zero fallback), so that it gets the reward it would have had in its group under a vote. Its
   * answer is stored and journaled under its id (request id, position or Idempotency-Key): a retry
   * gets the same answer, a changed one 409. A group takes late samples only up to its declared
   * size (scored samples and late ones together); one more is 422 CORL_ERR_SERVE_GROUP_SIZE.
   */
  private late(
    agent: number,
    at: { readonly step: number } | { readonly round: number },
    s: PostedSample,
    { id, hash }: { readonly id: string; readonly hash: string },
    done: GroupAnswer,
    work: RequestWork,
    where: string,
  ): Promise<SampleAnswer> {
    const step = 'step' in at ? at.step : undefined;
    const prefix = lateKey('step' in at ? String(at.step) : `r${at.round}`, s.group, '');
    const key = prefix + id;
    let known = false;
    let count = 0;
    for (const k of this.lates.idsOf(agent))
      if (k === key) known = true;
      else if (k.startsWith(prefix)) count++;
    if (!known && done.rewards.length + count >= s.size) throw this.complete(agent, step, s, s.size, where);
    try {
      return this.lates.run(agent, key, hash, () => this.scoreLate(agent, at, s, done, work)) as Promise<SampleAnswer>;
    } catch (e) {
      if (isCorlError(e) && e.code === 'CORL_ERR_SERVE_CONFLICT') throw this.conflict(agent, step, s, where);
      throw e;
    }
  }

  private async scoreLate(
    agent: number,
    at: { readonly step: number } | { readonly round: number },
    s: PostedSample,
    done: GroupAnswer,
    work: RequestWork,
  ): Promise<SampleAnswer> {
    this.metrics.sampleGroups.inc({ outcome: 'late' });
    const group = singleGroup(s);
    const max = this.rt.settings.maxKeyChars;
    const keys = await inPhase(work, 'the answer key of its late sample', async (w) =>
      capKeys(await this.scorer.keys(group, w), max),
    );
    const step = 'step' in at ? at.step : at.round;
    const ex = 'step' in at ? this.exchanges.steps : this.exchanges.rounds;
    const supervisors = ex.supervisorsOf(agent, step, s.group, done);
    const a =
      supervisors === undefined
        ? this.scorer.zero(group, keys)
        : await inPhase(work, 'the reward of its late sample', (w) =>
            this.scorer.score(agent, step, group, keys, supervisors, done.source, w),
          );
    const answer = answerOf(a, 0, at, s);
    return { ...answer, metrics: { ...answer.metrics, 'exchange/late': 1 } };
  }

  /**
   * A pointwise sample with a stable id (its request id; at a step, else its position; else the
   * Idempotency-Key's) is scored once: its retry gets the stored answer, before and after a
   * restart, and a retry with another completion is 409. Without a step, a position alone does not
   * name a sample (the next rollout reuses it), so such a sample is scored as new.
   */
  private pointwiseOnce(
    agent: number,
    step: number | undefined,
    s: PostedSample,
    where: string,
    work: RequestWork,
  ): Promise<SampleAnswer> {
    const position = s.sample !== undefined ? `#${s.sample}` : undefined;
    const stable = s.requestId ?? (step !== undefined ? position : undefined) ?? s.retryId;
    if (stable === undefined) return this.pointwise(agent, step, s, work);
    const key = lateKey(step === undefined ? '-' : String(step), s.group, stable);
    try {
      return this.pointwiseAnswers.run(agent, key, memberHash(s), () =>
        this.pointwise(agent, step, s, work),
      ) as Promise<SampleAnswer>;
    } catch (e) {
      if (isCorlError(e) && e.code === 'CORL_ERR_SERVE_CONFLICT') throw this.conflict(agent, step, s, where);
      throw e;
    }
  }

  /** A pointwise source (a verifier) scores each sample alone, at once. */
  private async pointwise(
    agent: number,
    step: number | undefined,
    s: PostedSample,
    work: RequestWork,
  ): Promise<SampleAnswer> {
    const a = await this.scorer.scoreAlone(agent, step ?? 0, singleGroup(s), work, 'its samples');
    this.board?.decided(agent, step === undefined ? 'stepless' : { step }, a);
    return answerOf(a, 0, step === undefined ? {} : { step }, s);
  }

  private conflict(agent: number, step: number | undefined, s: PostedSample, where: string): CorlError {
    return new CorlError(
      'CORL_ERR_SERVE_CONFLICT',
      `expected the same completion as the first post of ${s.requestId !== undefined ? `request id "${s.requestId}"` : `sample ${s.sample}`} of group "${s.group}"${step === undefined ? '' : ` at step ${step}`} by agent "${this.rt.agents[agent]}", got a different one`,
      { where: where || 'completion', hint: 'a retry repeats its sample; a new sample needs a new request id' },
    );
  }

  private complete(agent: number, step: number | undefined, s: PostedSample, scored: number, where: string): CorlError {
    return new CorlError(
      'CORL_ERR_SERVE_GROUP_SIZE',
      `expected a sample of a group still forming, got one more for group "${s.group}"${step === undefined ? ` (rollout "${s.rollout}")` : ` at step ${step}`} of agent "${this.rt.agents[agent]}", already scored with ${scored} sample(s)`,
      {
        where: where || 'group',
        hint: 'post each sample once (retries repeat its request id); a group with more samples than its declared size is refused',
      },
    );
  }

  /** Fail every waiting sample with 503 (shutdown). */
  shutdown(): void {
    this.closing = true;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      for (const m of p.members.values()) for (const w of m.waiters) w.reject(unavailable());
    }
    this.pending.clear();
    this.waiting.fill(0);
    for (const p of [...this.parked]) p.stop();
    this.mail.clear();
  }
}

/**
 * A retry's share of a sample still waiting for its group: it leaves when its own request goes
 * away, so a client re-sending one sample (and closing) any number of times holds one waiter per
 * open request, never one per retry.
 */
function follow(m: Member, gone: AbortSignal | undefined): Promise<SampleAnswer> {
  return new Promise((resolve, reject) => {
    if (gone?.aborted) return reject(gone.reason);
    const w: Waiter = { resolve, reject };
    m.waiters.push(w);
    gone?.addEventListener(
      'abort',
      () => {
        const i = m.waiters.indexOf(w);
        if (i >= 0) m.waiters.splice(i, 1);
        reject(gone.reason);
      },
      { once: true },
    );
  });
}

function answerOf(
  a: GroupAnswer,
  k: number,
  at: { step?: number; round?: number },
  s: Pick<PostedSample, 'requestId' | 'sample' | 'train'>,
): SampleAnswer {
  const grades = sampleGrades(a, k);
  // A vote-only sample has no reward: nor is its reward graded (reward/accuracy is the trained ones').
  if (s.train === false) delete grades['reward/accuracy'];
  return {
    group: a.id,
    ...at,
    ...(s.sample !== undefined ? { sample: s.sample } : {}),
    ...(s.requestId !== undefined ? { requestId: s.requestId } : {}),
    reward: s.train === false ? null : a.rewards[k]!,
    ...(s.train === false ? { train: false as const } : {}),
    key: a.keys[k] ?? null,
    ...(a.label !== undefined ? { label: a.label } : {}),
    ...(a.ownLabel !== undefined ? { ownLabel: a.ownLabel } : {}),
    source: a.source,
    groupSize: a.rewards.length,
    metrics: { ...a.metrics, ...grades },
  };
}

/** The ledger id of a late sample: its step, its group id length-prefixed, then its sample id (no two share one). */
function lateKey(step: string, group: string, id: string): string {
  return `${step}\u0000${group.length}:${group}\u0000${id}`;
}

/** The key of a sample of a group being scored: its fields as JSON, so no two samples share one. */
function keyOf(agent: number, step: number | undefined, group: string, id: string): string {
  return JSON.stringify([agent, step ?? null, group, id]);
}

function waitAnswer(c: Collected): WaitAnswer {
  const samples: SampleAnswer[] = [];
  const errors: { requestId: string; error: ErrorBody }[] = [];
  for (const [requestId, o] of c.ready) {
    if ('answer' in o) samples.push(o.answer);
    else errors.push({ requestId, error: errorBody(o.error) });
  }
  return { samples, errors, unknown: c.unknown, pending: c.pending };
}

/** A thrown value as a coded error (an uncoded one is an internal error, 500). */
function coded(e: unknown): CorlError {
  return isCorlError(e)
    ? e
    : new CorlError(
        'CORL_ERR_SERVE_INTERNAL',
        `expected to score the sample, got ${(e as Error)?.message ?? String(e)}`,
        {
          cause: e,
        },
      );
}

function errorBody(e: CorlError): ErrorBody {
  return {
    code: e.code,
    message: e.message,
    status: statusOf(e),
    ...(e.where !== undefined ? { where: e.where } : {}),
    ...(e.hint !== undefined ? { hint: e.hint } : {}),
  };
}

function unavailable(): CorlError {
  return new CorlError('CORL_ERR_SERVE_UNAVAILABLE', 'expected a running service, got one shutting down', {
    hint: 'retry against the restarted service; samples with a request id are idempotent',
  });
}

/** A group of one posted sample (a late sample's, a pointwise source's), with its reference and test inputs. */
function singleGroup(s: PostedSample): PostedGroup {
  return {
    id: s.group,
    prompt: s.prompt,
    completions: [s.completion],
    ...(s.reference !== undefined ? { reference: s.reference } : {}),
    ...(s.testInputs ? { testInputs: s.testInputs } : {}),
  };
}
