// One compute shard of the embedded transformer: it owns onnxruntime sessions (built lazily, once
// per graph kind; every dimension that varies is dynamic) and a copy of the weights, and runs the
// jobs the policy sends it: KV-cached sampling, gradients of micro-batches, the fused training step,
// the optimizer step and reference log-probabilities. The policy (policy.ts) keeps the
// authoritative weights and optimizer state; a shard runs in a worker thread (worker.ts) or in
// process. See docs/algorithms/engine.md.
import { CorlError } from '../../../core/errors';
import { compile, GraphSession, type Feed } from '../../../core/tensor/session';
import type { AdamWOptions, AdamWScalars } from '../../../core/tensor/optim';
import { Rng } from '../../../core/util/rng';
import { paramSpecs, type Architecture, type ParamSpec } from './architecture';
import {
  buildApplyGraph,
  buildDecodeGraph,
  buildLogprobGraph,
  buildPrefillGraph,
  buildStepGraph,
  type BuiltGraph,
} from './graphs';
import { decodeRows } from '../decoding/loop';
import { BufferPool, ShardCache } from './kv-cache';
import { END } from './tokenizer';

/** What a shard is built from. */
export interface EngineInit {
  readonly arch: Architecture;
  /** Token pieces (for stop strings). */
  readonly vocab: readonly string[];
  /** Intra-op threads of its sessions. */
  readonly threads: number;
  readonly optimizer: AdamWOptions;
  readonly gradClip: number;
}

/** Which objective a training job computes. */
export type Objective = 'grpo' | 'grpo-kl' | 'ce';

/** A padded batch of training sequences: rows × T (inputs, next-token targets, per-target weights). */
export interface TokenBatch {
  readonly rows: number;
  readonly T: number;
  readonly ids: Int32Array;
  readonly targets: Int32Array;
  readonly weights: Float32Array;
  /** log πold per target (GRPO). */
  readonly old?: Float32Array;
  /** Â per row (GRPO). */
  readonly advantages?: Float32Array;
}

/** Scalars of a training job. */
export interface StepScalars {
  readonly invTemperature: number;
  readonly ratioLow: number;
  readonly ratioHigh: number;
  readonly beta: number;
}

/** Weights sent along with a job when the shard's copy is stale. */
export interface ParamsUpdate {
  readonly version: number;
  readonly params?: Float32Array[];
  readonly refVersion?: number;
  readonly ref?: Float32Array[];
}

/** One sequence to sample. */
export interface SampleRow {
  /** Index into the job's prompts. */
  readonly prompt: number;
  readonly temperature: number;
  readonly topP: number;
  readonly maxTokens: number;
  /** Seed of this row's random stream. */
  readonly seed: number;
  readonly stop: readonly string[];
  /** Never choose the end token before this many tokens (benchmarks use it to fix the length). */
  readonly minTokens?: number;
}

/** A sampling job: distinct encoded prompts and the rows that continue them. */
export interface SampleJob {
  readonly prompts: readonly Int32Array[];
  readonly rows: readonly SampleRow[];
  readonly tokenStats: boolean;
}

/** What sampling returns per row. */
export interface SampledRow {
  readonly tokens: Int32Array;
  readonly logprobs: Float32Array;
  readonly entropies?: Float32Array;
  readonly meanLogprobs?: Float32Array;
  readonly finish: 'stop' | 'length';
}

/** Gradients of a set of micro-batches (summed), their loss and each batch's log-probabilities. */
export interface GradResult {
  readonly grads: Float32Array[];
  readonly loss: number;
  readonly logprobs: Float32Array[];
  /** log πref per batch (KL objective only). */
  readonly ref?: Float32Array[];
}

/** The optimizer's result. */
export interface ApplyResult {
  readonly params: Float32Array[];
  readonly m: Float32Array[];
  readonly v: Float32Array[];
  readonly gradNorm: number;
}

/** The fused step's result. */
export interface StepResult extends ApplyResult {
  readonly loss: number;
  readonly logprobs: Float32Array;
  readonly ref?: Float32Array;
}

const f32 = (v: number): Feed => ({ data: Float32Array.of(v), dims: [] });

/** Sessions and weights of one shard. */
export class ShardEngine {
  readonly specs: ParamSpec[];
  private readonly sessions = new Map<string, Promise<GraphSession>>();
  private params: Float32Array[] = [];
  private version = -1;
  private ref: Float32Array[] | undefined;
  private refVersion = -1;
  /** KV-cache buffers kept from the last sampling job: fresh large allocations cost page faults on every call. */
  private readonly buffers = new BufferPool();

