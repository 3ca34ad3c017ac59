// The KV cache of one shard's sampling job, the model side of decoding/loop.ts: the prefill of the
// distinct prompts copied to the rows that continue them, then one decoding call per token over the
// active rows. The cache is [rows, heads, capacity, head_dim] per layer and key/value; decoding is
// bound by reading it, so its capacity grows in chunks of 16 slots as the longest row advances
// instead of starting at the final length, and rows are compacted away once half have finished.
import type { Feed, GraphSession } from '../../../core/tensor/session';
import type { DecodeModel, RowCheck, StepLogits } from '../decoding/loop';
import { stopAt } from '../decoding/requests';
import type { EngineInit, SampleJob } from './engine';
import { END } from './tokenizer';

const CHUNK = 16;

/** Float buffers kept between sampling jobs: fresh large allocations cost page faults on every call. */
export class BufferPool {
  private spare: Float32Array[] = [];

  /** A zeroed buffer of `n` floats, reusing a spare one when one is large enough. */
  take(n: number): Float32Array {
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
  keep(bs: readonly Float32Array[], keep: number): void {
    const whole = bs.map((b) => (b.length * 4 === b.buffer.byteLength ? b : new Float32Array(b.buffer as ArrayBuffer)));
    this.spare = [...this.spare, ...whole].sort((a, b) => b.length - a.length).slice(0, keep);
  }

  clear(): void {
    this.spare = [];
  }
}

/** The prefill and decoding sessions of a shard. */
export interface SamplingSessions {
  readonly prefill: GraphSession;
  readonly decode: GraphSession;
}

/** One job's cache and the calls that fill it. */
export class ShardCache implements DecodeModel {
  private readonly H: number;
  private readonly dh: number;
  private readonly L: number;
  private readonly R: number;
  /** Prompt length of each row. */
  private readonly len: number[];
  /** Most slots any row needs (prompt + new tokens, within the context). */
  private readonly S: number;
  private cap: number;
  private cacheK: Float32Array[] = [];
  private cacheV: Float32Array[] = [];
  /** Row → row of the cache buffers (−1 once compacted away). */
  private slotOf: Int32Array;
  private width: number;
  /** Decoded text of rows with stop strings. */
  private readonly text: string[];

  constructor(
    private readonly init: EngineInit,
    private readonly job: SampleJob,
    private readonly sessions: SamplingSessions,
    private readonly params: Record<string, Feed>,
    private readonly pool: BufferPool,
  ) {
    const a = init.arch;
    this.H = a.heads;
    this.dh = a.dModel / a.heads;
    this.L = a.layers;
    this.R = job.rows.length;
    this.len = job.rows.map((r) => job.prompts[r.prompt]!.length);
    this.S = Math.min(a.context, Math.max(...job.rows.map((r, i) => this.len[i]! + r.maxTokens)));
    this.cap = this.capFor(Math.max(...this.len) + 1);
    this.slotOf = new Int32Array(this.R).map((_, r) => r);
    this.width = this.R;
    this.text = job.rows.map(() => '');
  }

  private capFor(n: number): number {
    return Math.min(this.S, Math.ceil(n / CHUNK) * CHUNK);
  }

