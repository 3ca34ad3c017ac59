// The optimizer as graph operations, so that it can be fused into the training step: global
// gradient-norm clipping and AdamW (Loshchilov & Hutter; PyTorch's AdamW update order). Schedule-
// dependent scalars are graph inputs computed on the host each step (see adamwScalars).
import type { Graph, Tensor } from './graph';

/** AdamW hyperparameters baked into the graph. */
export interface AdamWOptions {
  /** β₁: decay of the first-moment average. */
  readonly beta1: number;
  /** β₂: decay of the second-moment average. */
  readonly beta2: number;
  /** ε added to the root of the second moment. */
  readonly eps: number;
}

/** Per-step scalars of AdamW, fed as graph inputs. */
export interface AdamWScalars {
  /** lr / (1 − β₁ᵗ): the bias-corrected step size. */
  readonly stepSize: number;
  /** 1 / √(1 − β₂ᵗ): the second moment's bias correction under the root. */
  readonly invSqrtBias2: number;
  /** 1 − lr·λ: decoupled weight decay of decayed parameters. */
  readonly decay: number;
}

/** The scalars for optimizer step t (1-based) at learning rate lr and weight decay λ. */
export function adamwScalars(t: number, lr: number, weightDecay: number, o: AdamWOptions): AdamWScalars {
  return {
    stepSize: lr / (1 - o.beta1 ** t),
    invSqrtBias2: 1 / Math.sqrt(1 - o.beta2 ** t),
    decay: 1 - lr * weightDecay,
  };
}

/** The scalar inputs an AdamW update graph reads. */
export interface AdamWInputs {
  readonly stepSize: Tensor;
  readonly invSqrtBias2: Tensor;
  readonly decay: Tensor;
}

/** Declare the scalar inputs (named `adam_step_size`, `adam_inv_sqrt_bias2`, `adam_decay`). */
export function adamwInputs(g: Graph): AdamWInputs {
  return {
    stepSize: g.input('adam_step_size', 'float32', []),
    invSqrtBias2: g.input('adam_inv_sqrt_bias2', 'float32', []),
    decay: g.input('adam_decay', 'float32', []),
  };
}

/** ‖(g₁, …, gₙ)‖₂ over all gradients. */
export function globalNorm(g: Graph, grads: readonly Tensor[]): Tensor {
  return g.sqrt(g.sum(grads.map((d) => g.sumAll(g.mul(d, d)))));
}

/**
 * Scale the gradients by min(1, maxNorm / (‖g‖ + 1e-6)) (clipping by global norm, as
 * torch.nn.utils.clip_grad_norm_). Returns the clipped gradients and the norm before clipping.
 * `maxNorm` ≤ 0 disables clipping (the norm is still computed, for logging).
 */
export function clipByGlobalNorm(
  g: Graph,
  grads: readonly Tensor[],
  maxNorm: number,
): { grads: Tensor[]; norm: Tensor } {
  const norm = globalNorm(g, grads);
  if (!(maxNorm > 0)) return { grads: [...grads], norm };
  const factor = g.min(g.scalar(1), g.div(g.scalar(maxNorm), g.shift(norm, 1e-6)));
  return { grads: grads.map((d) => g.mul(d, factor)), norm };
}

/** What AdamW updates, one entry per parameter: its value, gradient, moments and whether it decays. */
export interface AdamWState {
  readonly params: readonly Tensor[];
  readonly grads: readonly Tensor[];
  /** First moments. */
  readonly m: readonly Tensor[];
  /** Second moments. */
  readonly v: readonly Tensor[];
  /** Weight decay applies to parameter i where `decayed[i]`. */
  readonly decayed: readonly boolean[];
}

/**
 * One AdamW step for every parameter: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g²,
 * p ← p·(1 − lr·λ) − (lr / (1−β₁ᵗ)) · m / (√v / √(1−β₂ᵗ) + ε). Weight decay applies where `decayed[i]`.
 */
export function adamwUpdate(
  g: Graph,
  { params, grads, m, v, decayed }: AdamWState,
  s: AdamWInputs,
  o: AdamWOptions,
): { params: Tensor[]; m: Tensor[]; v: Tensor[] } {
  const out = { params: [] as Tensor[], m: [] as Tensor[], v: [] as Tensor[] };
  params.forEach((p, i) => {
    const d = grads[i]!;
    const m1 = g.add(g.scale(m[i]!, o.beta1), g.scale(d, 1 - o.beta1));
    const v1 = g.add(g.scale(v[i]!, o.beta2), g.scale(g.mul(d, d), 1 - o.beta2));
    const denom = g.shift(g.mul(g.sqrt(v1), s.invSqrtBias2), o.eps);
    const step = g.mul(g.div(m1, denom), s.stepSize);
    const base = decayed[i] ? g.mul(p, s.decay) : p;
    out.params.push(g.sub(base, step));
    out.m.push(m1);
    out.v.push(v1);
  });
  return out;
}

/** Learning-rate schedule. */
export interface Schedule {
  readonly type: 'constant' | 'cosine';
  /** Warmup steps (linear from lr/warmup to lr); overrides warmupRatio when > 0. */
  readonly warmupSteps: number;
  /** Warmup as a fraction of the total steps. */
  readonly warmupRatio: number;
  /** Cosine floor as a fraction of the peak rate. */
  readonly minRatio: number;
}

/**
 * Learning rate of the update after `step` completed ones, of `total`: linear warmup over the first w steps
 * (lr·(step+1)/w), then constant, or cosine from lr down to lr·minRatio at the last step.
 */
export function learningRate(lr: number, step: number, total: number, s: Schedule): number {
  const w = s.warmupSteps > 0 ? s.warmupSteps : Math.floor(s.warmupRatio * total);
  if (w > 0 && step < w) return (lr * (step + 1)) / w;
  if (s.type === 'constant') return lr;
  const span = Math.max(total - w - 1, 1);
  const progress = Math.min(Math.max((step - w) / span, 0), 1);
  return lr * (s.minRatio + (1 - s.minRatio) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}
