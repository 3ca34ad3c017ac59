// The objectives compiled into the training graph. The GRPO term is core/grpo/loss.ts's formula
// (docs/algorithms/grpo.md (5)–(9)) written as graph operations; the aggregation is carried by
// per-token weights computed on the host with core/grpo's aggregationWeights, so that every loss
// type is the same graph: loss = Σ_t w_t ℓ_t.
import type { Graph, Tensor } from '../../../core/tensor';

/** log πθ(target_t | prefix) at temperature T: log-softmax of logits/T gathered at the targets. [B, T] */
export function tokenLogprobs(g: Graph, logits: Tensor, targets: Tensor, invTemperature: Tensor): Tensor {
  const lsm = g.logSoftmax(g.mul(logits, invTemperature), -1);
  return g.squeeze(g.gatherElements(lsm, g.unsqueeze(targets, [2]), 2), [2]);
}

/** Inputs of the GRPO objective beside log πθ. */
export interface GrpoTerms {
  /** log πold of each token [B, T]. */
  readonly old: Tensor;
  /** Â per sequence [B, 1]. */
  readonly advantages: Tensor;
  /** Aggregation weight w_t per token [B, T] (0 where there is no completion token). */
  readonly weights: Tensor;
  /** 1 − ε_low (scalar). */
  readonly ratioLow: Tensor;
  /** 1 + ε_high (scalar). */
  readonly ratioHigh: Tensor;
  /** log πref [B, T], with `beta`, for the k3 KL penalty. */
  readonly ref?: Tensor;
  readonly beta?: Tensor;
}

/**
 * Σ w_t · (−min(ρÂ, clip(ρ, 1−ε_low, 1+ε_high)Â) + β·(exp(ref − logp) − (ref − logp) − 1)).
 * The unclipped branch is min's first operand, so it carries the gradient on ties, as in core/grpo.
 */
export function grpoObjective(g: Graph, lp: Tensor, t: GrpoTerms): Tensor {
  const rho = g.exp(g.sub(lp, t.old));
  const unclipped = g.mul(rho, t.advantages);
  const clipped = g.mul(g.clip(rho, t.ratioLow, t.ratioHigh), t.advantages);
  let perToken = g.neg(g.min(unclipped, clipped));
  if (t.ref && t.beta) {
    const d = g.sub(t.ref, lp);
    const kl = g.sub(g.sub(g.exp(d), d), g.scalar(1));
    perToken = g.add(perToken, g.mul(kl, t.beta));
  }
  return g.sumAll(g.mul(perToken, t.weights));
}

/** SFT cross-entropy −Σ w_t log πθ(target_t) (w = 1/number of trained tokens). */
export function crossEntropy(g: Graph, lp: Tensor, weights: Tensor): Tensor {
  return g.neg(g.sumAll(g.mul(lp, weights)));
}
