// Where a shard runs: in the calling thread (LocalShard) or in a worker thread (WorkerShard, the
// default: sessions block the thread that runs them, so agents and data-parallel shards each get
// their own). Both take the same jobs; a worker's results come back by structured clone.
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { CorlError, errorLine, isCorlError, type ErrorCode } from '../../../core/errors';
import type { AdamWScalars } from '../../../core/tensor/optim';
import { sessionTimings, type SessionTiming } from '../../../core/tensor/session';
import {
  ShardEngine,
  type ApplyResult,
  type EngineInit,
  type GradResult,
  type Objective,
  type ParamsUpdate,
  type SampledRow,
  type SampleJob,
  type StepResult,
  type StepScalars,
  type TokenBatch,
} from './engine';

/** A unit of work for a shard; `update` carries weights when the shard's copy is stale. */
export type ShardJob =
  | { readonly kind: 'sample'; readonly update: ParamsUpdate; readonly job: SampleJob }
  | {
      readonly kind: 'grads';
      readonly update: ParamsUpdate;
      readonly objective: Objective;
      readonly batches: readonly TokenBatch[];
      readonly scalars: StepScalars;
    }
  | {
      readonly kind: 'step';
      readonly update: ParamsUpdate;
      readonly objective: Objective;
      readonly batch: TokenBatch;
      readonly scalars: StepScalars;
      readonly m: readonly Float32Array[];
      readonly v: readonly Float32Array[];
      readonly adam: AdamWScalars;
      readonly nextVersion: number;
    }
  | {
      readonly kind: 'apply';
      readonly update: ParamsUpdate;
      readonly grads: readonly Float32Array[];
      readonly m: readonly Float32Array[];
      readonly v: readonly Float32Array[];
      readonly adam: AdamWScalars;
      readonly nextVersion: number;
    }
  | {
      readonly kind: 'logprobs';
      readonly update: ParamsUpdate;
      readonly batch: TokenBatch;
      readonly invTemperature: number;
      readonly ref: boolean;
    }
  | { readonly kind: 'profile'; readonly update: ParamsUpdate; readonly reset: boolean };

/** Where a shard's time went since the last reset (benchmarks): per job kind and per graph. */
export interface ShardProfile {
  /** Calls and milliseconds of each job kind, from receiving the job to its result (in the shard's thread). */
  readonly jobs: Record<string, { calls: number; ms: number }>;
  /** Each graph's session runs (see `sessionTimings`). */
  readonly sessions: Record<string, SessionTiming>;
}

/** What each job kind returns. */
export interface ShardResults {
  sample: SampledRow[];
  grads: GradResult;
  step: StepResult;
  apply: ApplyResult;
  logprobs: Float32Array;
  profile: ShardProfile;
}

const jobTimes = new Map<string, { calls: number; ms: number }>();

/** Run a job on an engine. After step and apply the engine keeps the new weights as `nextVersion`. */
export async function runJob(engine: ShardEngine, job: ShardJob): Promise<ShardResults[keyof ShardResults]> {
  if (job.kind === 'profile') {
    const jobs = Object.fromEntries([...jobTimes].map(([k, v]) => [k, { ...v }]));
    if (job.reset) jobTimes.clear();
    return { jobs, sessions: sessionTimings(job.reset) };
  }
  const t0 = performance.now();
  try {
    return await dispatch(engine, job);
  } finally {
    let t = jobTimes.get(job.kind);
    if (!t) jobTimes.set(job.kind, (t = { calls: 0, ms: 0 }));
    t.calls++;
    t.ms += performance.now() - t0;
  }
}

async function dispatch(
  engine: ShardEngine,
  job: Exclude<ShardJob, { kind: 'profile' }>,
): Promise<ShardResults[keyof ShardResults]> {
  engine.setParams(job.update);
  switch (job.kind) {
    case 'sample':
      return engine.sample(job.job);
    case 'grads':
      return engine.grads(job.objective, job.batches, job.scalars);
    case 'logprobs':
      return engine.logprobs(job.batch, job.invTemperature, job.ref);
    case 'step': {
      const r = await engine.step(job.objective, job.batch, job.scalars, job.m, job.v, job.adam);
      engine.setParams({ version: job.nextVersion, params: r.params });
      return r;
    }
    case 'apply': {
      const r = await engine.apply(job.grads, job.m, job.v, job.adam);
      engine.setParams({ version: job.nextVersion, params: r.params });
      return r;
    }
  }
}

/** A shard as the policy sees it. */
export interface ModelShard {
  /** Weight versions the shard holds. */
  version: number;
  refVersion: number;
  run<K extends ShardJob['kind']>(job: Extract<ShardJob, { kind: K }>): Promise<ShardResults[K]>;
  close(): Promise<void>;
}

/** A shard in the calling thread. */
export class LocalShard implements ModelShard {
  version = -1;
  refVersion = -1;
  private readonly engine: ShardEngine;

  constructor(init: EngineInit) {
    this.engine = new ShardEngine(init);
  }

  async run<K extends ShardJob['kind']>(job: Extract<ShardJob, { kind: K }>): Promise<ShardResults[K]> {
    return (await runJob(this.engine, job)) as ShardResults[K];
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}

/** A serialized error crossing the thread boundary. */
export interface WireError {
  readonly message: string;
  readonly code?: string;
  readonly detail?: string;
  readonly where?: string;
  readonly hint?: string;
}

/** Flatten an error for postMessage. */
export function toWire(e: unknown): WireError {
  if (isCorlError(e)) return { message: e.message, code: e.code, detail: e.detail, where: e.where, hint: e.hint };
  return { message: errorLine(e, 2000) };
}

/** Rebuild an error from the wire (coded errors keep their code). */
export function fromWire(w: WireError): Error {
  if (w.code) return new CorlError(w.code as ErrorCode, w.detail ?? w.message, { where: w.where, hint: w.hint });
  return new CorlError(
    'CORL_ERR_TENSOR_RUNTIME',
    `expected the model's worker thread to finish its job, got ${w.message}`,
  );
}

/** A shard in its own worker thread. */
export class WorkerShard implements ModelShard {
  version = -1;
  refVersion = -1;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private dead: Error | undefined;

  constructor(init: EngineInit) {
    this.worker = new Worker(path.join(__dirname, 'worker.js'), { workerData: init });
    this.worker.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: WireError }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(fromWire(m.error!));
    });
    const fail = (e: Error) => {
      this.dead = e;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    this.worker.on('error', (e) =>
      fail(
        new CorlError(
          'CORL_ERR_TENSOR_RUNTIME',
          `expected the model's worker thread to keep running, got ${e.message}`,
          { cause: e },
        ),
      ),
    );
    this.worker.on('exit', (code) =>
      fail(
        new CorlError(
          'CORL_ERR_TENSOR_RUNTIME',
          `expected the model's worker thread to keep running, got an exit with code ${code}`,
        ),
      ),
    );
    this.worker.unref();
  }

  run<K extends ShardJob['kind']>(job: Extract<ShardJob, { kind: K }>): Promise<ShardResults[K]> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.ref();
      this.worker.postMessage({ id, job });
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    }) as Promise<ShardResults[K]>;
  }

  async close(): Promise<void> {
    if (this.dead) return;
    this.dead = new CorlError('CORL_ERR_TENSOR_RUNTIME', 'expected an open model, got a closed one');
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }
}
