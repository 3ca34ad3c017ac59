// The clipped GRPO surrogate, the k3 KL penalty and the four aggregations.
// Equations: docs/algorithms/grpo.md (5)–(10).
import type { LossType } from '../contracts/policy';
import { CorlError } from '../errors';
import { assertAllFinite, assertFinite } from './check';

/** Hyperparameters of the per-token loss. */
export interface ClipOptions {
  /** ε_low: the ratio is clipped below at 1 − ε_low. */
  clipLow: number;
  /** ε_high: the ratio is clipped above at 1 + ε_high (DAPO's clip-higher uses a larger value). */
  clipHigh: number;
  /** β: weight of the k3 KL penalty; 0 disables it. */
  beta: number;
}

/** ρ = exp(logπθ − logπold) (eq. 5). */
export function ratio(logp: number, oldLogp: number): number {
  return Math.exp(logp - oldLogp);
}

/** clip(ρ, 1 − ε_low, 1 + ε_high) (eq. 6). */
export function clippedRatio(rho: number, clipLow: number, clipHigh: number): number {
  return Math.min(Math.max(rho, 1 - clipLow), 1 + clipHigh);
}

/** k3 estimator of KL(πθ‖πref): exp(ref − logp) − (ref − logp) − 1 ≥ 0 (eq. 8). */
export function klPenalty(logp: number, refLogp: number): number {
  const d = refLogp - logp;
  return Math.exp(d) - d - 1;
}

/** Per-token policy-gradient loss −min(ρÂ, clip(ρ)Â) (eq. 7). */
export function clippedSurrogate(logp: number, oldLogp: number, advantage: number, o: ClipOptions): number {
  const rho = ratio(logp, oldLogp);
  return -Math.min(rho * advantage, clippedRatio(rho, o.clipLow, o.clipHigh) * advantage);
}

/** Whether the clip is active for this token (the clipped branch is the minimum and differs from ρÂ). */
export function isClipped(logp: number, oldLogp: number, advantage: number, o: ClipOptions): boolean {
  const rho = ratio(logp, oldLogp);
  return (advantage > 0 && rho > 1 + o.clipHigh) || (advantage < 0 && rho < 1 - o.clipLow);
}

/** Inputs of {@link grpoLoss}: one entry per sequence, per-token arrays of equal length within a sequence. */
export interface LossInputs {
  /** log πθ of each generated token, per sequence. */
  logprobs: readonly (readonly number[])[];
  /** log πold (sampling time), same shape. */
  oldLogprobs: readonly (readonly number[])[];
  /** log πref (frozen reference), same shape; required when β > 0. */
  refLogprobs?: readonly (readonly number[])[];
  /** One advantage per sequence. */
  advantages: readonly number[];
}

/** Options of {@link grpoLoss}. */
export interface LossAggregation extends ClipOptions {
  /** Aggregation (eq. 9). */
  type: LossType;
  /** L_max of dr_grpo: the maximum completion length of the run. */
  maxCompletionLength: number;
  /** dapo only: the token count of the whole accumulated batch, when this call sees one micro-batch of it. Defaults to this batch's tokens. */
  globalTokens?: number;
  /**
   * bnpo only: sequences per micro-batch, as TRL accumulates them (0 or absent: the whole batch is
   * one micro-batch). Each micro-batch's token sum is divided by its own token count and the
   * micro-batches are averaged (eq. 9b).
   */
  microBatch?: number;
}

/** The loss and the statistics a trainer logs. */
export interface LossResult {
  /** The aggregated objective (policy term + β·KL term). */
  loss: number;
  /** The aggregated policy term alone. */
  policyLoss: number;
  /** Mean k3 KL per token (0 when β = 0 and no reference is given). */
  kl: number;
  /** Fraction of tokens whose clip is active. */
  clipFraction: number;
  /** Mean ratio ρ over tokens. */
  meanRatio: number;
  /** Number of tokens. */
  tokens: number;
  /**
   * ∂loss/∂logπθ for every token (same shape as `logprobs`): what backpropagates into the model.
   * The tensor engine's fused step graph is tested against these numbers.
   */
  gradLogprobs: number[][];
}

/**
 * Per-token weights w_t of the aggregation: loss = Σ_seq Σ_t w_{seq} · ℓ_t (eq. 9).
 * grpo: 1/(B·L_i); bnpo: 1/ΣL, or with micro-batches of m sequences 1/(M·T_mb) for a sequence of
 * micro-batch mb (M micro-batches, T_mb its tokens; eq. 9b); dr_grpo: 1/(B·L_max); dapo: 1/(global token count).
 */
