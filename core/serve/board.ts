// The service's own metrics records for its metrics sinks (`metrics` of the serve config, or
// `corl serve --tensorboard DIR`): per agent, what TTRL and Co-RL runs are watched by (pseudo-label
// and reward accuracy against the references trainers send, fallbacks, peers that never sampled
// the problem, the labeled share), one record per point (docs/guide/serve.md "TensorBoard").
//
// A point's step is the trainer's step where the requests carry one (POST /v1/groups, POST
// /v1/samples with `step`): every answer of the agent at that step, written once the agent's
// answers reach a later step (or the service stops). Without a step (POST /get_reward, POST
// /v1/samples without one) each group is a point of its own, at the agent's count of such groups.
// Sinks are written off the answer path: a sink that fails (a full disk) is logged once and
// counted, and the reply goes out all the same. What was written is recorded, before it is
// written, in `<journal>.points.json`, so that a restart never writes a point again.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricsRecord, MetricsRun, MetricsSink } from '../contracts/metrics-sink';
import { deepFreeze } from '../contracts/frozen';
import { CorlError, errorLine } from '../errors';
import { writeFileAtomic } from '../util/fs';
import { readUserText } from '../util/files';
import type { JournalRecord } from './journal';
import type { ServeMetrics } from './prom';
import type { GroupAnswer } from './scorer';
import type { ServeRuntime } from './setup';

/** Stepless points reserved per write of the points file: a crash skips at most this many counts, never reuses one. */
export const STEPLESS_RESERVE = 64;

/** Largest points file read back (one small entry per agent). */
const MAX_POINTS_BYTES = 4 * 1024 * 1024;

/** Counts of one point: the answers of one agent at one step (or one stepless group). */
interface Tally {
  groups: number;
  /** Groups whose source computes a label, and those of them with one (not null). */
  withLabel: number;
  labeled: number;
  labelsGraded: number;
  labelsRight: number;
  rewardsGraded: number;
  rewardsRight: number;
  /** Groups answered by the self or zero fallback, and with some supervisors only. */
  fallbacks: number;
  partial: number;
  /** Supervisors missing from fallback answers that hold the problem at no kept step or round. */
  unseen: number;
}

function emptyTally(): Tally {
  return {
    groups: 0,
    withLabel: 0,
    labeled: 0,
    labelsGraded: 0,
    labelsRight: 0,
    rewardsGraded: 0,
    rewardsRight: 0,
    fallbacks: 0,
    partial: 0,
    unseen: 0,
  };
}

/** What the points file holds per agent: the newest step written (null: none) and the stepless counts reserved. */
interface AgentProgress {
  step: number | null;
  groups: number;
}

/** Where an answer belongs: a trainer's step, or no step (a stepless group, counted per agent). */
export type BoardPlace = { readonly step: number } | 'stepless';

/** How a board is made. */
export interface BoardOptions {
  /** The points file (undefined without a journal: a restart is then a new service). */
  readonly file: string | undefined;
  /** The folder handed to sinks as the run directory. */
  readonly dir: string;
  /** Where notes go (a failing sink, once). */
  readonly log?: (line: string) => void;
}

/** The metrics records of a service's answers, for its metrics sinks. */
export class ServeBoard {
  private readonly progress: AgentProgress[];
  /** Per agent, the tallies of steps not written yet. */
  private readonly open: Map<number, Tally>[];
  /** Per agent, the stepless groups counted (the next one is this plus 1). */
  private readonly counted: number[];
  private chain: Promise<void> = Promise.resolve();
  private readonly failed = new Set<string>();
  private closed = false;

  private constructor(
    private readonly rt: ServeRuntime,
    private readonly sinks: readonly MetricsSink[],
    private readonly names: readonly string[],
    private readonly metrics: ServeMetrics,
    private readonly options: BoardOptions,
    progress: AgentProgress[],
  ) {
    this.progress = progress;
    this.open = rt.agents.map(() => new Map());
    this.counted = progress.map((p) => p.groups);
  }

  /**
   * Read what an earlier service wrote (its points file), and start every sink: a new service (no
   * points file) as a new run, a restarted one as a resume at the newest point written, so a
   * sink keeps what it holds and the service writes only later points.
   */
  static async open(
    rt: ServeRuntime,
    sinks: readonly MetricsSink[],
    names: readonly string[],
    metrics: ServeMetrics,
    options: BoardOptions,
  ): Promise<ServeBoard> {
    const read = options.file === undefined ? undefined : readProgress(options.file, rt.agents, rt.journalFile);
    const progress = rt.agents.map((name) => ({ ...(read?.[name] ?? { step: null, groups: 0 }) }));
    let resumeAt: number | null = null;
    if (read) {
      resumeAt = Math.max(0, ...progress.map((p) => Math.max(p.step ?? 0, p.groups)));
      // A sink resumed at 0 keeps nothing: a point of step 0 it held is written again (rebuilt from the journal).
      if (resumeAt === 0) for (const p of progress) p.step = null;
    }
    const board = new ServeBoard(rt, sinks, names, metrics, options, progress);
    const run: MetricsRun = deepFreeze({ dir: options.dir, config: rt.config, agents: rt.agents, resumeAt });
    for (const [i, s] of sinks.entries()) {
      try {
        await s.start?.(run);
      } catch (e) {
        throw sinkError(e, names[i], 'when the service started');
      }
    }
    return board;
  }