  constructor(readonly init: EngineInit) {
    this.specs = paramSpecs(init.arch);
  }

  /** Take new weights (or a new reference) when the job carries them. */
  setParams(u: ParamsUpdate): void {
    if (u.params) {
      this.params = u.params;
      this.version = u.version;
    }
    if (u.ref) {
      this.ref = u.ref;
      this.refVersion = u.refVersion ?? 0;
    }
    if (this.version !== u.version)
      throw new CorlError(
        'CORL_ERR_TENSOR_GRAPH',
        `expected weights of version ${u.version} in the shard, got version ${this.version}`,
      );
    if (u.refVersion !== undefined && this.refVersion !== u.refVersion)
      throw new CorlError(
        'CORL_ERR_TENSOR_GRAPH',
        `expected reference weights of version ${u.refVersion} in the shard, got version ${this.refVersion}`,
      );
  }

  /** Versions held (so the policy knows what to send). */
  versions(): { version: number; refVersion: number } {
    return { version: this.version, refVersion: this.refVersion };
  }

  private session(key: string, build: () => BuiltGraph): Promise<GraphSession> {
    let s = this.sessions.get(key);
    if (!s) {
      const b = build();
      s = GraphSession.create(compile(b.graph, { outputs: b.outputs }), { threads: this.init.threads });
      this.sessions.set(key, s);
      s.catch(() => this.sessions.delete(key));
    }
    return s;
  }

  private paramFeeds(params: readonly Float32Array[], prefix = ''): Record<string, Feed> {
    const feeds: Record<string, Feed> = {};
    this.specs.forEach((s, i) => {
      feeds[prefix + s.name] = { data: params[i]!, dims: s.shape };
    });
    return feeds;
  }

  private batchFeeds(b: TokenBatch, sc: StepScalars, objective: Objective): Record<string, Feed> {
    const feeds: Record<string, Feed> = {
      ids: { data: b.ids, dims: [b.rows, b.T] },
      targets: { data: b.targets, dims: [b.rows, b.T] },
      weights: { data: b.weights, dims: [b.rows, b.T] },
      inv_temperature: f32(sc.invTemperature),
    };
    if (objective !== 'ce') {
      feeds.old_logprobs = { data: b.old!, dims: [b.rows, b.T] };
      feeds.advantages = { data: b.advantages!, dims: [b.rows, 1] };
      feeds.ratio_low = f32(sc.ratioLow);
      feeds.ratio_high = f32(sc.ratioHigh);
    }
    if (objective === 'grpo-kl') feeds.beta = f32(sc.beta);
    return feeds;
  }

  /** log πθ (or log πref with `ref`) of the batch's targets at the given temperature. */
  async logprobs(b: TokenBatch, invTemperature: number, useRef: boolean): Promise<Float32Array> {
    const params = useRef ? this.ref : this.params;
    if (!params) throw new CorlError('CORL_ERR_TENSOR_GRAPH', 'expected reference weights in the shard, got none');
    const s = await this.session('logprobs', () => buildLogprobGraph(this.init.arch, this.specs));
    const r = await s.run({
      ...this.paramFeeds(params),
      ids: { data: b.ids, dims: [b.rows, b.T] },
      targets: { data: b.targets, dims: [b.rows, b.T] },
      inv_temperature: f32(invTemperature),
    });
    return r.logprobs!.data as Float32Array;
  }

  /** Summed gradients over micro-batches (one onnxruntime call each). */
  async grads(objective: Objective, batches: readonly TokenBatch[], sc: StepScalars): Promise<GradResult> {
    const s = await this.session(`grad-${objective}`, () =>
      buildStepGraph(this.init.arch, this.specs, { objective, gradClip: this.init.gradClip }),
    );
    const acc = this.specs.map((_, i) => new Float32Array(this.params[i]!.length));
    const pf = this.paramFeeds(this.params);
    let loss = 0;
    const logprobs: Float32Array[] = [];
    const refs: Float32Array[] = [];
    for (const b of batches) {
      const feeds = { ...pf, ...this.batchFeeds(b, sc, objective) };
      if (objective === 'grpo-kl') {
        const ref = await this.logprobs(b, sc.invTemperature, true);
        refs.push(ref);
        feeds.ref_logprobs = { data: ref, dims: [b.rows, b.T] };
      }
      const r = await s.run(feeds);
      loss += r.loss!.at(0);
      logprobs.push(r.logprobs!.data as Float32Array);
      this.specs.forEach((spec, i) => {
        const g = r[`grad.${spec.name}`]!.data as Float32Array;
        const a = acc[i]!;
        for (let j = 0; j < a.length; j++) a[j]! += g[j]!;
      });
    }
    return { grads: acc, loss, logprobs, ...(objective === 'grpo-kl' ? { ref: refs } : {}) };
  }

