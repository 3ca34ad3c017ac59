// Turning sequences into padded training batches (host side). A sequence is the end token, the
// prompt's tokens and the completion's tokens; the model reads all but the last token and predicts
// each next one. Rows are grouped by length so that micro-batches carry little padding.
import type { TokenBatch } from './engine';
import { END } from './tokenizer';

/** One training sequence. */
export interface Sequence {
  /** All tokens: end token, prompt, completion. */
  readonly ids: readonly number[];
  /** Tokens before the first trained one (the end token and the prompt). */
  readonly promptLength: number;
  /** Aggregation weight of each trained token. */
  readonly weight: number;
  /** log πold of each trained token (GRPO). */
  readonly old?: readonly number[];
  /** Â of the sequence (GRPO). */
  readonly advantage?: number;
}

/** A micro-batch: the padded tensors and which sequences (by index) fill its rows. */
export interface MicroBatch {
  readonly batch: TokenBatch;
  readonly members: readonly number[];
}

/** Pad `seqs[members]` into one batch. */
export function makeBatch(seqs: readonly Sequence[], members: readonly number[], grpo: boolean): MicroBatch {
  const rows = members.length;
  const T = Math.max(1, ...members.map((i) => seqs[i]!.ids.length - 1));
  const ids = new Int32Array(rows * T).fill(END);
  const targets = new Int32Array(rows * T).fill(END);
  const weights = new Float32Array(rows * T);
  const old = grpo ? new Float32Array(rows * T) : undefined;
  const advantages = grpo ? new Float32Array(rows) : undefined;
  members.forEach((si, r) => {
    const s = seqs[si]!;
    const n = s.ids.length - 1;
    for (let p = 0; p < n; p++) {
      ids[r * T + p] = s.ids[p]!;
      targets[r * T + p] = s.ids[p + 1]!;
      const j = p + 1 - s.promptLength; // index of the predicted token among the trained ones
      if (j >= 0) {
        weights[r * T + p] = s.weight;
        if (old) old[r * T + p] = s.old![j]!;
      }
    }
    if (advantages) advantages[r] = s.advantage!;
  });
  return { batch: { rows, T, ids, targets, weights, ...(old ? { old, advantages } : {}) }, members };
}

/**
 * Split sequences into micro-batches of at most `maxTokens` padded tokens (at least one row each),
 * rows sorted by length (stable) so that similar lengths share a batch.
 */
export function microBatches(seqs: readonly Sequence[], maxTokens: number, grpo: boolean): MicroBatch[] {
  const order = seqs.map((_, i) => i).sort((a, b) => seqs[a]!.ids.length - seqs[b]!.ids.length || a - b);
  const out: MicroBatch[] = [];
  let cur: number[] = [];
  let width = 0;
  for (const i of order) {
    const w = Math.max(width, seqs[i]!.ids.length - 1);
    if (cur.length > 0 && w * (cur.length + 1) > maxTokens) {
      out.push(makeBatch(seqs, cur, grpo));
      cur = [];
    }
    width = cur.length === 0 ? seqs[i]!.ids.length - 1 : w;
    cur.push(i);
  }
  if (cur.length) out.push(makeBatch(seqs, cur, grpo));
  return out;
}

/** The log-probabilities of each sequence's trained tokens, read back from the batches' [rows, T] outputs. */
export function trainedLogprobs(
  seqs: readonly Sequence[],
  micro: readonly MicroBatch[],
  values: readonly Float32Array[],
): number[][] {
  const out: number[][] = seqs.map(() => []);
  micro.forEach((mb, k) => {
    const T = mb.batch.T;
    const v = values[k]!;
    mb.members.forEach((si, r) => {
      const s = seqs[si]!;
      const lp: number[] = [];
      for (let p = s.promptLength - 1; p < s.ids.length - 1; p++) lp.push(v[r * T + p]!);
      out[si] = lp;
    });
  });
  return out;
}
