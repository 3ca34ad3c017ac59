// Host-side token choice for one row of logits: temperature, nucleus (top-p) truncation, greedy
// decoding, and the per-token statistics intrinsic rewards need. Log-probabilities are those of the
// tempered distribution softmax(logits / T) over the whole vocabulary (before top-p truncation), the
// quantity the training graph recomputes at the same temperature. Greedy (T = 0): the argmax token
// and its log-probability at T = 1.
import type { Rng } from '../../../core/util/rng';

/** The chosen token and its statistics. */
export interface Choice {
  readonly token: number;
  /** log softmax(logits / T)[token]. */
  readonly logprob: number;
  /** Entropy of softmax(logits / T) in nats. */
  readonly entropy: number;
  /** Mean over the vocabulary of log softmax(logits / T). */
  readonly meanLogprob: number;
}

/** How a row's tokens are chosen: the same for every token of the row. */
export interface TokenRule {
  /** Softmax temperature; 0 or less: greedy. */
  readonly temperature: number;
  /** Nucleus mass in (0, 1]; 1: the whole vocabulary. */
  readonly topP: number;
  readonly rng: Rng;
  /** Whether to compute the entropy and mean log-probability (else NaN). */
  readonly stats: boolean;
}

/**
 * Choose the next token from `logits[offset .. offset + V)` by `rule`. `scratch` needs 2V entries.
 * A `banned` token id is never chosen (minimum lengths); log-probabilities and statistics stay those
 * of the full distribution.
 */
export function chooseToken(
  logits: Float32Array,
  offset: number,
  V: number,
  rule: TokenRule,
  scratch: Float64Array,
  banned = -1,
): Choice {
  const { temperature, topP, rng, stats } = rule;
  const T = temperature > 0 ? temperature : 1;
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[offset + v]! / T);
  let z = 0;
  for (let v = 0; v < V; v++) {
    const e = Math.exp(logits[offset + v]! / T - max);
    scratch[v] = e;
    z += e;
  }
  const logZ = Math.log(z) + max;
  if (banned >= 0) {
    // The banned token is removed from the choice (its log-probability mass stays in logZ).
    z -= scratch[banned]!;
    scratch[banned] = 0;
  }
  let token = banned === 0 ? 1 : 0;
  if (temperature <= 0) {
    let best = -Infinity;
    for (let v = 0; v < V; v++)
      if (v !== banned && logits[offset + v]! > best) {
        best = logits[offset + v]!;
        token = v;
      }
  } else if (topP >= 1) {
    let u = rng.next() * z;
    token = V - 1;
    for (let v = 0; v < V; v++) {
      u -= scratch[v]!;
      if (u < 0) {
        token = v;
        break;
      }
    }
  } else {
    // Nucleus: the smallest set of most likely tokens whose mass reaches topP (ties by id).
    const order = Array.from({ length: V }, (_, v) => v).sort((a, b) => scratch[b]! - scratch[a]! || a - b);
    let mass = 0;
    let k = 0;
    while (k < V) {
      mass += scratch[order[k]!]!;
      k++;
      if (mass >= topP * z) break;
    }
    let u = rng.next() * mass;
    token = order[k - 1]!;
    for (let i = 0; i < k; i++) {
      u -= scratch[order[i]!]!;
      if (u < 0) {
        token = order[i]!;
        break;
      }
    }
  }
  const logprob = logits[offset + token]! / T - logZ;
  if (!stats) return { token, logprob, entropy: NaN, meanLogprob: NaN };
  let entropy = 0;
  let sumLog = 0;
  for (let v = 0; v < V; v++) {
    const lp = logits[offset + v]! / T - logZ;
    entropy -= Math.exp(lp) * lp;
    sumLog += lp;
  }
  return { token, logprob, entropy, meanLogprob: sumLog / V };
}