  private adamFeeds(m: readonly Float32Array[], v: readonly Float32Array[], a: AdamWScalars): Record<string, Feed> {
    return {
      ...this.paramFeeds(m, 'm.'),
      ...this.paramFeeds(v, 'v.'),
      adam_step_size: f32(a.stepSize),
      adam_inv_sqrt_bias2: f32(a.invSqrtBias2),
      adam_decay: f32(a.decay),
    };
  }

  private unpack(r: Record<string, { data: unknown }>): ApplyResult {
    const pick = (prefix: string) => this.specs.map((s) => r[`${prefix}${s.name}`]!.data as Float32Array);
    return {
      params: pick('next.'),
      m: pick('next_m.'),
      v: pick('next_v.'),
      gradNorm: (r.grad_norm!.data as Float32Array)[0]!,
    };
  }

  /** Forward, loss, backward, clipping and AdamW in one onnxruntime call. */
  async step(
    objective: Objective,
    b: TokenBatch,
    sc: StepScalars,
    m: readonly Float32Array[],
    v: readonly Float32Array[],
    a: AdamWScalars,
  ): Promise<StepResult> {
    const s = await this.session(`step-${objective}`, () =>
      buildStepGraph(this.init.arch, this.specs, {
        objective,
        optimizer: this.init.optimizer,
        gradClip: this.init.gradClip,
      }),
    );
    const feeds = { ...this.paramFeeds(this.params), ...this.batchFeeds(b, sc, objective), ...this.adamFeeds(m, v, a) };
    let ref: Float32Array | undefined;
    if (objective === 'grpo-kl') {
      ref = await this.logprobs(b, sc.invTemperature, true);
      feeds.ref_logprobs = { data: ref, dims: [b.rows, b.T] };
    }
    const r = await s.run(feeds);
    return {
      ...this.unpack(r),
      loss: r.loss!.at(0),
      logprobs: r.logprobs!.data as Float32Array,
      ...(ref ? { ref } : {}),
    };
  }

  /** Clipping and AdamW on accumulated gradients. */
  async apply(
    grads: readonly Float32Array[],
    m: readonly Float32Array[],
    v: readonly Float32Array[],
    a: AdamWScalars,
  ): Promise<ApplyResult> {
    const s = await this.session('apply', () => buildApplyGraph(this.specs, this.init.optimizer, this.init.gradClip));
    const r = await s.run({
      ...this.paramFeeds(this.params),
      ...this.paramFeeds(grads, 'grad.'),
      ...this.adamFeeds(m, v, a),
    });
    return this.unpack(r);
  }

  /** KV-cached batched sampling of every row of the job (the loop of decoding/loop.ts over this shard's cache). */
  async sample(job: SampleJob): Promise<SampledRow[]> {
    if (job.rows.length === 0) return [];
    const prefill = await this.session('prefill', () => buildPrefillGraph(this.init.arch, this.specs));
    const decode = await this.session('decode', () => buildDecodeGraph(this.init.arch, this.specs));
    const cache = new ShardCache(this.init, job, { prefill, decode }, this.paramFeeds(this.params), this.buffers);
    const rows = job.rows.map((r) => ({ ...r, rng: new Rng(r.seed) }));
    try {
      const out = await decodeRows(rows, cache, { tokenStats: job.tokenStats, end: END });
      return out.map((o) => ({
        tokens: Int32Array.from(o.tokens),
        logprobs: Float32Array.from(o.logprobs),
        finish: o.finish,
        ...(job.tokenStats
          ? { entropies: Float32Array.from(o.entropies), meanLogprobs: Float32Array.from(o.meanLogprobs) }
          : {}),
      }));
    } finally {
      cache.release();
    }
  }

  /** Release every session. */
  async close(): Promise<void> {
    this.buffers.clear();
    const all = [...this.sessions.values()];
    this.sessions.clear();
    for (const s of all) await (await s.catch(() => undefined))?.close();
  }
}
