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
import { chooseToken } from '../decoding/sampling';
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
  private spare: Float32Array[] = [];

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

  /** A zeroed buffer of `n` floats, reusing a spare one when one is large enough. */
  private takeBuffer(n: number): Float32Array {
    let best = -1;
    this.spare.forEach((b, i) => {
      if (b.length >= n && (best < 0 || b.length < this.spare[best]!.length)) best = i;
    });
    if (best < 0) return new Float32Array(n);
    const b = this.spare.splice(best, 1)[0]!;
    const view = b.length === n ? b : b.subarray(0, n);
    view.fill(0);
    return view;
  }

  /** Keep buffers for the next job (at most `keep`, the largest). */
  private keepBuffers(bs: readonly Float32Array[], keep: number): void {
    const whole = bs.map((b) => (b.length * 4 === b.buffer.byteLength ? b : new Float32Array(b.buffer as ArrayBuffer)));
    this.spare = [...this.spare, ...whole].sort((a, b) => b.length - a.length).slice(0, keep);
  }

  /** KV-cached batched sampling of every row of the job. */
  async sample(job: SampleJob): Promise<SampledRow[]> {
    const a = this.init.arch;
    const V = a.vocab;
    const H = a.heads;
    const dh = a.dModel / H;
    const L = a.layers;
    const R = job.rows.length;
    if (R === 0) return [];
    const prefill = await this.session('prefill', () => buildPrefillGraph(a, this.specs));
    const decode = await this.session('decode', () => buildDecodeGraph(a, this.specs));
    const pf = this.paramFeeds(this.params);

    // Prefill the distinct prompts, right-padded with the end token (causal attention ignores the padding).
    const P = Math.max(...job.prompts.map((p) => p.length));
    const U = job.prompts.length;
    const ids = new Int32Array(U * P);
    job.prompts.forEach((p, u) => ids.set(p, u * P));
    const pre = await prefill.run({ ...pf, ids: { data: ids, dims: [U, P] } });
    const preLogits = pre.logits!.data as Float32Array;

    // Cache [R, H, cap, dh] per layer. Decoding is bound by reading the cache, so its capacity grows
    // in chunks of 16 slots as the longest row advances instead of starting at the final length.
    const len = job.rows.map((r) => job.prompts[r.prompt]!.length);
    const S = Math.min(a.context, Math.max(...job.rows.map((r, i) => len[i]! + r.maxTokens)));
    const CHUNK = 16;
    const capFor = (n: number) => Math.min(S, Math.ceil(n / CHUNK) * CHUNK);
    let cap = capFor(Math.max(...len) + 1);
    let cacheK = Array.from({ length: L }, () => this.takeBuffer(R * H * cap * dh));
    let cacheV = Array.from({ length: L }, () => this.takeBuffer(R * H * cap * dh));
    for (let l = 0; l < L; l++) {
      const k = pre[`k${l}`]!.data as Float32Array;
      const v = pre[`v${l}`]!.data as Float32Array;
      const ck = cacheK[l]!;
      const cv = cacheV[l]!;
      for (let r = 0; r < R; r++) {
        const u = job.rows[r]!.prompt;
        const n = Math.min(len[r]!, cap) * dh;
        for (let h = 0; h < H; h++) {
          const src = (u * H + h) * P * dh;
          const dst = (r * H + h) * cap * dh;
          for (let j = 0; j < n; j++) {
            ck[dst + j] = k[src + j]!;
            cv[dst + j] = v[src + j]!;
          }
        }
      }
    }
    /** Copy the caches into buffers of `rows` (a subset, in order) × `newCap` slots. */
    const relayout = (rows: readonly number[], slot: Int32Array, width: number, newCap: number) => {
      const move = (c: Float32Array) => {
        const next = this.takeBuffer(rows.length * H * newCap * dh);
        const n = Math.min(cap, newCap) * dh;
        rows.forEach((r, i) => {
          for (let h = 0; h < H; h++) {
            const src = (slot[r]! * H + h) * cap * dh;
            next.set(c.subarray(src, src + n), (i * H + h) * newCap * dh);
          }
        });
        return next;
      };
      void width;
      const old = [...cacheK, ...cacheV];
      cacheK = cacheK.map(move);
      cacheV = cacheV.map(move);
      this.keepBuffers(old, 4 * L);
      cap = newCap;
    };

    const rngs = job.rows.map((r) => new Rng(r.seed));
    const scratch = new Float64Array(2 * V);
    const out = job.rows.map(() => ({
      tokens: [] as number[],
      logprobs: [] as number[],
      entropies: [] as number[],
      meanLogprobs: [] as number[],
      finish: 'length' as 'stop' | 'length',
      text: '',
    }));
    const pos = Int32Array.from(len); // position of the next token to feed
    const last = new Int32Array(R);
    const done = new Uint8Array(R);
    const choose = (r: number, logits: Float32Array, offset: number) => {
      const row = job.rows[r]!;
      const o = out[r]!;
      const suppressEnd = o.tokens.length < (row.minTokens ?? 0);
      const c = chooseToken(
        logits,
        offset,
        V,
        row.temperature,
        row.topP,
        rngs[r]!,
        scratch,
        job.tokenStats,
        suppressEnd ? END : -1,
      );
      o.tokens.push(c.token);
      o.logprobs.push(c.logprob);
      if (job.tokenStats) {
        o.entropies.push(c.entropy);
        o.meanLogprobs.push(c.meanLogprob);
      }
      last[r] = c.token;
      if (c.token === END) {
        o.finish = 'stop';
        done[r] = 1;
        return;
      }
      if (row.stop.length) {
        o.text += this.init.vocab[c.token] ?? '';
        if (row.stop.some((s) => o.text.includes(s))) {
          o.finish = 'stop';
          done[r] = 1;
          return;
        }
      }
      if (o.tokens.length >= row.maxTokens || pos[r]! >= S) done[r] = 1;
    };
    job.rows.forEach((row, r) => {
      if (row.maxTokens <= 0) {
        done[r] = 1;
        return;
      }
      choose(r, preLogits, (row.prompt * P + len[r]! - 1) * V);
    });

    // Decode: every unfinished row advances one token per call; rows are compacted as they finish.
    let active = Array.from({ length: R }, (_, r) => r).filter((r) => !done[r]);
    let slotOf = new Int32Array(R).map((_, r) => r); // row → row of the cache buffers
    let width = R;
    while (active.length > 0) {
      let span = 0;
      for (const r of active) span = Math.max(span, pos[r]!);
      const compact = active.length <= width / 2 && width > 8;
      const grow = span + 1 > cap;
      if (compact || grow) {
        const rows = compact ? active : Array.from({ length: R }, (_, r) => r).filter((r) => slotOf[r]! >= 0);
        relayout(rows, slotOf, width, grow ? capFor(span + 1) : cap);
        const next = new Int32Array(R).fill(-1);
        rows.forEach((r, i) => {
          next[r] = i;
        });
        slotOf = next;
        width = rows.length;
      }
      const B = width;
      const stepIds = new Int32Array(B);
      const stepPos = new Int32Array(B);
      const bias = new Float32Array(B * cap).fill(-1e9);
      for (const r of active) {
        const i = slotOf[r]!;
        stepIds[i] = last[r]!;
        stepPos[i] = pos[r]!;
        bias.fill(0, i * cap, i * cap + pos[r]!);
      }
      const feeds: Record<string, Feed> = {
        ...pf,
        ids: { data: stepIds, dims: [B, 1] },
        positions: { data: stepPos, dims: [B, 1] },
        cache_bias: { data: bias, dims: [B, 1, 1, cap] },
      };
      for (let l = 0; l < L; l++) {
        feeds[`cache_k${l}`] = { data: cacheK[l]!, dims: [B, H, cap, dh] };
        feeds[`cache_v${l}`] = { data: cacheV[l]!, dims: [B, H, cap, dh] };
      }
      const res = await decode.run(feeds);
      const logits = res.logits!.data as Float32Array;
      for (let l = 0; l < L; l++) {
        const k = res[`k${l}`]!.data as Float32Array;
        const v = res[`v${l}`]!.data as Float32Array;
        const ck = cacheK[l]!;
        const cv = cacheV[l]!;
        for (const r of active) {
          const i = slotOf[r]!;
          const p = pos[r]!;
          for (let h = 0; h < H; h++) {
            const src = (i * H + h) * dh;
            const dst = ((i * H + h) * cap + p) * dh;
            for (let j = 0; j < dh; j++) {
              ck[dst + j] = k[src + j]!;
              cv[dst + j] = v[src + j]!;
            }
          }
        }
      }
      for (const r of active) {
        pos[r]!++;
        choose(r, logits, slotOf[r]! * V);
      }
      active = active.filter((r) => !done[r]);
    }
    this.keepBuffers([...cacheK, ...cacheV], 4 * L);
    return out.map((o) => ({
      tokens: Int32Array.from(o.tokens),
      logprobs: Float32Array.from(o.logprobs),
      finish: o.finish,
      ...(job.tokenStats
        ? { entropies: Float32Array.from(o.entropies), meanLogprobs: Float32Array.from(o.meanLogprobs) }
        : {}),
    }));
  }

  /** Release every session. */
  async close(): Promise<void> {
    this.spare = [];
    const all = [...this.sessions.values()];
    this.sessions.clear();
    for (const s of all) await (await s.catch(() => undefined))?.close();
  }
}