export function aggregationWeights(
  lengths: readonly number[],
  type: LossType,
  maxCompletionLength: number,
  globalTokens?: number,
  microBatch?: number,
): number[] {
  const B = lengths.length;
  const total = lengths.reduce((a, b) => a + b, 0);
  switch (type) {
    case 'grpo':
      return lengths.map((L) => 1 / (B * Math.max(L, 1)));
    case 'bnpo':
      if (microBatch && microBatch > 0 && microBatch < B) {
        const m = microBatch;
        const M = Math.ceil(B / m);
        return lengths.map((_, i) => {
          const from = Math.floor(i / m) * m;
          const tokens = lengths.slice(from, from + m).reduce((a, b) => a + b, 0);
          return 1 / (M * Math.max(tokens, 1));
        });
      }
      return lengths.map(() => 1 / Math.max(total, 1));
    case 'dr_grpo':
      return lengths.map(() => 1 / (B * Math.max(maxCompletionLength, 1)));
    case 'dapo':
      return lengths.map(() => 1 / Math.max(globalTokens ?? total, 1));
  }
}

/**
 * The GRPO objective over a batch of sequences: ℓ_t = −min(ρÂ, clip(ρ)Â) + β·KL_k3, aggregated by
 * `type`, with its gradient with respect to every token's logπθ. Non-finite inputs throw (NaN policy).
 */
export function grpoLoss(inputs: LossInputs, o: LossAggregation): LossResult {
  const { logprobs, oldLogprobs, refLogprobs, advantages } = inputs;
  const B = logprobs.length;
  if (oldLogprobs.length !== B || advantages.length !== B || (refLogprobs && refLogprobs.length !== B)) {
    throw new CorlError(
      'CORL_ERR_GRPO_SHAPE',
      `expected ${B} sequences in every input, got old ${oldLogprobs.length}, advantages ${advantages.length}${refLogprobs ? `, ref ${refLogprobs.length}` : ''}`,
    );
  }
  if (o.beta > 0 && !refLogprobs) {
    throw new CorlError(
      'CORL_ERR_GRPO_SHAPE',
      `expected reference log-probabilities because beta = ${o.beta} > 0, got none`,
    );
  }
  const lengths = logprobs.map((l) => l.length);
  const weights = aggregationWeights(lengths, o.type, o.maxCompletionLength, o.globalTokens, o.microBatch);
  let loss = 0;
  let policyLoss = 0;
  let klSum = 0;
  let clipped = 0;
  let ratioSum = 0;
  let tokens = 0;
  const grad: number[][] = [];
  for (let i = 0; i < B; i++) {
    const lp = logprobs[i]!;
    const old = oldLogprobs[i]!;
    const ref = refLogprobs?.[i];
    const A = advantages[i]!;
    assertFinite(A, `advantage (sequence ${i})`);
    if (old.length !== lp.length || (ref && ref.length !== lp.length)) {
      throw new CorlError(
        'CORL_ERR_GRPO_SHAPE',
        `expected ${lp.length} tokens in every array of sequence ${i}, got old ${old.length}${ref ? `, ref ${ref.length}` : ''}`,
      );
    }
    assertAllFinite(lp, (t) => `log-probability (sequence ${i}, token ${t})`);
    assertAllFinite(old, (t) => `old log-probability (sequence ${i}, token ${t})`);
    if (ref) assertAllFinite(ref, (t) => `reference log-probability (sequence ${i}, token ${t})`);
    const w = weights[i]!;
    const g: number[] = new Array(lp.length);
    for (let t = 0; t < lp.length; t++) {
      const rho = ratio(lp[t]!, old[t]!);
      const unclipped = rho * A;
      const clippedTerm = clippedRatio(rho, o.clipLow, o.clipHigh) * A;
      const pg = -Math.min(unclipped, clippedTerm);
      // The unclipped branch carries the gradient whenever it is the minimum (ties included).
      let dl = unclipped <= clippedTerm ? -unclipped : 0;
      let kl = 0;
      if (ref) {
        kl = klPenalty(lp[t]!, ref[t]!);
        klSum += kl;
        if (o.beta > 0) dl += o.beta * (1 - Math.exp(ref[t]! - lp[t]!));
      }
      const lt = pg + (o.beta > 0 ? o.beta * kl : 0);
      loss += w * lt;
      policyLoss += w * pg;
      g[t] = w * dl;
      if (isClipped(lp[t]!, old[t]!, A, o)) clipped++;
      ratioSum += rho;
      tokens++;
    }
    grad.push(g);
  }
  const n = Math.max(tokens, 1);
  return {
    loss,
    policyLoss,
    kl: klSum / n,
    clipFraction: clipped / n,
    meanRatio: tokens ? ratioSum / n : 1,
    tokens,
    gradLogprobs: grad,
  };
}