  /** Whether the service has sinks to write to. */
  get active(): boolean {
    return this.sinks.length > 0;
  }

  /** A new answer of `agent` (never a replay of a stored one). */
  decided(agent: number, place: BoardPlace, answer: GroupAnswer): void {
    if (!this.active || this.closed) return;
    if (place === 'stepless') {
      const tally = emptyTally();
      this.count(tally, agent, answer);
      const x = ++this.counted[agent]!;
      this.enqueue(agent, x, tally, 'stepless');
      return;
    }
    const step = place.step;
    const done = this.progress[agent]!.step;
    if (done !== null && step <= done) {
      this.metrics.boardDropped.inc({ agent: this.rt.agents[agent]! });
      return;
    }
    const open = this.open[agent]!;
    let tally = open.get(step);
    if (!tally) open.set(step, (tally = emptyTally()));
    this.count(tally, agent, answer);
    // The agent reached this step: every earlier step it has open is complete.
    for (const s of [...open.keys()].sort((a, b) => a - b)) if (s < step) this.flushStep(agent, s);
  }

  /**
   * A journal record read at start: an answer at a step whose point the earlier service had not
   * written yet is counted again, so that a point interrupted by a crash is whole.
   */
  restore(r: JournalRecord): void {
    if (!this.active || r.t !== 'answer' || r.n !== 'groups') return;
    const agent = this.rt.agentIndex(r.a);
    if (agent === undefined) return;
    const done = this.progress[agent]!.step;
    if (done !== null && r.s <= done) return;
    const open = this.open[agent]!;
    let tally = open.get(r.s);
    if (!tally) open.set(r.s, (tally = emptyTally()));
    this.count(tally, agent, r.r as GroupAnswer);
  }

  /** After the journal was read: each agent's steps before its newest are complete. */
  restored(): void {
    this.open.forEach((open, agent) => {
      const steps = [...open.keys()].sort((a, b) => a - b);
      for (const s of steps.slice(0, -1)) this.flushStep(agent, s);
    });
  }

  /** Write every open step (the service stops), and wait for every write. */
  async close(): Promise<void> {
    if (this.closed) return this.chain;
    this.open.forEach((open, agent) => {
      for (const s of [...open.keys()].sort((a, b) => a - b)) this.flushStep(agent, s);
    });
    this.closed = true;
    await this.chain;
  }

  private count(t: Tally, agent: number, a: GroupAnswer): void {
    t.groups++;
    if (a.label !== undefined) {
      t.withLabel++;
      if (a.label !== null) t.labeled++;
    }
    if (a.labelRight !== undefined) {
      t.labelsGraded++;
      t.labelsRight += a.labelRight;
    }
    if (a.rewardRight) {
      t.rewardsGraded += a.rewardRight.length;
      t.rewardsRight += a.rewardRight.reduce((x, y) => x + y, 0);
    }
    if (a.source === 'self' || a.source === 'zero') t.fallbacks++;
    if (a.source === 'partial') t.partial++;
    const others = this.rt.topology.supervisors(agent, this.rt.agents.length).filter((m) => m !== agent).length;
    t.unseen += Math.round((a.metrics['exchange/peer_unseen'] ?? 0) * others);
  }

  private flushStep(agent: number, step: number): void {
    const open = this.open[agent]!;
    const tally = open.get(step);
    if (!tally) return;
    open.delete(step);
    const p = this.progress[agent]!;
    if (p.step !== null && step <= p.step) return;
    p.step = step;
    this.enqueue(agent, step, tally, 'step');
  }

