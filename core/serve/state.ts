// What a service holds between requests, and how a start rebuilds it from the journal: the two
// exchanges are replayed record by record under the rules the live service applies, and the
// compacted journal is what they then hold (docs/guide/serve.md "Journal and restart").
import { Exchange, type ExchangeEvents, type ExchangeOptions, type RecordSink } from './exchange';
import {
  Journal,
  type ServeIdentity,
  type JournalExchangeState,
  type JournalRecord,
  type JournalState,
} from './journal';
import { LATE, POINTWISE, ReplyLedger } from './ledger';
import { ReplayChecker } from './restore';
import type { ServeBoard } from './board';
import { Scorer } from './scorer';
import type { ServeRuntime } from './setup';

/** The state of a running service. */
export interface ServeState {
  readonly scorer: Scorer;
  /** POST /v1/groups. */
  readonly groups: Exchange;
  /** POST /get_reward under a peer topology. */
  readonly rounds: Exchange;
  /** Replies to POST /get_reward requests sent with an Idempotency-Key. */
  readonly replies: ReplyLedger;
  /** Fingerprints of POST /v1/groups requests sent with an Idempotency-Key (their replies are rebuilt from the answers). */
  readonly groupIds: ReplyLedger;
  /** Answers of late /v1/samples samples (a group scored short), journaled so a retry replays. */
  readonly late: ReplyLedger;
  /** Answers of a pointwise source's /v1/samples samples sent with a stable id, journaled so a retry replays. */
  readonly pointwise: ReplyLedger;
  readonly journal: Journal;
  /** A torn last line was dropped at start. */
  readonly tornTail: boolean;
  /** Start-up notes about the journal. */
  readonly notes: readonly string[];
  /** Records restored (after compaction). */
  readonly restored: number;
}

/** Appends to the journal once it is open (the exchanges exist before it: they decide what it keeps). */
class DeferredSink implements RecordSink {
  journal?: Journal;
  append(records: readonly JournalRecord[]): Promise<void> {
    return this.journal!.append(records);
  }
}

/** The exchanges of a runtime's settings, writing to `sink`. */
function exchanges(rt: ServeRuntime, scorer: Scorer, sink: RecordSink, events: ExchangeEvents): [Exchange, Exchange] {
  const s = rt.settings;
  const exchange = (options: Omit<ExchangeOptions, 'waitMs' | 'fallback'>): Exchange =>
    new Exchange(
      rt,
      scorer,
      sink,
      { waitMs: s.exchange.wait * 1000, fallback: s.exchange.fallback, ...options },
      events,
    );
  const groups = exchange({
    namespace: 'groups',
    window: {
      keepSteps: s.exchange.keepSteps,
      maxStepsAhead: s.exchange.maxStepsAhead,
      startStep: s.exchange.startStep,
    },
    maxGroupsPerStep: s.exchange.maxGroupsPerStep,
    maxHeldKeyChars: s.exchange.maxHeldKeyChars,
  });
  const rounds = exchange({
    namespace: 'get_reward',
    keepGroups: s.getReward.keepGroups,
    keepRounds: s.getReward.keepRounds,
    maxHeldKeyChars: s.exchange.maxHeldKeyChars,
  });
  return [groups, rounds];
}

/** Build the exchanges, replay the journal into them (refusing what it cannot vouch for) and open it for appends. */
export async function openState(
  rt: ServeRuntime,
  identity: ServeIdentity,
  events: ExchangeEvents,
  board?: Pick<ServeBoard, 'restore'>,
): Promise<ServeState> {
  const scorer = new Scorer(rt, events);
  const sink = new DeferredSink();
  const [groups, rounds] = exchanges(rt, scorer, sink, events);
  const keep = { count: rt.settings.keepReplies, bytes: rt.settings.keepReplyBytes };
  const replies = new ReplyLedger(rt.agents, sink, keep, true, () => events.replay?.());
  const groupIds = new ReplyLedger(rt.agents, sink, keep, false);
  // Per agent the newest serve.samples.maxPending late answers (all agents: that times the agents):
  // an agent past its bound lets its own oldest go, never another agent's.
  const lateKeep = { count: rt.settings.samples.maxPending, bytes: rt.settings.keepReplyBytes };
  const late = new ReplyLedger(rt.agents, sink, lateKeep, true, () => events.replay?.(), LATE);
  // A pointwise source's answers, within the stored replies' bounds: a keyed retry is replayed, so
  // it is neither scored nor counted (Prometheus, the metrics sinks) a second time.
  const pointwise = new ReplyLedger(rt.agents, sink, keep, true, () => events.replay?.(), POINTWISE);
  const file = rt.journalFile;
  const parts = { scorer, groups, rounds, replies, groupIds, late, pointwise };
  if (file === undefined) {
    sink.journal = Journal.disabled();
    return {
      ...parts,
      journal: sink.journal,
      tornTail: false,
      notes: ['journal: none (serve.journal is false): labels live in memory only and are lost at restart'],
      restored: 0,
    };
  }
  const s = rt.settings;
  let checker: ReplayChecker | undefined;
  const ctx = { agents: rt.agents, maxStepsAhead: s.exchange.maxStepsAhead };
  const exchangeState = (): JournalExchangeState => ({
    newest: Math.max(groups.newest, s.exchange.startStep),
    maxStepsAhead: s.exchange.maxStepsAhead,
  });
  // Each record is checked as it is read, then restored under the live rules; nothing is rewritten
  // before every record has been checked: a refusal leaves the file as it was.
  const state: JournalState = {
    visit(r, line, header) {
      checker ??= new ReplayChecker(file, ctx, header?.exchange);
      checker.check(r, line);
      groups.restore(r);
      rounds.restore(r);
      replies.restore(r);
      late.restore(r);
      pointwise.restore(r);
      board?.restore(r);
    },
    snapshot: () => ({
      keep: [...groups.snapshot(), ...rounds.snapshot()]
        .map((x) => x.record)
        .concat(replies.snapshot(), late.snapshot(), pointwise.snapshot()),
      exchange: exchangeState(),
    }),
    // Appending under this service's window replays only where the generation's window is the same
    // and its newest step is not behind where this service starts.
    fits: (h) =>
      h.maxStepsAhead === s.exchange.maxStepsAhead && exchangeState().newest <= (checker?.newest ?? h.newest),
  };
  const { journal, replay } = await Journal.open(file, identity, state, {
    growthBytes: s.journalGrowth * 1024 * 1024,
  });
  sink.journal = journal;
  return {
    ...parts,
    journal,
    tornTail: replay.tornTail,
    notes: replay.notes,
    restored: replay.records,
  };
}