  /** Prefill the distinct prompts, right-padded with the end token (causal attention ignores the padding). */
  async prefill(): Promise<StepLogits> {
    const { H, dh, L, R, job } = this;
    const V = this.init.arch.vocab;
    const P = Math.max(...job.prompts.map((p) => p.length));
    const U = job.prompts.length;
    const ids = new Int32Array(U * P);
    job.prompts.forEach((p, u) => ids.set(p, u * P));
    const pre = await this.sessions.prefill.run({ ...this.params, ids: { data: ids, dims: [U, P] } });
    const cap = this.cap;
    this.cacheK = Array.from({ length: L }, () => this.pool.take(R * H * cap * dh));
    this.cacheV = Array.from({ length: L }, () => this.pool.take(R * H * cap * dh));
    for (let l = 0; l < L; l++) {
      const k = pre[`k${l}`]!.data as Float32Array;
      const v = pre[`v${l}`]!.data as Float32Array;
      const ck = this.cacheK[l]!;
      const cv = this.cacheV[l]!;
      for (let r = 0; r < R; r++) {
        const u = job.rows[r]!.prompt;
        const n = Math.min(this.len[r]!, cap) * dh;
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
    const len = this.len;
    return {
      logits: pre.logits!.data as Float32Array,
      vocab: V,
      offset: (r) => (job.rows[r]!.prompt * P + len[r]! - 1) * V,
    };
  }

  /** Copy the caches into buffers of `rows` (a subset, in order) × `newCap` slots. */
  private relayout(rows: readonly number[], newCap: number): void {
    const { H, dh, cap, slotOf } = this;
    const move = (c: Float32Array) => {
      const next = this.pool.take(rows.length * H * newCap * dh);
      const n = Math.min(cap, newCap) * dh;
      rows.forEach((r, i) => {
        for (let h = 0; h < H; h++) {
          const src = (slotOf[r]! * H + h) * cap * dh;
          next.set(c.subarray(src, src + n), (i * H + h) * newCap * dh);
        }
      });
      return next;
    };
    const old = [...this.cacheK, ...this.cacheV];
    this.cacheK = this.cacheK.map(move);
    this.cacheV = this.cacheV.map(move);
    this.pool.keep(old, 4 * this.L);
    this.cap = newCap;
    const next = new Int32Array(this.R).fill(-1);
    rows.forEach((r, i) => {
      next[r] = i;
    });
    this.slotOf = next;
    this.width = rows.length;
  }

  /** Every active row advances one token in one call; the cache compacts or grows first when it should. */
  async step(active: readonly number[], tokens: readonly (readonly number[])[]): Promise<StepLogits> {
    const { H, dh, L, len } = this;
    const pos = (r: number) => len[r]! + tokens[r]!.length - 1; // position of the token to feed
    let span = 0;
    for (const r of active) span = Math.max(span, pos(r));
    const compact = active.length <= this.width / 2 && this.width > 8;
    const grow = span + 1 > this.cap;
    if (compact || grow) {
      const rows = compact ? active : Array.from({ length: this.R }, (_, r) => r).filter((r) => this.slotOf[r]! >= 0);
      this.relayout(rows, grow ? this.capFor(span + 1) : this.cap);
    }
    const { cap, slotOf } = this;
    const B = this.width;
    const stepIds = new Int32Array(B);
    const stepPos = new Int32Array(B);
    const bias = new Float32Array(B * cap).fill(-1e9);
    for (const r of active) {
      const i = slotOf[r]!;
      stepIds[i] = tokens[r]!.at(-1)!;
      stepPos[i] = pos(r);
      bias.fill(0, i * cap, i * cap + pos(r));
    }
    const feeds: Record<string, Feed> = {
      ...this.params,
      ids: { data: stepIds, dims: [B, 1] },
      positions: { data: stepPos, dims: [B, 1] },
      cache_bias: { data: bias, dims: [B, 1, 1, cap] },
    };
    for (let l = 0; l < L; l++) {
      feeds[`cache_k${l}`] = { data: this.cacheK[l]!, dims: [B, H, cap, dh] };
      feeds[`cache_v${l}`] = { data: this.cacheV[l]!, dims: [B, H, cap, dh] };
    }
    const res = await this.sessions.decode.run(feeds);
    for (let l = 0; l < L; l++) {
      const k = res[`k${l}`]!.data as Float32Array;
      const v = res[`v${l}`]!.data as Float32Array;
      const ck = this.cacheK[l]!;
      const cv = this.cacheV[l]!;
      for (const r of active) {
        const i = slotOf[r]!;
        const p = pos(r);
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
    const V = this.init.arch.vocab;
    return { logits: res.logits!.data as Float32Array, vocab: V, offset: (r) => slotOf[r]! * V };
  }

  /** The end token and stop strings end a row; so does a full context. */
  check(r: number, tokens: readonly number[]): RowCheck {
    const token = tokens.at(-1)!;
    if (token === END) return 'stop';
    const stop = this.job.rows[r]!.stop;
    if (stop.length) {
      this.text[r] += this.init.vocab[token] ?? '';
      if (stopAt(this.text[r]!, stop) >= 0) return 'stop';
    }
    return this.len[r]! + tokens.length - 1 >= this.S ? 'full' : undefined;
  }

  /** Hand the cache buffers back to the pool for the next job. */
  release(): void {
    this.pool.keep([...this.cacheK, ...this.cacheV], 4 * this.L);
    this.cacheK = [];
    this.cacheV = [];
  }
}