  /** One point: its place recorded in the points file first, then the record to every sink, in order. */
  private enqueue(agent: number, step: number, t: Tally, kind: 'step' | 'stepless'): void {
    const record: MetricsRecord = deepFreeze({ step, agent, phase: 'train', metrics: pointMetrics(t) });
    const p = this.progress[agent]!;
    const reserve = kind === 'stepless' && step > p.groups;
    if (reserve) p.groups = step + STEPLESS_RESERVE - 1;
    const snapshot = kind === 'step' || reserve ? this.snapshot() : undefined;
    this.chain = this.chain.then(async () => {
      if (snapshot !== undefined && this.options.file !== undefined) {
        try {
          await writeFileAtomic(this.options.file, snapshot);
        } catch (e) {
          // Unrecorded, the point could be written again after a restart: it is not written.
          this.fail('the points file', e);
          return;
        }
      }
      for (const [i, s] of this.sinks.entries()) {
        try {
          await s.write(record);
        } catch (e) {
          this.fail(this.names[i] ?? `metrics[${i}]`, e);
        }
      }
      this.metrics.boardPoints.inc({ agent: this.rt.agents[agent]! });
    });
  }

  private snapshot(): string {
    const agents: Record<string, AgentProgress> = {};
    this.rt.agents.forEach((name, a) => {
      agents[name] = { ...this.progress[a]! };
    });
    return JSON.stringify({ version: 1, agents }, null, 2) + '\n';
  }

  private fail(what: string, e: unknown): void {
    this.metrics.sinkErrors.inc({ sink: what });
    if (this.failed.has(what)) return;
    this.failed.add(what);
    this.options.log?.(
      `serve: ${what} failed to take a metrics record (${errorLine(e)}); the service goes on answering, and counts each failure in corl_serve_metrics_sink_errors_total`,
    );
  }
}

/** A point's metrics: counts always; label and reward accuracy only where references came. */
function pointMetrics(t: Tally): Record<string, number> {
  const m: Record<string, number> = { 'serve/groups': t.groups };
  if (t.labelsGraded > 0) {
    m['label/accuracy'] = t.labelsRight / t.labelsGraded;
    m['label/graded'] = t.labelsGraded;
  }
  if (t.rewardsGraded > 0) m['reward/accuracy'] = t.rewardsRight / t.rewardsGraded;
  if (t.withLabel > 0) m['label/labeled'] = t.labeled / t.withLabel;
  m['exchange/fallbacks'] = t.fallbacks;
  m['exchange/partial'] = t.partial;
  m['exchange/peer_unseen'] = t.unseen;
  return m;
}

/** The points file of an earlier service: per agent its newest step written and stepless counts reserved. */
function readProgress(
  file: string,
  agents: readonly string[],
  journal: string | undefined,
): Record<string, AgentProgress> | undefined {
  if (!fs.existsSync(file)) return undefined;
  const refuse = (got: string): CorlError =>
    new CorlError('CORL_ERR_SERVE_POINTS', `expected the points file corl serve writes, got ${got}`, {
      where: file,
      hint: `restore it from a copy; or move it away together with the metrics sinks' folders (corl:tensorboard's event files), which then start anew`,
    });
  // Points are written only after their answers are journaled: without the journal (moved away to
  // start afresh) the file speaks of another service, and every new step would count as written.
  if (journal !== undefined && !fs.existsSync(journal))
    throw refuse(`one without its journal ${journal} (a journal moved away starts a new service)`);
  let value: unknown;
  try {
    value = JSON.parse(readUserText(file, MAX_POINTS_BYTES));
  } catch (e) {
    throw refuse(errorLine(e));
  }
  const v = value as { version?: unknown; agents?: unknown } | null;
  if (!v || typeof v !== 'object' || v.version !== 1 || !v.agents || typeof v.agents !== 'object')
    throw refuse('no object {version: 1, agents}');
  const out: Record<string, AgentProgress> = {};
  for (const [name, e] of Object.entries(v.agents as Record<string, unknown>)) {
    const p = e as { step?: unknown; groups?: unknown } | null;
    const stepOk = p?.step === null || (Number.isSafeInteger(p?.step) && (p!.step as number) >= 0);
    if (!p || !stepOk || !Number.isSafeInteger(p.groups) || (p.groups as number) < 0)
      throw refuse(`agents["${name}"] that is not {step: an integer >= 0 or null, groups: an integer >= 0}`);
    if (agents.includes(name)) out[name] = { step: p.step as number | null, groups: p.groups as number };
  }
  return out;
}

/** A sink's failure to start: coded, naming it, never a stack. */
function sinkError(e: unknown, name: string | undefined, what: string): CorlError {
  if (e instanceof CorlError) return e;
  return new CorlError(
    'CORL_ERR_RUN_SINK',
    `expected "${name ?? 'a metrics sink'}" to accept the service's records, got an error ${what}: ${errorLine(e)}`,
    { where: 'metrics', hint: "fix what the error names (usually the sink's folder), then start the service again" },
  );
}

/** The folder a service hands its sinks as the run directory: its journal's, else the config's. */
export function boardDir(rt: ServeRuntime): string {
  return rt.journalFile !== undefined ? path.dirname(rt.journalFile) : rt.loaded.baseDir;
}
